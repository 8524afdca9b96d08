// KServe v2's GRPCInferenceService over gRPC.
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "platform/status_macros.h"
#include "tools/serve_grpc_services.h"
#include "tools/serve_kserve_rest.h"
#include "tools/serve_predict.h"

namespace scopeflow {
namespace {

using InputTensor = inference::ModelInferRequest::InferInputTensor;

absl::StatusOr<std::shared_ptr<const ServedModel>> ResolveModel(
    const ModelRepository& models, const std::string& name,
    const std::string& version_text) {
  SF_CHECK(!name.empty(), "the model name is empty");
  int64_t version = 0;
  if (!version_text.empty()) {
    SF_CHECK_CODE(absl::SimpleAtoi(version_text, &version) && version > 0,
                  absl::StatusCode::kInvalidArgument,
                  "model version \"%s\" is not a positive number",
                  version_text);
  }
  return models.Resolve(name, version);
}

// Copies `values` (the contents field of the tensor's datatype) into
// `tensor`, which holds elements of type T.
template <typename T, typename Values>
absl::Status CopyContents(const std::string& name, const Values& values,
                          const char* field, Tensor& tensor) {
  SF_CHECK(values.size() == tensor.numel(),
           "input \"%s\": contents.%s has %d values for shape %s, which holds "
           "%d",
           name, field, values.size(), DimsToString(tensor.dims()),
           tensor.numel());
  T* out = tensor.data<T>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    out[i] = static_cast<T>(values[i]);
    // An integer the element type cannot hold (300 for UINT8) is an error,
    // not a silent wrap.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      SF_CHECK(
          static_cast<std::decay_t<decltype(values[i])>>(out[i]) == values[i],
          "input \"%s\": contents.%s[%d] is %d, out of range for %s", name,
          field, i, values[i], KServeDataTypeName(tensor.dtype()));
    }
  }
  return absl::OkStatus();
}

absl::Status FillFromContents(const std::string& name,
                              const inference::InferTensorContents& contents,
                              Tensor& tensor) {
  switch (tensor.dtype()) {
    case kBool:
      return CopyContents<bool>(name, contents.bool_contents(), "bool_contents",
                                tensor);
    case kUInt8:
      return CopyContents<uint8_t>(name, contents.uint_contents(),
                                   "uint_contents", tensor);
    case kInt8:
      return CopyContents<int8_t>(name, contents.int_contents(), "int_contents",
                                  tensor);
    case kInt32:
      return CopyContents<int32_t>(name, contents.int_contents(),
                                   "int_contents", tensor);
    case kInt64:
      return CopyContents<int64_t>(name, contents.int64_contents(),
                                   "int64_contents", tensor);
    case kFloat32:
      return CopyContents<float>(name, contents.fp32_contents(),
                                 "fp32_contents", tensor);
    case kFloat64:
      return CopyContents<double>(name, contents.fp64_contents(),
                                  "fp64_contents", tensor);
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "input \"", name, "\": datatype ", KServeDataTypeName(tensor.dtype()),
          " travels in raw_input_contents only"));
  }
}

absl::StatusOr<Tensor> InputOf(const InputTensor& input, const TensorInfo* info,
                               const std::string* raw) {
  const std::string what = absl::StrCat("input \"", input.name(), "\"");
  SF_ASSIGN_OR_RETURN(const DataType dtype,
                      ParseKServeDataType(input.datatype(), what));
  SF_CHECK(info == nullptr || dtype == info->dtype,
           "input \"%s\" has datatype %s; the model takes %s", input.name(),
           input.datatype(), KServeDataTypeName(info->dtype));
  Dims dims;
  for (int64_t dim : input.shape()) {
    SF_CHECK(dim >= 0, "input \"%s\": the shape holds %d", input.name(), dim);
    dims.push_back(dim);
  }
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, dims));
  if (raw != nullptr) {
    SF_CHECK(raw->size() == tensor.nbytes(),
             "input \"%s\": raw_input_contents has %d bytes; %s %s needs %d",
             input.name(), raw->size(), input.datatype(), DimsToString(dims),
             tensor.nbytes());
    std::memcpy(tensor.raw_data(), raw->data(), raw->size());
  } else {
    SF_RETURN_IF_ERROR(
        FillFromContents(input.name(), input.contents(), tensor));
  }
  return tensor;
}

void AddMetadata(const std::vector<TensorInfo>& infos,
                 google::protobuf::RepeatedPtrField<
                     inference::ModelMetadataResponse::TensorMetadata>* out) {
  for (const TensorInfo& info : infos) {
    inference::ModelMetadataResponse::TensorMetadata* tensor = out->Add();
    tensor->set_name(info.name);
    tensor->set_datatype(KServeDataTypeName(info.dtype));
    if (info.has_dims) {
      for (int64_t dim : info.dims) tensor->add_shape(dim);
    } else {
      tensor->add_shape(-1);
    }
  }
}

