// Shape inference shared by the gradient ops of the activations.
#ifndef SCOPEFLOW_OPERATORS_ACTIVATION_GRAD_UTIL_H_
#define SCOPEFLOW_OPERATORS_ACTIVATION_GRAD_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/op_spec.h"

namespace scopeflow {
namespace activation {

// OK if inputs `a` and `b` have one dtype and one shape (unknown dimensions
// or rank match anything); otherwise an InvalidArgument error naming both
// slots, their variables and their dtypes or shapes.
absl::Status CheckSameInfo(const InferContext& context, absl::string_view a,
                           absl::string_view b);

// Inference for a gradient op whose kernel reads input `like` ("X" or
// "Out", which have one dtype and shape) and "Out@GRAD" element by element:
// `like` must be float32 or float64 and agree with "Out@GRAD", and
// "X@GRAD", if bound, gets its dtype and shape.
InferFn GradLike(std::string like);

}  // namespace activation
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ACTIVATION_GRAD_UTIL_H_
