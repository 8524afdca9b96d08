// The axes of the reduce_* ops, shared by their CPU kernels (reduce.cc) and
// their CUDA kernels' adapters (reduce_cuda.cc).
#ifndef SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_AXES_H_
#define SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_AXES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/value_input.h"

namespace scopeflow {
namespace reduction {

// Which axes of a rank-`rank` input `axes` reduces: every one if it is
// empty, or none with `noop_with_empty_axes`. Errors say which axis is wrong
// and what was expected.
absl::StatusOr<std::vector<bool>> ReducedAxes(const IntValues& axes,
                                              bool noop_with_empty_axes,
                                              int rank);

// A kernel's reduced axes of X, checked against the tensor `slot` of the
// forward's output shape that the kernel indexes by: inference checks it,
// but a gradient op whose shapes Prepare fully knew runs without it.
absl::StatusOr<std::vector<bool>> KernelReducedAxes(
    const KernelContext& context, const Tensor& x, absl::string_view slot);

// X's dimensions for a reduction: adjacent axes that are all reduced or all
// kept merge into one, and axes of size 1 drop out (they move no offset).
struct ReduceShape {
  std::vector<int64_t> sizes;
  std::vector<bool> reduced;
};

ReduceShape Coalesce(absl::Span<const int64_t> dims,
                     const std::vector<bool>& reduced);

}  // namespace reduction
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_AXES_H_
