// Launchers of the pooling kernels (pool2d_cuda.cu) on a CUDA stream, for
// pool1d, pool2d and pool3d and their gradients. Plain C++ and CUDA runtime
// types only, so both nvcc and the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_NN_POOL2D_CUDA_H_
#define SCOPEFLOW_OPERATORS_NN_POOL2D_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scopeflow {
namespace cuda {

// A pool op's windows seen in 3-D, axes [depth, height, width], as the CPU
// kernel sees them: pooling over fewer spatial axes gets leading axes of
// size 1 with one-cell windows. A plane is one sample's channel (a cell one
// value) with the channels first, one sample (a cell `channels` contiguous
// values) with the channels last, and one block of B channels of a sample
// (a cell B contiguous values, B = 8 or 16) with them blocked (NCHW8c,
// NCHW16c).
struct PoolGeometry {
  int64_t planes = 0;
  int64_t channels = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t ksize[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_before[3] = {0, 0, 0};
  int64_t pad_after[3] = {0, 0, 0};
};

struct PoolOptions {
  bool is_max = true;
  // Average pooling divides by the window's input cells, not counting
  // padding.
  bool exclusive = true;
  // Indices number the spatial axes column-major (ONNX storage_order 1).
  bool column_major = false;
};

// Out (and, if not null, Indices: each maximum's offset in X) of the
// windows of `g`, from X.
template <typename T>
void LaunchPool(const PoolGeometry& g, const PoolOptions& options, const T* x,
                T* out, int64_t* indices, cudaStream_t stream);

// Device scratch memory LaunchPoolGrad needs (the maxima's positions).
size_t PoolGradScratchBytes(const PoolGeometry& g, const PoolOptions& options);

// X@GRAD from X and Out@GRAD, every element written.
template <typename T>
void LaunchPoolGrad(const PoolGeometry& g, const PoolOptions& options,
                    const T* x, const T* out_grad, T* x_grad, void* scratch,
                    cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_POOL2D_CUDA_H_
