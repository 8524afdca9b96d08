// TensorFlow Serving's PredictionService over gRPC.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/status_macros.h"
#include "tools/serve_grpc_services.h"
#include "tools/serve_predict.h"
#include "tools/serve_tf_tensor.h"

namespace scopeflow {
namespace {

using tensorflow::serving::ModelSpec;

// The version a ModelSpec names (0: the newest), and its signature checked.
absl::StatusOr<std::shared_ptr<const ServedModel>> ResolveSpec(
    const ModelRepository& models, const ModelSpec& spec) {
  SF_CHECK(!spec.name().empty(), "model_spec.name is empty");
  SF_CHECK(spec.signature_name().empty() ||
               spec.signature_name() == kDefaultSignature,
           "unknown signature_name \"%s\"; the model has one signature, "
           "\"%s\"",
           spec.signature_name(), kDefaultSignature);
  SF_CHECK(spec.version_choice_case() != ModelSpec::kVersionLabel,
           "version labels are not supported; name a version");
  const int64_t version = spec.has_version() ? spec.version().value() : 0;
  SF_CHECK(!spec.has_version() || version > 0,
           "model_spec.version is %d; versions are positive", version);
  return models.Resolve(spec.name(), version);
}

ModelSpec SpecOf(const ServedModel& model) {
  ModelSpec spec;
  spec.set_name(model.name);
  spec.mutable_version()->set_value(model.version);
  spec.set_signature_name(kDefaultSignature);
  return spec;
}

absl::Status RunPredict(GrpcCallRunner& runner, grpc::ServerContext& context,
                        const tensorflow::serving::PredictRequest& request,
                        tensorflow::serving::PredictResponse& response) {
  SF_ASSIGN_OR_RETURN(const std::unique_ptr<GrpcCallRunner::Call> call,
                      runner.Admit(context, request.model_spec().name()));
  SF_ASSIGN_OR_RETURN(const std::shared_ptr<const ServedModel> model,
                      ResolveSpec(runner.models(), request.model_spec()));
  const std::vector<TensorInfo>& outputs = model->predictor.outputs();
  for (const std::string& name : request.output_filter()) {
    SF_CHECK(std::any_of(outputs.begin(), outputs.end(),
                         [&](const TensorInfo& o) { return o.name == name; }),
             "output_filter names \"%s\", which is not an output of model "
             "\"%s\"",
             name, model->name);
  }
  std::vector<Feed> feeds;
  for (const auto& [name, proto] : request.inputs()) {
    SF_ASSIGN_OR_RETURN(Tensor tensor, TensorFromTfProto(name, proto));
    feeds.push_back({name, std::move(tensor)});
  }
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> tensors,
                      RunServedModel(*model, std::move(feeds),
                                     call->context()));
  *response.mutable_model_spec() = SpecOf(*model);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string& name = outputs[i].name;
    const auto& filter = request.output_filter();
    if (!filter.empty() &&
        std::find(filter.begin(), filter.end(), name) == filter.end()) {
      continue;
    }
    (*response.mutable_outputs())[name] = TfProtoOf(tensors[i]);
  }
  return absl::OkStatus();
}

absl::Status ReadModelMetadata(
    const ModelRepository& models,
    const tensorflow::serving::GetModelMetadataRequest& request,
    tensorflow::serving::GetModelMetadataResponse& response) {
  SF_CHECK(request.metadata_field_size() > 0,
           "metadata_field is empty; ask for \"signature_def\"");
  for (const std::string& field : request.metadata_field()) {
    SF_CHECK(field == "signature_def",
             "metadata_field \"%s\" is not served; ask for \"signature_def\"",
             field);
  }
  SF_ASSIGN_OR_RETURN(const std::shared_ptr<const ServedModel> model,
                      ResolveSpec(models, request.model_spec()));
  *response.mutable_model_spec() = SpecOf(*model);
  tensorflow::serving::SignatureDefMap signatures;
  (*signatures.mutable_signature_def())[kDefaultSignature] =
      SignatureDefOf(model->predictor);
  (*response.mutable_metadata())["signature_def"].PackFrom(signatures);
  return absl::OkStatus();
}

}  // namespace

grpc::Status GrpcServer::TfServingService::Predict(
    grpc::ServerContext* context,
    const tensorflow::serving::PredictRequest* request,
    tensorflow::serving::PredictResponse* response) {
  return ToGrpcStatus(RunPredict(runner_, *context, *request, *response));
}

grpc::Status GrpcServer::TfServingService::GetModelMetadata(
    grpc::ServerContext*,
    const tensorflow::serving::GetModelMetadataRequest* request,
    tensorflow::serving::GetModelMetadataResponse* response) {
  return ToGrpcStatus(
      ReadModelMetadata(runner_.models(), *request, *response));
}

}  // namespace scopeflow
