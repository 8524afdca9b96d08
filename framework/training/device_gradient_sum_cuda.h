// The launcher of the kernel of device_gradient_sum.h. Plain C++ and CUDA
// runtime types only, so both nvcc and the C++ compiler read it.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_GRADIENT_SUM_CUDA_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_GRADIENT_SUM_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// Replicas one kernel sums at most.
inline constexpr int kMaxDeviceReplicas = 16;

// The replicas' buffers, passed to the kernel by value.
struct ReplicaBuffers {
  const float* data[kMaxDeviceReplicas];
  int count = 0;
};

// out[i] = (in[0][i] + in[1][i] + ... + in[count-1][i]) * scale, each add
// and the product rounded on their own (no fused multiply-add), so the
// floats are those GradientReducer computes on the host.
void LaunchSumReplicas(const ReplicaBuffers& in, float scale, float* out,
                       int64_t n, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_GRADIENT_SUM_CUDA_H_
