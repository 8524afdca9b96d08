#include "tools/serve_kserve_rest.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "platform/status_macros.h"
#include "tools/serve_json_tensor.h"

namespace scopeflow {
namespace {

std::string Names(const std::vector<TensorInfo>& infos) {
  std::vector<std::string> names;
  for (const TensorInfo& info : infos) names.push_back(info.name);
  return absl::StrJoin(names, ", ");
}

// The index of the tensor named `name` in `infos`; InvalidArgument naming
// `what` ("input", "output") otherwise.
absl::StatusOr<size_t> IndexOf(const std::string& name,
                               const std::vector<TensorInfo>& infos,
                               const char* what) {
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].name == name) return i;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", what, " \"", name,
                                                 "\" (the model's ", what,
                                                 "s: ", Names(infos), ")"));
}

// parameters.KEY of `object` if it is there, else null.
const Json* Parameter(const Json& object, const char* key) {
  const auto parameters = object.find("parameters");
  if (parameters == object.end() || !parameters->is_object()) return nullptr;
  const auto it = parameters->find(key);
  return it == parameters->end() ? nullptr : &*it;
}

absl::StatusOr<std::string> StringField(const Json& object, const char* key,
                                        const std::string& what) {
  const auto it = object.find(key);
  SF_CHECK(it != object.end(), "%s has no \"%s\"", what, key);
  SF_CHECK(it->is_string(), "%s: \"%s\" is %s; expected a string", what, key,
           JsonKind(*it));
  return it->get<std::string>();
}

absl::StatusOr<Dims> ShapeField(const Json& input, const std::string& name) {
  const auto it = input.find("shape");
  SF_CHECK(it != input.end() && it->is_array(),
           "input \"%s\" has no \"shape\" array", name);
  Dims dims;
  for (const Json& dim : *it) {
    SF_CHECK(dim.is_number_integer() && dim.get<int64_t>() >= 0,
             "input \"%s\": the shape holds %s; expected non-negative "
             "integers",
             name, dim.dump(-1, ' ', false, Json::error_handler_t::replace));
    dims.push_back(dim.get<int64_t>());
  }
  return dims;
}

absl::StatusOr<Tensor> BinaryInput(const std::string& name, DataType dtype,
                                   const Dims& dims, const Json& size,
                                   absl::string_view& binary) {
  SF_CHECK(size.is_number_unsigned(),
           "input \"%s\": binary_data_size is %s; expected a byte count", name,
           JsonKind(size));
  const uint64_t bytes = size.get<uint64_t>();
  SF_CHECK(bytes <= binary.size(),
           "input \"%s\": binary_data_size %d is beyond the %d bytes of "
           "binary data left in the body",
           name, bytes, binary.size());
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, dims));
  SF_CHECK(bytes == tensor.nbytes(),
           "input \"%s\": binary_data_size is %d bytes; %s %s needs %d", name,
           bytes, KServeDataTypeName(dtype), DimsToString(dims),
           tensor.nbytes());
  std::memcpy(tensor.raw_data(), binary.data(), bytes);
  binary.remove_prefix(bytes);
  return tensor;
}

bool IsTrue(const Json* value) {
  return value != nullptr && value->is_boolean() && value->get<bool>();
}

}  // namespace

const char* KServeDataTypeName(DataType dtype) {
  switch (dtype) {
    case kBool:
      return "BOOL";
    case kUInt8:
      return "UINT8";
    case kInt8:
      return "INT8";
    case kInt32:
      return "INT32";
    case kInt64:
      return "INT64";
    case kFloat16:
      return "FP16";
    case kFloat32:
      return "FP32";
    case kFloat64:
      return "FP64";
    default:
      return "";
  }
}

absl::StatusOr<DataType> ParseKServeDataType(absl::string_view name,
                                             absl::string_view what) {
  for (DataType dtype :
       {kBool, kUInt8, kInt8, kInt32, kInt64, kFloat16, kFloat32, kFloat64}) {
    if (name == KServeDataTypeName(dtype)) return dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, " has datatype \"", name,
      "\", which scopeflow lacks (it has BOOL, UINT8, INT8, INT32, INT64, "
      "FP16, FP32, FP64)"));
}

