// Numeric gradient checks for operator tests: the gradient ops an op's
// GradSpec makes, against central differences of the forward op.
#ifndef SCOPEFLOW_FRAMEWORK_GRAD_CHECK_H_
#define SCOPEFLOW_FRAMEWORK_GRAD_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/executor.h"

namespace scopeflow {

struct GradCheckOptions {
  // The inputs to differentiate; empty: every floating-point feed.
  std::vector<std::string> wrt;
  // Central difference step.
  double delta = 1e-6;
  // A gradient passes when |analytic - numeric| <= atol + rtol * max(|.|).
  double rtol = 1e-5;
  double atol = 1e-8;
  // Seeds the random weights of the outputs.
  uint64_t seed = 1;
};

// Checks the gradients of the op written in protobuf text format (an
// OpDef) at the `feeds` (float64 for the differentiated inputs, so that
// central differences are accurate). The function differentiated is
// L = sum over the op's gradient-carrying outputs of out * w, with random
// weights w, so every output element's gradient path is exercised.
// OK, or an error naming the first element whose gradients disagree.
absl::Status CheckGradient(const std::string& op_text,
                           const std::vector<Feed>& feeds,
                           const GradCheckOptions& options = {});

// CheckGradient with respect to all of `inputs` at once, then to each
// alone: a gradient op with its other gradient outputs unbound takes paths
// of its own. OK, or the first failure, naming the input checked alone.
absl::Status CheckGradientTogetherAndAlone(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& inputs, GradCheckOptions options = {});

// The same for a whole net (its block 0, with any blocks its control-flow
// ops run): L = sum over `outputs` of out * w. Block 0 declares the feeds;
// the differentiated ones (options.wrt, or every floating-point feed) should
// be float64.
absl::Status CheckNetGradient(const NetDef& net, const std::vector<Feed>& feeds,
                              const std::vector<std::string>& outputs,
                              const GradCheckOptions& options = {});

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_GRAD_CHECK_H_
