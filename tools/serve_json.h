// The JSON bodies of `scopeflow serve`, in the columnar form TensorFlow
// Serving's REST API uses: {"inputs": {"image": [[...], ...]}} in,
// {"outputs": {"probabilities": [[...], ...]}} out. A tensor is nested
// arrays, outermost dimension first; a scalar is a bare value.
#ifndef SCOPEFLOW_TOOLS_SERVE_JSON_H_
#define SCOPEFLOW_TOOLS_SERVE_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/executor.h"
#include "framework/serving/predictor.h"
#include "framework/tensor.h"

namespace scopeflow {

// The inputs of a predict request, each converted to its input's dtype.
// InvalidArgument naming the problem: malformed JSON (with line and
// column), a body that is not {"inputs": {...}}, an input the model does
// not have, ragged arrays, a value that is not of the input's dtype (a
// string for float32, 2.5 or 300 for uint8...). Missing inputs and wrong
// shapes are left to Predictor::Run, which names them.
absl::StatusOr<std::vector<Feed>> ParsePredictJson(
    absl::string_view body, const std::vector<TensorInfo>& inputs);

// {"outputs": {NAME: nested arrays, ...}} for `tensors`, named after
// `outputs`. Floats print in their shortest exact form; NaN and infinities,
// which JSON lacks, print as null.
std::string PredictResponseJson(const std::vector<TensorInfo>& outputs,
                                const std::vector<Tensor>& tensors);

// {"name": ..., "version": ..., "inputs": [{"name", "dtype", "shape"}],
// "outputs": [...]}; an unknown dimension is -1, an unknown shape null.
std::string ModelMetadataJson(const std::string& name, int64_t version,
                              const std::vector<TensorInfo>& inputs,
                              const std::vector<TensorInfo>& outputs);

// {"status": "ok", "model": name, "version": version}.
std::string HealthJson(const std::string& name, int64_t version);

// {"error": message}.
std::string ErrorJson(absl::string_view message);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_JSON_H_