absl::Status RunInfer(GrpcCallRunner& runner, grpc::ServerContext& context,
                      const inference::ModelInferRequest& request,
                      inference::ModelInferResponse& response) {
  SF_ASSIGN_OR_RETURN(const std::unique_ptr<GrpcCallRunner::Call> call,
                      runner.Admit(context, request.model_name()));
  SF_ASSIGN_OR_RETURN(const std::shared_ptr<const ServedModel> model,
                      ResolveModel(runner.models(), request.model_name(),
                                   request.model_version()));
  const std::vector<TensorInfo>& inputs = model->predictor.inputs();
  const std::vector<TensorInfo>& outputs = model->predictor.outputs();
  SF_CHECK(request.raw_input_contents().empty() ||
               request.raw_input_contents_size() == request.inputs_size(),
           "raw_input_contents has %d entries for %d inputs; give one per "
           "input or none",
           request.raw_input_contents_size(), request.inputs_size());
  std::vector<Feed> feeds;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const InputTensor& input = request.inputs(i);
    const TensorInfo* info = nullptr;
    for (const TensorInfo& candidate : inputs) {
      if (candidate.name == input.name()) info = &candidate;
    }
    const std::string* raw = request.raw_input_contents().empty()
                                 ? nullptr
                                 : &request.raw_input_contents(i);
    SF_ASSIGN_OR_RETURN(Tensor tensor, InputOf(input, info, raw));
    feeds.push_back({input.name(), std::move(tensor)});
  }
  std::vector<size_t> wanted;
  for (const auto& asked : request.outputs()) {
    size_t index = outputs.size();
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].name == asked.name()) index = k;
    }
    SF_CHECK(index < outputs.size(), "unknown output \"%s\" of model \"%s\"",
             asked.name(), model->name);
    wanted.push_back(index);
  }
  if (wanted.empty()) {
    for (size_t k = 0; k < outputs.size(); ++k) wanted.push_back(k);
  }
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> tensors,
                      RunServedModel(*model, std::move(feeds),
                                     call->context()));
  response.set_model_name(model->name);
  response.set_model_version(absl::StrCat(model->version));
  response.set_id(request.id());
  // Outputs travel as raw bytes, as Triton sends them.
  for (size_t index : wanted) {
    const Tensor& tensor = tensors[index];
    inference::ModelInferResponse::InferOutputTensor* output =
        response.add_outputs();
    output->set_name(outputs[index].name);
    output->set_datatype(KServeDataTypeName(tensor.dtype()));
    for (int64_t dim : tensor.dims()) output->add_shape(dim);
    response.add_raw_output_contents(
        static_cast<const char*>(tensor.raw_data()), tensor.nbytes());
  }
  return absl::OkStatus();
}

}  // namespace

grpc::Status GrpcServer::KServeService::ServerLive(
    grpc::ServerContext*, const inference::ServerLiveRequest*,
    inference::ServerLiveResponse* response) {
  response->set_live(true);
  return grpc::Status::OK;
}

grpc::Status GrpcServer::KServeService::ServerReady(
    grpc::ServerContext*, const inference::ServerReadyRequest*,
    inference::ServerReadyResponse* response) {
  response->set_ready(models_.ready());
  return grpc::Status::OK;
}

grpc::Status GrpcServer::KServeService::ModelReady(
    grpc::ServerContext*, const inference::ModelReadyRequest* request,
    inference::ModelReadyResponse* response) {
  const absl::StatusOr<std::shared_ptr<const ServedModel>> model =
      ResolveModel(models_, request->name(), request->version());
  // An unknown model is an error; a known one not loaded is "not ready".
  if (!model.ok() && model.status().code() != absl::StatusCode::kUnavailable) {
    return ToGrpcStatus(model.status());
  }
  response->set_ready(model.ok());
  return grpc::Status::OK;
}

grpc::Status GrpcServer::KServeService::ServerMetadata(
    grpc::ServerContext*, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  response->set_name("scopeflow");
  response->set_version("1");
  response->add_extensions("binary_tensor_data");
  return grpc::Status::OK;
}

grpc::Status GrpcServer::KServeService::ModelMetadata(
    grpc::ServerContext*, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  const absl::StatusOr<std::shared_ptr<const ServedModel>> model =
      ResolveModel(models_, request->name(), request->version());
  if (!model.ok()) return ToGrpcStatus(model.status());
  response->set_name((*model)->name);
  for (int64_t version : models_.ServedVersions((*model)->name)) {
    response->add_versions(absl::StrCat(version));
  }
  response->set_platform("scopeflow");
  AddMetadata((*model)->predictor.inputs(), response->mutable_inputs());
  AddMetadata((*model)->predictor.outputs(), response->mutable_outputs());
  return grpc::Status::OK;
}

grpc::Status GrpcServer::KServeService::ModelInfer(
    grpc::ServerContext* context, const inference::ModelInferRequest* request,
    inference::ModelInferResponse* response) {
  return ToGrpcStatus(RunInfer(runner_, *context, *request, *response));
}

}  // namespace scopeflow
