// One predict request of `scopeflow serve`, from body to reply, without the
// HTTP around it: decode the inputs (JSON, or a PredictRequest protobuf),
// run the model, encode the outputs the same way.
#ifndef SCOPEFLOW_TOOLS_SERVE_PREDICT_H_
#define SCOPEFLOW_TOOLS_SERVE_PREDICT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tools/serve_batcher.h"
#include "tools/serve_models.h"

namespace scopeflow {

// The Content-Type of binary predict bodies (proto/serving.proto).
inline constexpr char kProtobufContentType[] = "application/x-protobuf";
inline constexpr char kJsonContentType[] = "application/json";

struct HttpReply {
  int status = 200;
  std::string content_type = kJsonContentType;
  std::string body;
  // Further headers (KServe's Inference-Header-Content-Length).
  std::vector<std::pair<std::string, std::string>> headers;
};

// Runs `model` on `feeds` as `context` says (its cancellation; in a batch
// when it has a batcher) and returns its outputs on the CPU, in the order
// of model.predictor.outputs(). Every protocol runs models through here, so
// that the per-version metrics (queue time, batch size, compute time) count
// them all.
absl::StatusOr<std::vector<Tensor>> RunServedModel(
    const ServedModel& model, std::vector<Feed> feeds,
    const PredictContext& context = {});

// Whether a body of this Content-Type is a PredictRequest protobuf
// (kProtobufContentType or application/octet-stream, parameters aside).
bool IsProtobufContentType(absl::string_view content_type);

// The HTTP status for an error: 400 for bad input (InvalidArgument,
// OutOfRange), 404 NotFound, 503 ResourceExhausted and Unavailable, 504
// DeadlineExceeded, 499 Cancelled (the client left), 500 otherwise.
int HttpStatusFor(const absl::Status& status);

// {"error": message} with the status HttpStatusFor gives.
HttpReply ErrorReply(const absl::Status& status);

// Runs `model` on the body: a PredictRequest when `content_type` is
// kProtobufContentType (or application/octet-stream), JSON otherwise.
// Errors come back as ErrorReply, always JSON. The model runs as `context`
// says (its cancellation, its batcher).
HttpReply Predict(const ServedModel& model, absl::string_view content_type,
                  absl::string_view body, const PredictContext& context = {});

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_PREDICT_H_
