// A dtype-agnostic strided copy: transposes, slices, concatenation and
// layout changes are all one box copied between two sets of strides.
#ifndef SCOPEFLOW_OPERATORS_STRIDED_COPY_H_
#define SCOPEFLOW_OPERATORS_STRIDED_COPY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace scopeflow {

// A box of elements walked with two sets of strides (in elements), its
// size-1 dimensions dropped and neighbours that are contiguous in both
// merged, so that the innermost loop over it runs as long as it can. No
// dimensions left: a single element.
struct MergedBox {
  absl::InlinedVector<int64_t, 8> dims, dst_strides, src_strides;
};

// The merged form of the box of `dims`; nullopt if a dimension is 0 (the
// box holds nothing).
std::optional<MergedBox> MergeBox(absl::Span<const int64_t> dims,
                                  absl::Span<const int64_t> dst_strides,
                                  absl::Span<const int64_t> src_strides);

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
