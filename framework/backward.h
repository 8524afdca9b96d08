// Automatic differentiation of a net, as in Paddle: gradient ops appended
// to the forward ops of block 0, each built by its op's GradSpec.
#ifndef SCOPEFLOW_FRAMEWORK_BACKWARD_H_
#define SCOPEFLOW_FRAMEWORK_BACKWARD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// A differentiated variable and the variable holding its gradient.
struct VarGrad {
  std::string var;
  std::string grad;
};

// Appends to block 0 of `net` the ops computing the gradients of the
// `targets` with respect to each of `wrt`. `target_grads` names, per
// target, a variable (fed or written earlier) holding the gradient that
// flows into it; left empty, every target's gradient is 1 in each element
// (so the result is the gradient of the sum of the targets' elements).
//
// The gradient of x is x@GRAD; a variable read by several ops gets the sum
// of their contributions. Integer and bool variables, variables declared
// stop_gradient and outputs of ops without a GradSpec carry no gradient;
// ops none of whose differentiable inputs depends on `wrt` while reaching a
// target are left out. Returns the gradient of each of `wrt`, in order;
// a variable of `wrt` the targets do not depend on is an error naming it.
absl::StatusOr<std::vector<VarGrad>> AppendGradients(
    NetDef& net, const std::vector<std::string>& targets,
    const std::vector<std::string>& target_grads,
    const std::vector<std::string>& wrt);

// The gradient of `loss` with respect to `parameters`; with no parameters
// given, every persistable floating-point variable the loss depends on that
// no op of the net writes (running statistics and other state are written
// by the net, so they are not parameters).
absl::StatusOr<std::vector<VarGrad>> AppendBackward(
    NetDef& net, const std::string& loss,
    const std::vector<std::string>& parameters = {});

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_BACKWARD_H_
