// The host side of the strided kernels (shape_kernels_cuda.h): boxes of
// any rank merged, and split where they still have more dims than the
// kernels walk. Used by the CUDA kernels of the shape ops.
#ifndef SCOPEFLOW_OPERATORS_SHAPE_STRIDED_CUDA_H_
#define SCOPEFLOW_OPERATORS_SHAPE_STRIDED_CUDA_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "platform/cuda_context.h"

namespace scopeflow {

// CopyStrided (operators/strided_copy.h) on the device, queued on `cuda`'s
// stream. A box with a 0 dim copies nothing.
void CopyStridedOnCuda(const CudaContext& cuda, void* dst,
                       absl::Span<const int64_t> dst_strides, const void* src,
                       absl::Span<const int64_t> src_strides,
                       absl::Span<const int64_t> dims, size_t element_size);

// For every index below `dims`, dst[...] gets the sum of the src[...]
// sharing its destination (dims of destination stride 0 are summed over),
// added to what it holds if `accumulate`. Every destination element the
// box reaches is written; a box with a 0 dim writes nothing. T is float,
// double, int32_t or int64_t.
template <typename T>
absl::Status SumStridedOnCuda(CudaContext& cuda, T* dst,
                              absl::Span<const int64_t> dst_strides,
                              const T* src,
                              absl::Span<const int64_t> src_strides,
                              absl::Span<const int64_t> dims, bool accumulate);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_STRIDED_CUDA_H_
