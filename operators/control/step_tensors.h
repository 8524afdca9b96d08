// Tensor plumbing of the control-flow ops and their gradients: a step's slice
// of a sequence, stacking the steps' values into one sequence, zeros, sums.
#ifndef SCOPEFLOW_OPERATORS_CONTROL_STEP_TENSORS_H_
#define SCOPEFLOW_OPERATORS_CONTROL_STEP_TENSORS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// Row t of `sequence` ([T, ...]) as a view of shape [...], no copy.
absl::StatusOr<Tensor> StepOf(const Tensor& sequence, int64_t t);

// Copies `step` into row t of `sequence`, allocating `sequence` as
// [steps] + step's dims on the first call (when it is not yet of that
// form). `what` names the variable for the error of a step whose shape or
// dtype differs from the earlier steps'.
absl::Status CopyIntoStep(const Tensor& step, int64_t t, int64_t steps,
                          const Place& place, Tensor& sequence,
                          const std::string& what);

// The one bool input `slot` holds (a condition), read on the host; an
// error naming the slot and variable if it holds anything else.
absl::StatusOr<bool> ReadBoolScalar(const KernelContext& context,
                                    absl::string_view slot);

// A new tensor like `like`, all zeros.
absl::StatusOr<Tensor> ZerosLike(const Tensor& like);

// A new tensor a + b (float32 or float64): the operands may share buffers
// still in use (fed gradients, values kept in step scopes), so neither is
// written in place.
absl::StatusOr<Tensor> Sum(const Tensor& a, const Tensor& b,
                           const std::string& what);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CONTROL_STEP_TENSORS_H_
