// A dtype-agnostic strided copy: transposes, slices, concatenation and
// layout changes are all one box copied between two sets of strides.
#ifndef SCOPEFLOW_OPERATORS_STRIDED_COPY_H_
#define SCOPEFLOW_OPERATORS_STRIDED_COPY_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace scopeflow {

// Copies a box of `dims` elements of `element_size` bytes each: for every
// index (i_0, ..., i_{n-1}) below `dims`,
//   dst[sum_k i_k * dst_strides[k]] = src[sum_k i_k * src_strides[k]],
// offsets in elements. Source strides may be 0 (broadcast) or negative
// (reversed); destination strides must not make two elements collide.
// `dst` and `src` must not overlap. A box with a 0 dimension copies nothing.
// Large boxes are copied on several threads (platform/parallel.h).
void CopyStrided(void* dst, absl::Span<const int64_t> dst_strides,
                 const void* src, absl::Span<const int64_t> src_strides,
                 absl::Span<const int64_t> dims, size_t element_size);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_STRIDED_COPY_H_
