#include <cstdint>

#include "framework/training/device_gradient_sum_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

__global__ void SumReplicasKernel(ReplicaBuffers in, float scale, float* out,
                                  int64_t n) {
  SF_CUDA_GRID_LOOP(i, n) {
    float sum = in.data[0][i];
    for (int r = 1; r < in.count; ++r) sum = __fadd_rn(sum, in.data[r][i]);
    out[i] = __fmul_rn(sum, scale);
  }
}

}  // namespace

void LaunchSumReplicas(const ReplicaBuffers& in, float scale, float* out,
                       int64_t n, cudaStream_t stream) {
  SumReplicasKernel<<<CudaBlocks(n), kCudaThreads, 0, stream>>>(in, scale, out,
                                                                n);
}

}  // namespace cuda
}  // namespace scopeflow
