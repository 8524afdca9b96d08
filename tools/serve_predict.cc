#include "tools/serve_predict.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/tensor_proto.h"
#include "platform/status_macros.h"
#include "proto/serving.pb.h"
#include "tools/serve_json.h"

namespace scopeflow {
namespace {

absl::StatusOr<std::vector<Feed>> ParsePredictProto(absl::string_view body) {
  PredictRequest request;
  SF_CHECK(request.ParseFromArray(body.data(), static_cast<int>(body.size())),
           "the body is not a scopeflow.PredictRequest protobuf "
           "(proto/serving.proto), as Content-Type %s says",
           kProtobufContentType);
  std::vector<Feed> feeds;
  for (const TensorProto& input : request.inputs()) {
    SF_CHECK(!input.name().empty(),
             "an input tensor of the request has no name");
    SF_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(input));
    feeds.push_back({input.name(), std::move(tensor)});
  }
  return feeds;
}

absl::StatusOr<std::string> PredictProtoReply(const ServedModel& model,
                                              const std::vector<Tensor>& out) {
  PredictResponse response;
  response.set_model_version(model.version);
  for (size_t i = 0; i < out.size(); ++i) {
    SF_ASSIGN_OR_RETURN(*response.add_outputs(), TensorToProto(out[i]));
    response.mutable_outputs(static_cast<int>(i))
        ->set_name(model.predictor.outputs()[i].name);
  }
  return response.SerializeAsString();
}

absl::StatusOr<HttpReply> TryPredict(const ServedModel& model,
                                     absl::string_view content_type,
                                     absl::string_view body,
                                     const PredictContext& context) {
  const bool protobuf = IsProtobufContentType(content_type);
  SF_ASSIGN_OR_RETURN(std::vector<Feed> feeds,
                      protobuf
                          ? ParsePredictProto(body)
                          : ParsePredictJson(body, model.predictor.inputs()));
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                      RunServedModel(model, std::move(feeds), context));
  HttpReply reply;
  if (protobuf) {
    reply.content_type = kProtobufContentType;
    SF_ASSIGN_OR_RETURN(reply.body, PredictProtoReply(model, outputs));
  } else {
    reply.body = PredictResponseJson(model.predictor.outputs(), outputs);
  }
  return reply;
}

}  // namespace

bool IsProtobufContentType(absl::string_view content_type) {
  // Parameters (";charset=...") may follow the media type.
  const absl::string_view media = content_type.substr(
      0, std::min(content_type.find(';'), content_type.size()));
  return absl::EqualsIgnoreCase(media, kProtobufContentType) ||
         absl::EqualsIgnoreCase(media, "application/octet-stream");
}

absl::StatusOr<std::vector<Tensor>> RunServedModel(
    const ServedModel& model, std::vector<Feed> feeds,
    const PredictContext& context) {
  RunTiming timing;
  absl::StatusOr<std::vector<Tensor>> outputs =
      RunPredictor(model.predictor, std::move(feeds), context, &timing,
                   model.name);
  if (model.metrics != nullptr && timing.batch_requests > 0) {
    model.metrics->ObserveQueueTime(model.name, model.version,
                                    timing.queue_seconds);
    // One request of each run reports it, so that the batch size and
    // compute histograms count runs, not requests.
    if (timing.reports_run) {
      model.metrics->ObserveBatch(model.name, model.version,
                                  timing.batch_requests,
                                  timing.compute_seconds);
    }
  }
  if (!outputs.ok()) return outputs.status();
  for (Tensor& output : *outputs) {
    if (output.place() != CPUPlace()) {
      SF_ASSIGN_OR_RETURN(output, output.CopyTo(CPUPlace()));
    }
  }
  return outputs;
}

int HttpStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    case absl::StatusCode::kCancelled:
      return 499;
    default:
      return 500;
  }
}

HttpReply ErrorReply(const absl::Status& status) {
  HttpReply reply;
  reply.status = HttpStatusFor(status);
  reply.body = ErrorJson(status.message());
  return reply;
}

HttpReply Predict(const ServedModel& model, absl::string_view content_type,
                  absl::string_view body, const PredictContext& context) {
  absl::StatusOr<HttpReply> reply =
      TryPredict(model, content_type, body, context);
  return reply.ok() ? *std::move(reply) : ErrorReply(reply.status());
}

}  // namespace scopeflow
