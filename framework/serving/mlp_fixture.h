// The MLP of examples/mlp as a model for tests and benchmarks: its
// parameters from the seeded startup net, inputs, and the outputs computed
// by hand from the parameters. Paths are relative to the runfiles root
// (a target using this needs //examples:nets as data).
#ifndef SCOPEFLOW_FRAMEWORK_SERVING_MLP_FIXTURE_H_
#define SCOPEFLOW_FRAMEWORK_SERVING_MLP_FIXTURE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/scope.h"
#include "framework/serving/predictor.h"
#include "framework/tensor.h"

namespace scopeflow {

inline constexpr char kMlpNet[] = "examples/mlp/main.pbtxt";
inline constexpr char kMlpStartup[] = "examples/mlp/startup.pbtxt";

// A root scope holding the MLP's parameters, as its startup net makes them.
absl::StatusOr<std::unique_ptr<Scope>> MlpParameters();

// A Predictor over the MLP and MlpParameters().
absl::StatusOr<Predictor> LoadMlp();

// A float32 [batch, 64] image batch; `seed` picks the values (in [0, 1)).
Tensor MlpInput(int batch, int seed);

// The MLP's probabilities [batch, 10] for `image`, computed in double from
// the parameters in `parameters`, row-major.
std::vector<double> ReferenceMlp(const Scope& parameters, const Tensor& image);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_SERVING_MLP_FIXTURE_H_
