// Checks and scalar access shared by the optimizer ops: their state
// variables must match the parameter they belong to, and learning rates,
// powers of beta and step counters are one-element tensors.
#ifndef SCOPEFLOW_OPERATORS_OPTIMIZER_UPDATE_UTIL_H_
#define SCOPEFLOW_OPERATORS_OPTIMIZER_UPDATE_UTIL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// Whether two shapes may be equal: same rank and each pair of dimensions
// equal or unknown (-1). An unknown rank matches anything.
bool ShapesCompatible(const VarInfo& a, const VarInfo& b);

// Error unless input `slot` has the dtype and shape of input `like`, e.g.
// `input "Grad" (variable "w@GRAD", shape [3]) must have the shape of input
// "Param" (variable "w", shape [2, 3])`.
absl::Status CheckLikeInput(const InferContext& context, absl::string_view slot,
                            absl::string_view like);

// Error unless input `slot` holds one element (any rank: [], [1], [1, 1]).
// Unknown dimensions pass at Prepare; inference runs again before each
// kernel call with every dimension known, so the kernel's input always
// holds exactly one element.
absl::Status CheckOneElement(const InferContext& context,
                             absl::string_view slot);

// The one element of a float32, float64, int32 or int64 tensor, as a
// double (so a float64 parameter may use a float32 learning rate).
double ReadScalar(const Tensor& tensor);

// Stores `value` in the one element of `tensor`, converted to its dtype.
void WriteScalar(Tensor& tensor, double value);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_OPTIMIZER_UPDATE_UTIL_H_