absl::StatusOr<KServeInferRequest> ParseKServeInfer(
    absl::string_view body, std::optional<size_t> header_length,
    const std::vector<TensorInfo>& inputs,
    const std::vector<TensorInfo>& outputs) {
  absl::string_view json = body;
  absl::string_view binary;
  if (header_length.has_value()) {
    SF_CHECK(*header_length <= body.size(),
             "%s is %d, beyond the body's %d bytes", kInferenceHeaderLength,
             *header_length, body.size());
    json = body.substr(0, *header_length);
    binary = body.substr(*header_length);
  }
  SF_ASSIGN_OR_RETURN(const Json doc, ParseJsonBody(json));
  SF_CHECK(doc.is_object(),
           "the body is %s; expected {\"inputs\": [{\"name\", \"shape\", "
           "\"datatype\", \"data\"}]}",
           JsonKind(doc));
  KServeInferRequest request;
  if (const auto id = doc.find("id"); id != doc.end()) {
    SF_CHECK(id->is_string(), "\"id\" is %s; expected a string", JsonKind(*id));
    request.id = id->get<std::string>();
  }
  const auto list = doc.find("inputs");
  SF_CHECK(list != doc.end() && list->is_array(),
           "the body has no \"inputs\" array");
  std::vector<bool> given(inputs.size(), false);
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& input = (*list)[i];
    SF_CHECK(input.is_object(), "input %d is %s; expected an object", i,
             JsonKind(input));
    SF_ASSIGN_OR_RETURN(const std::string name,
                        StringField(input, "name", absl::StrCat("input ", i)));
    SF_ASSIGN_OR_RETURN(const size_t index, IndexOf(name, inputs, "input"));
    SF_CHECK(!given[index], "input \"%s\" is given twice", name);
    given[index] = true;
    const std::string what = absl::StrCat("input \"", name, "\"");
    SF_ASSIGN_OR_RETURN(const std::string datatype,
                        StringField(input, "datatype", what));
    SF_ASSIGN_OR_RETURN(const DataType dtype,
                        ParseKServeDataType(datatype, what));
    SF_CHECK(dtype == inputs[index].dtype,
             "input \"%s\" has datatype %s; the model takes %s", name, datatype,
             KServeDataTypeName(inputs[index].dtype));
    SF_ASSIGN_OR_RETURN(const Dims dims, ShapeField(input, name));
    Tensor tensor;
    if (const Json* size = Parameter(input, "binary_data_size")) {
      SF_CHECK(!input.contains("data"),
               "input \"%s\" has both \"data\" and binary_data_size", name);
      SF_ASSIGN_OR_RETURN(tensor,
                          BinaryInput(name, dtype, dims, *size, binary));
    } else {
      const auto data = input.find("data");
      SF_CHECK(data != input.end(), "input \"%s\" has no \"data\"", name);
      SF_ASSIGN_OR_RETURN(tensor, TensorFromFlatJson(name, *data, dtype, dims));
    }
    request.feeds.push_back({name, std::move(tensor)});
  }
  SF_CHECK(binary.empty(),
           "%d bytes of binary data after the JSON are not claimed by any "
           "input's binary_data_size",
           binary.size());
  const bool all_binary = IsTrue(Parameter(doc, "binary_data_output"));
  const auto asked = doc.find("outputs");
  if (asked == doc.end()) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      request.outputs.push_back(i);
      request.binary.push_back(all_binary);
    }
    return request;
  }
  SF_CHECK(asked->is_array(), "\"outputs\" is %s; expected an array",
           JsonKind(*asked));
  for (size_t i = 0; i < asked->size(); ++i) {
    const Json& output = (*asked)[i];
    SF_CHECK(output.is_object(), "output %d is %s; expected an object", i,
             JsonKind(output));
    SF_ASSIGN_OR_RETURN(
        const std::string name,
        StringField(output, "name", absl::StrCat("requested output ", i)));
    SF_ASSIGN_OR_RETURN(const size_t index, IndexOf(name, outputs, "output"));
    const Json* binary_data = Parameter(output, "binary_data");
    request.outputs.push_back(index);
    request.binary.push_back(binary_data != nullptr ? IsTrue(binary_data)
                                                    : all_binary);
  }
  return request;
}

HttpReply KServeInferReply(const std::string& name, int64_t version,
                           const std::vector<TensorInfo>& outputs,
                           const KServeInferRequest& request,
                           const std::vector<Tensor>& tensors) {
  std::string out = "{\"model_name\":";
  AppendJsonString(out, name);
  absl::StrAppend(&out, ",\"model_version\":\"", version, "\"");
  if (!request.id.empty()) {
    out += ",\"id\":";
    AppendJsonString(out, request.id);
  }
  out += ",\"outputs\":[";
  std::string binary;
  for (size_t k = 0; k < request.outputs.size(); ++k) {
    const size_t i = request.outputs[k];
    const Tensor& tensor = tensors[i];
    if (k > 0) out += ',';
    out += "{\"name\":";
    AppendJsonString(out, outputs[i].name);
    absl::StrAppend(&out, ",\"datatype\":\"",
                    KServeDataTypeName(tensor.dtype()), "\",\"shape\":[",
                    absl::StrJoin(tensor.dims(), ","), "]");
    if (request.binary[k]) {
      absl::StrAppend(
          &out, ",\"parameters\":{\"binary_data_size\":", tensor.nbytes(), "}");
      binary.append(static_cast<const char*>(tensor.raw_data()),
                    tensor.nbytes());
    } else {
      out += ",\"data\":";
      AppendFlatJson(out, tensor);
    }
    out += '}';
  }
  out += "]}";
  HttpReply reply;
  const bool any_binary =
      std::find(request.binary.begin(), request.binary.end(), true) !=
      request.binary.end();
  if (any_binary) {
    reply.content_type = "application/octet-stream";
    reply.headers.emplace_back(kInferenceHeaderLength,
                               absl::StrCat(out.size()));
    out += binary;
  }
  reply.body = std::move(out);
  return reply;
}

std::string KServeModelMetadataJson(const ServedModel& model,
                                    const std::vector<int64_t>& versions) {
  auto tensors = [](const std::vector<TensorInfo>& infos) {
    Json list = Json::array();
    for (const TensorInfo& info : infos) {
      // KServe has no unknown rank: such a tensor shows as one dimension of
      // any size.
      Json shape =
          info.has_dims
              ? Json(std::vector<int64_t>(info.dims.begin(), info.dims.end()))
              : Json(std::vector<int64_t>{-1});
      list.push_back(Json{{"name", info.name},
                          {"datatype", KServeDataTypeName(info.dtype)},
                          {"shape", std::move(shape)}});
    }
    return list;
  };
  Json names = Json::array();
  for (int64_t version : versions) names.push_back(absl::StrCat(version));
  return Json{{"name", model.name},
              {"versions", std::move(names)},
              {"platform", "scopeflow"},
              {"inputs", tensors(model.predictor.inputs())},
              {"outputs", tensors(model.predictor.outputs())}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string KServeServerMetadataJson() {
  return Json{{"name", "scopeflow"},
              {"version", "1"},
              {"extensions", Json::array({"binary_tensor_data"})}}
      .dump();
}

}  // namespace scopeflow
