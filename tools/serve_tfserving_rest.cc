#include "tools/serve_tfserving_rest.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "platform/status_macros.h"
#include "proto/tfserving/apis.pb.h"
#include "tools/serve_json_tensor.h"
#include "tools/serve_tf_tensor.h"

namespace scopeflow {
namespace {

std::string InputNames(const std::vector<TensorInfo>& inputs) {
  std::vector<std::string> names;
  for (const TensorInfo& input : inputs) names.push_back(input.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<const TensorInfo*> FindInput(
    const std::string& name, const std::vector<TensorInfo>& inputs) {
  for (const TensorInfo& input : inputs) {
    if (input.name == name) return &input;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown input \"", name,
                   "\" (the model's inputs: ", InputNames(inputs), ")"));
}

// "instances": each instance's rows gathered per input, then each input
// read as one tensor of one row per instance.
absl::StatusOr<std::vector<Feed>> ParseRows(
    const Json& instances, const std::vector<TensorInfo>& inputs) {
  SF_CHECK(instances.is_array() && !instances.empty(),
           "\"instances\" is %s; expected a non-empty array of instances",
           instances.is_array() ? "an empty array" : JsonKind(instances));
  std::vector<Json> columns(inputs.size(), Json::array());
  for (size_t i = 0; i < instances.size(); ++i) {
    const Json& instance = instances[i];
    const bool named =
        instance.is_object() &&
        (inputs.size() != 1 || instance.contains(inputs[0].name));
    if (!named) {
      SF_CHECK(inputs.size() == 1,
               "instance %d is %s; the model has %d inputs (%s), so each "
               "instance is an object naming them",
               i, JsonKind(instance), inputs.size(), InputNames(inputs));
      SF_CHECK(!instance.is_object(),
               "instance %d is an object without the input \"%s\"", i,
               inputs[0].name);
      columns[0].push_back(instance);
      continue;
    }
    for (const auto& [key, value] : instance.items()) {
      SF_RETURN_IF_ERROR(FindInput(key, inputs).status());
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      const auto it = instance.find(inputs[k].name);
      SF_CHECK(it != instance.end(), "instance %d lacks the input \"%s\"", i,
               inputs[k].name);
      columns[k].push_back(*it);
    }
  }
  std::vector<Feed> feeds;
  for (size_t k = 0; k < inputs.size(); ++k) {
    absl::StatusOr<Tensor> tensor =
        TensorFromNestedJson(inputs[k].name, columns[k], inputs[k].dtype);
    if (!tensor.ok()) {
      // A ragged array at the top level means instances of different shapes.
      return absl::InvalidArgumentError(absl::StrCat(
          tensor.status().message(), " (in the row format, every instance's \"",
          inputs[k].name, "\" has the same shape)"));
    }
    feeds.push_back({inputs[k].name, *std::move(tensor)});
  }
  return feeds;
}

// "inputs": an object of named tensors, or one tensor for a model of one
// input.
absl::StatusOr<std::vector<Feed>> ParseColumns(
    const Json& columns, const std::vector<TensorInfo>& inputs) {
  std::vector<Feed> feeds;
  if (!columns.is_object()) {
    SF_CHECK(inputs.size() == 1,
             "\"inputs\" is %s; the model has %d inputs (%s), so \"inputs\" "
             "is an object naming them",
             JsonKind(columns), inputs.size(), InputNames(inputs));
    SF_ASSIGN_OR_RETURN(
        Tensor tensor,
        TensorFromNestedJson(inputs[0].name, columns, inputs[0].dtype));
    feeds.push_back({inputs[0].name, std::move(tensor)});
    return feeds;
  }
  for (const auto& [name, value] : columns.items()) {
    SF_ASSIGN_OR_RETURN(const TensorInfo* info, FindInput(name, inputs));
    SF_ASSIGN_OR_RETURN(Tensor tensor,
                        TensorFromNestedJson(name, value, info->dtype));
    feeds.push_back({name, std::move(tensor)});
  }
  return feeds;
}

std::string ProtoJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  // Cannot fail: the messages hold no Any and no invalid UTF-8 is checked.
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

}  // namespace

absl::StatusOr<TfServingPredictRequest> ParseTfServingPredict(
    absl::string_view body, const std::vector<TensorInfo>& inputs) {
  SF_ASSIGN_OR_RETURN(const Json doc, ParseJsonBody(body));
  SF_CHECK(doc.is_object(),
           "the body is %s; expected {\"instances\": [...]} or {\"inputs\": "
           "...}",
           JsonKind(doc));
  for (const auto& [key, value] : doc.items()) {
    SF_CHECK(key == "instances" || key == "inputs" || key == "signature_name",
             "unknown field \"%s\" in the body; expected \"instances\" or "
             "\"inputs\", and optionally \"signature_name\"",
             key);
  }
  const auto signature = doc.find("signature_name");
  if (signature != doc.end()) {
    SF_CHECK(signature->is_string() &&
                 (signature->get<std::string>().empty() ||
                  signature->get<std::string>() == kDefaultSignature),
             "unknown signature_name %s; the model has one signature, "
             "\"%s\"",
             signature->dump(-1, ' ', false, Json::error_handler_t::replace),
             kDefaultSignature);
  }
  const auto instances = doc.find("instances");
  const auto columns = doc.find("inputs");
  SF_CHECK(instances == doc.end() || columns == doc.end(),
           "the body has both \"instances\" and \"inputs\"; give one");
  SF_CHECK(instances != doc.end() || columns != doc.end(),
           "the body has neither \"instances\" (rows) nor \"inputs\" "
           "(columns)");
  TfServingPredictRequest request;
  request.rows = instances != doc.end();
  SF_ASSIGN_OR_RETURN(request.feeds, request.rows
                                         ? ParseRows(*instances, inputs)
                                         : ParseColumns(*columns, inputs));
  return request;
}

absl::StatusOr<std::string> TfServingPredictReply(
    const std::vector<TensorInfo>& outputs, const std::vector<Tensor>& tensors,
    bool rows, int64_t instances) {
  std::string out;
  if (!rows) {
    out = "{\"outputs\":";
    if (tensors.size() == 1) {
      AppendNestedJson(out, tensors[0]);
    } else {
      out += '{';
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (i > 0) out += ',';
        AppendJsonString(out, outputs[i].name);
        out += ':';
        AppendNestedJson(out, tensors[i]);
      }
      out += '}';
    }
    out += '}';
    return out;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    SF_CHECK(tensors[i].rank() >= 1 && tensors[i].dim(0) == instances,
             "output \"%s\" has shape %s, not one row per instance (%d); "
             "ask in the columnar format (\"inputs\") instead",
             outputs[i].name, DimsToString(tensors[i].dims()), instances);
  }
  out = "{\"predictions\":";
  if (tensors.size() == 1) {
    AppendNestedJson(out, tensors[0]);
  } else {
    out += '[';
    for (int64_t row = 0; row < instances; ++row) {
      if (row > 0) out += ',';
      out += '{';
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (i > 0) out += ',';
        AppendJsonString(out, outputs[i].name);
        out += ':';
        AppendRowJson(out, tensors[i], row);
      }
      out += '}';
    }
    out += ']';
  }
  out += '}';
  return out;
}

std::string TfServingStatusJson(const std::vector<VersionState>& versions) {
  Json list = Json::array();
  for (const VersionState& state : versions) {
    list.push_back(
        Json{{"version", absl::StrCat(state.version)},
             {"state", state.available ? "AVAILABLE" : "END"},
             {"status",
              Json{{"error_code", absl::StatusCodeToString(state.error.code())},
                   {"error_message", std::string(state.error.message())}}}});
  }
  return Json{{"model_version_status", std::move(list)}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

std::string TfServingMetadataJson(const ServedModel& model) {
  tensorflow::serving::ModelSpec spec;
  spec.set_name(model.name);
  spec.mutable_version()->set_value(model.version);
  tensorflow::serving::SignatureDefMap signatures;
  (*signatures.mutable_signature_def())[kDefaultSignature] =
      SignatureDefOf(model.predictor);
  return absl::StrCat(
      "{\"model_spec\":", ProtoJson(spec),
      ",\"metadata\":{\"signature_def\":", ProtoJson(signatures), "}}");
}

}  // namespace scopeflow
