// The bodies of the KServe v2 inference protocol over HTTP/REST (the "Open
// Inference Protocol", also Triton's), with its binary tensor data
// extension:
//   infer request: {"id": ..., "parameters": {...}, "inputs": [{"name",
//     "shape", "datatype", "data"}], "outputs": [{"name", "parameters":
//     {"binary_data": true}}]}; "data" flat or nested, row-major;
//   binary: the body's first Inference-Header-Content-Length bytes are that
//     JSON; an input with "parameters": {"binary_data_size": N} has no
//     "data" and its elements are the next N bytes after the JSON (in input
//     order, little-endian); an output asked for with "binary_data" (or
//     every output, with the request parameter "binary_data_output") comes
//     back the same way;
//   infer reply: {"model_name", "model_version", "id", "outputs": [{"name",
//     "shape", "datatype", "data"}]};
//   model metadata: {"name", "versions", "platform", "inputs": [{"name",
//     "datatype", "shape"}], "outputs": [...]}.
// Datatypes: BOOL, UINT8, INT8, INT32, INT64, FP16, FP32, FP64.
#ifndef SCOPEFLOW_TOOLS_SERVE_KSERVE_REST_H_
#define SCOPEFLOW_TOOLS_SERVE_KSERVE_REST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/executor.h"
#include "framework/serving/predictor.h"
#include "tools/serve_models.h"
#include "tools/serve_predict.h"

namespace scopeflow {

// The header that splits a binary body into its JSON and its tensors.
inline constexpr char kInferenceHeaderLength[] =
    "Inference-Header-Content-Length";

// "FP32" for float32...; "" for a dtype KServe has no name for.
const char* KServeDataTypeName(DataType dtype);
// The inverse; InvalidArgument naming `what` for a datatype scopeflow lacks.
absl::StatusOr<DataType> ParseKServeDataType(absl::string_view name,
                                             absl::string_view what);

struct KServeInferRequest {
  std::string id;
  std::vector<Feed> feeds;
  // The outputs to return, by index into the model's outputs, in order;
  // every output when the request names none.
  std::vector<size_t> outputs;
  // Per entry of `outputs`: whether it goes back as binary data.
  std::vector<bool> binary;
};

// Parses an infer body; `header_length`, when given, is the value of
// kInferenceHeaderLength. InvalidArgument naming the problem: malformed JSON,
// a header length beyond the body, an input unknown or given twice, a
// datatype other than the input's, a shape that is not non-negative
// integers, data that does not fill the shape, binary sizes that do not add
// up to the bytes after the JSON, an unknown output.
absl::StatusOr<KServeInferRequest> ParseKServeInfer(
    absl::string_view body, std::optional<size_t> header_length,
    const std::vector<TensorInfo>& inputs,
    const std::vector<TensorInfo>& outputs);

// The reply to `request` from version `version` of model `name`, whose
// outputs are `tensors` (all of them, on the CPU, named by `outputs`):
// JSON, or JSON and binary data with the kInferenceHeaderLength header.
HttpReply KServeInferReply(const std::string& name, int64_t version,
                           const std::vector<TensorInfo>& outputs,
                           const KServeInferRequest& request,
                           const std::vector<Tensor>& tensors);

// GET /v2/models/NAME[/versions/N]; `versions` lists the versions served.
std::string KServeModelMetadataJson(const ServedModel& model,
                                    const std::vector<int64_t>& versions);

// GET /v2: the server's name, version and extensions.
std::string KServeServerMetadataJson();

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_KSERVE_REST_H_
