// The bodies of TensorFlow Serving's REST API, as its documentation gives
// them (https://www.tensorflow.org/tfx/serving/api_rest):
//   predict request, row format:      {"instances": [INSTANCE, ...]}, each
//     instance an object of the inputs (one row each) or, for a model of one
//     input, that input's row;
//   predict request, columnar format: {"inputs": {NAME: TENSOR, ...}} or,
//     for a model of one input, {"inputs": TENSOR};
//   either with an optional "signature_name" ("serving_default" or "");
//   predict reply: {"predictions": [...]} for rows (one per instance, an
//     object of the outputs when there are several), {"outputs": TENSOR} or
//     {"outputs": {NAME: TENSOR, ...}} for columns;
//   model status: {"model_version_status": [{"version": "1", "state":
//     "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]};
//   model metadata: {"model_spec": {...}, "metadata": {"signature_def":
//     SignatureDefMap in protobuf's JSON}}.
#ifndef SCOPEFLOW_TOOLS_SERVE_TFSERVING_REST_H_
#define SCOPEFLOW_TOOLS_SERVE_TFSERVING_REST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/executor.h"
#include "framework/serving/predictor.h"
#include "tools/serve_models.h"

namespace scopeflow {

struct TfServingPredictRequest {
  std::vector<Feed> feeds;
  // The row format ("instances"): the reply is "predictions".
  bool rows = false;
};

// InvalidArgument naming the problem: malformed JSON, neither or both of
// "instances" and "inputs", an unknown field or signature, an instance
// lacking an input, an unknown input, rows of different shapes, a value not
// of the input's dtype.
absl::StatusOr<TfServingPredictRequest> ParseTfServingPredict(
    absl::string_view body, const std::vector<TensorInfo>& inputs);

// The reply for `tensors` (one per output, named by `outputs`). For rows,
// InvalidArgument if the outputs do not all have one row per instance
// (`instances`).
absl::StatusOr<std::string> TfServingPredictReply(
    const std::vector<TensorInfo>& outputs, const std::vector<Tensor>& tensors,
    bool rows, int64_t instances);

// GET /v1/models/NAME[/versions/N]: the states of `versions`.
std::string TfServingStatusJson(const std::vector<VersionState>& versions);

// GET /v1/models/NAME[/versions/N]/metadata for `model`.
std::string TfServingMetadataJson(const ServedModel& model);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_TFSERVING_REST_H_
