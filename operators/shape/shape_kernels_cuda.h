// Launchers of the CUDA kernels of the shape ops (strided_kernels_cuda.cu,
// index_kernels_cuda.cu) on a stream. Plain C++ and CUDA runtime types
// only, so both nvcc and the C++ compiler read it; the adapters that turn
// an op's tensors into these arguments are in the *_cuda.cc files.
#ifndef SCOPEFLOW_OPERATORS_SHAPE_SHAPE_KERNELS_CUDA_H_
#define SCOPEFLOW_OPERATORS_SHAPE_SHAPE_KERNELS_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scopeflow {
namespace cuda {

// The most dims a kernel walks; callers merge and split boxes to fit.
inline constexpr int kMaxBoxRank = 8;

// A box of elements walked with two sets of strides (in elements):
// for every index (i_0, ..., i_{rank-1}) below dims,
//   dst[sum_k i_k * dst_strides[k]] <- src[sum_k i_k * src_strides[k]].
struct StridedBox {
  int rank = 0;
  int64_t dims[kMaxBoxRank] = {};
  int64_t dst_strides[kMaxBoxRank] = {};
  int64_t src_strides[kMaxBoxRank] = {};
};

// Copies the box, elements of `element_size` bytes (1, 2, 4, 8 or 16).
// Source strides may be 0 (broadcast) or negative; destination elements
// must not collide. The box holds at least one element.
void LaunchStridedCopy(void* dst, const void* src, const StridedBox& box,
                       int element_size, cudaStream_t stream);

// out[m] (+)= sum over r of src[...]: the kept dims index the output, the
// reduced dims are summed over. rank of each <= kMaxBoxRank.
struct SumBox {
  int kept_rank = 0;
  int64_t kept_dims[kMaxBoxRank] = {};
  int64_t kept_out_strides[kMaxBoxRank] = {};
  int64_t kept_src_strides[kMaxBoxRank] = {};
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxBoxRank] = {};
  int64_t reduced_src_strides[kMaxBoxRank] = {};
};

// How LaunchStridedSum splits the work; `workspace_bytes` of device memory
// go to its `workspace` argument (0: none needed).
struct SumPlan {
  int64_t outputs = 0;   // elements of the kept dims
  int64_t reduced = 0;   // elements summed into each
  int64_t splits = 1;    // chunks of the reduced elements summed apart
  int lanes = 1;         // threads per output in the row layout
  bool columns = false;  // threads of a warp take neighbouring outputs
  size_t workspace_bytes = 0;
};

// T is float, double, int32_t or int64_t (integers wrap around).
template <typename T>
SumPlan PlanStridedSum(const SumBox& box);

// Sums the box into `out`, adding to what `out` holds if `accumulate`.
template <typename T>
void LaunchStridedSum(const SumPlan& plan, const SumBox& box, T* out,
                      const T* src, bool accumulate, void* workspace,
                      cudaStream_t stream);

// out[i] = value for i < n; `value_on_device`, if not null, gives the value
// instead (read by the kernel).
template <typename T>
void LaunchFill(T* out, int64_t n, T value, const T* value_on_device,
                cudaStream_t stream);

// How pad fills the border (see slice_pad.cc).
enum class PadMode { kConstant, kEdge, kReflect, kWrap };

// pad's output (of out_dims) against its input X (of x_dims, row-major),
// with `before` elements ahead of X's along each dim. Dims that are not
// padded may be merged with their neighbours (padded by 0).
struct PadBox {
  int rank = 0;
  int64_t out_dims[kMaxBoxRank] = {};
  int64_t x_dims[kMaxBoxRank] = {};
  int64_t before[kMaxBoxRank] = {};
};

// Out = X framed in the border `mode` makes; in constant mode filled with
// `value` (or *value_on_device when that is not null). Out holds at least
// one element.
template <typename T>
void LaunchPad(PadMode mode, const PadBox& box, const T* x, T* out, T value,
               const T* value_on_device, cudaStream_t stream);

// pad_grad outside constant mode: x_grad (zeroed by the caller) gets each
// element of `grad` added into the element of X the forward copied.
template <typename T>
void LaunchPadGradScatter(PadMode mode, const PadBox& box, const T* grad,
                          T* x_grad, cudaStream_t stream);

// Blocks of the first pass of LaunchBorderSum: its workspace holds that
// many 8-byte partial sums.
inline constexpr int kBorderSumBlocks = 256;

// *out = the sum of grad over pad's border (elements outside X's box), in
// double for floats and wrapping uint64 for integers, then cast to T.
template <typename T>
void LaunchBorderSum(const PadBox& box, const T* grad, T* out, void* workspace,
                     cudaStream_t stream);

// gather along an axis of X viewed as [outer, n, inner]: Out viewed as
// [outer, count, inner] takes row index[j] (negative counts from the end)
// for each j < count. `inner_bytes` is the size of one row. An index
// outside [-n, n) reads zeros and is written to `bad`, a device check slot
// (DeviceCheckSlot in platform/cuda_runtime.h). Out holds at least one
// element.
template <typename I>
void LaunchGather(const void* x, const I* index, void* out, int64_t outer,
                  int64_t n, int64_t count, int64_t inner_bytes, int64_t* bad,
                  cudaStream_t stream);

// gather_grad: x_grad (zeroed by the caller) viewed as [outer, n, inner]
// gets each row of grad ([outer, count, inner]) added at index[j]. An index
// outside [-n, n) adds nothing and is written to the device check slot
// `bad`.
template <typename T, typename I>
void LaunchGatherGrad(const T* grad, const I* index, T* x_grad, int64_t outer,
                      int64_t n, int64_t count, int64_t inner, int64_t* bad,
                      cudaStream_t stream);

// Writes an index of the `count` that is outside [-n, n) to the device
// check slot `bad`: for gather and gather_grad when they have no elements
// to move (outer or inner is 0, so the kernels above see no index).
template <typename I>
void LaunchCheckGatherIndices(const I* index, int64_t count, int64_t n,
                              int64_t* bad, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_SHAPE_KERNELS_CUDA_H_
