// Shape inference shared by the gradient ops of the elementwise family.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_GRAD_UTIL_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_GRAD_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/op_spec.h"

namespace scopeflow {
namespace elementwise {

// Inference for a gradient op: `check` validates the inputs (kernels index
// them by the shapes it vouches for), then each bound output "S@GRAD" gets
// the dtype and shape of input "S", for every S of `slots`.
InferFn CheckThenGradsLike(InferFn check, std::vector<std::string> slots);

// OK if inputs `a` and `b` have one shape (unknown dimensions or rank match
// anything); otherwise an InvalidArgument error naming both slots, their
// variables and their shapes.
absl::Status CheckSameShape(const InferContext& context, absl::string_view a,
                            absl::string_view b);

// CheckSameDtype and CheckSameShape.
absl::Status CheckSameInfo(const InferContext& context, absl::string_view a,
                           absl::string_view b);

// Inference for the gradient op of a one-input op whose kernel reads input
// `like` ("X" or "Out") and "Out@GRAD" elementwise: both must agree in
// dtype and shape, and "X@GRAD", if bound, gets that dtype and shape.
InferFn UnaryGradInfer(std::string like);

}  // namespace elementwise
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_GRAD_UTIL_H_
