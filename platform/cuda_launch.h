// Launch shapes shared by the CUDA kernels (.cu files): a grid-stride loop
// over n elements with blocks of kCudaThreads threads. Included by nvcc
// only; every cuda_library may include it.
#ifndef SCOPEFLOW_PLATFORM_CUDA_LAUNCH_H_
#define SCOPEFLOW_PLATFORM_CUDA_LAUNCH_H_

#include <cstdint>

namespace scopeflow {
namespace cuda {

inline constexpr int kCudaThreads = 256;

// Blocks for n elements, one per thread, capped: past the cap the
// grid-stride loop gives threads several elements instead of launching
// millions of blocks. At least 1, so a launch for n == 0 stays valid.
inline unsigned CudaBlocks(int64_t n) {
  constexpr int64_t kMaxBlocks = 65535;
  const int64_t blocks = (n + kCudaThreads - 1) / kCudaThreads;
  return static_cast<unsigned>(
      blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

}  // namespace cuda
}  // namespace scopeflow

// for (int64_t i = ...; i < n; i += ...): element i of a grid-stride loop.
#define SF_CUDA_GRID_LOOP(i, n)                                             \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

#endif  // SCOPEFLOW_PLATFORM_CUDA_LAUNCH_H_
