// Helpers shared by the shape operators: error wording, dimension
// arithmetic with unknown (-1) dimensions, and a dtype-agnostic strided copy.
#ifndef SCOPEFLOW_OPERATORS_SHAPE_SHAPE_UTIL_H_
#define SCOPEFLOW_OPERATORS_SHAPE_SHAPE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace shape_util {

// `input "X" (variable "x") of shape [2, -1]`, or `... of unknown rank` when
// inference does not know the rank yet.
std::string DescribeInput(const InferContext& context, absl::string_view slot,
                          int i = 0);

// The product of `dims`, or -1 if any of them is unknown (negative).
int64_t ProductOrUnknown(absl::Span<const int64_t> dims);

// Whether every dimension of `info` is known (and so is its rank).
bool FullyKnown(const VarInfo& info);

// `axes` made non-negative for `rank` (each in [-rank, rank)), in the given
// order. Errors name the attribute `attr` and describe input `slot`, and
// reject an axis given twice.
absl::StatusOr<std::vector<int>> NormalizeAxes(const InferContext& context,
                                               absl::string_view slot,
                                               absl::Span<const int32_t> axes,
                                               int rank,
                                               absl::string_view attr);

// One axis, as NormalizeAxes.
absl::StatusOr<int> NormalizeAxisOf(const InferContext& context,
                                    absl::string_view slot, int64_t axis,
                                    int rank, absl::string_view attr = "axis");

// Copies a box of `dims` elements of `element_size` bytes each: for every
// index (i_0, ..., i_{n-1}) below `dims`,
//   dst[sum_k i_k * dst_strides[k]] = src[sum_k i_k * src_strides[k]],
// offsets in elements. Source strides may be 0 (broadcast) or negative
// (reversed); destination strides must not make two elements collide.
// `dst` and `src` must not overlap. A box with a 0 dimension copies nothing.
void CopyStrided(void* dst, absl::Span<const int64_t> dst_strides,
                 const void* src, absl::Span<const int64_t> src_strides,
                 absl::Span<const int64_t> dims, size_t element_size);

// Makes `out` a view of `in` with the dims `out` was allocated with: the
// kernel of ops that only change dims (reshape, flatten, squeeze,
// unsqueeze).
absl::Status ViewKernel(KernelContext& context);

}  // namespace shape_util
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_SHAPE_UTIL_H_
