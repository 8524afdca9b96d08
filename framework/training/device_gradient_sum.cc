#include "framework/training/device_gradient_sum.h"

#include "absl/strings/str_format.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

#ifdef SCOPEFLOW_HAVE_CUDA_KERNELS
#include "framework/training/device_gradient_sum_cuda.h"
#endif

namespace scopeflow {

absl::Status SumReplicasOnDevice(const std::vector<const Tensor*>& replicas,
                                 float scale, Tensor& out) {
  SF_CHECK(!replicas.empty(), "no replica gradients to sum");
  const Tensor& first = *replicas[0];
  for (size_t r = 0; r < replicas.size(); ++r) {
    const Tensor& grad = *replicas[r];
    SF_CHECK(grad.initialized() && grad.dtype() == kFloat32 &&
                 grad.place().is_cuda() && grad.place() == first.place(),
             "gradient of replica %d is %s: expected a float32 tensor on "
             "replica 0's CUDA device (%s)",
             r, grad.DebugString(), first.place().ToString());
    SF_CHECK(grad.dims() == first.dims(),
             "gradient of replica %d has shape %s, replica 0's %s", r,
             DimsToString(grad.dims()), DimsToString(first.dims()));
  }
#ifdef SCOPEFLOW_HAVE_CUDA_KERNELS
  SF_CHECK(replicas.size() <= static_cast<size_t>(cuda::kMaxDeviceReplicas),
           "%d replicas on one device: at most %d are summed there",
           replicas.size(), cuda::kMaxDeviceReplicas);
  const int device = first.place().device();
  SF_RETURN_IF_ERROR(out.Allocate(first.place(), kFloat32, first.dims()));
  cuda::ReplicaBuffers in;
  for (const Tensor* grad : replicas) in.data[in.count++] = grad->data<float>();
  SF_ASSIGN_OR_RETURN(CudaStream stream, CurrentCudaStream(device));
  cuda::LaunchSumReplicas(in, scale, out.data<float>(), first.numel(),
                          static_cast<cudaStream_t>(stream));
  return SynchronizeCudaStream(device);
#else
  (void)scale;
  (void)out;
  return absl::FailedPreconditionError(
      "summing gradients on a CUDA device: this build has no GPU code");
#endif
}

absl::Status QueueSumReplicasOnDevice(int device,
                                      const std::vector<const float*>& replicas,
                                      int64_t count, float scale, float* out) {
  SF_CHECK(!replicas.empty(), "no replica gradients to sum on cuda:%d", device);
#ifdef SCOPEFLOW_HAVE_CUDA_KERNELS
  SF_CHECK(replicas.size() <= static_cast<size_t>(cuda::kMaxDeviceReplicas),
           "%d replicas on cuda:%d: at most %d are summed there",
           replicas.size(), device, cuda::kMaxDeviceReplicas);
  if (count == 0) return absl::OkStatus();
  cuda::ReplicaBuffers in;
  for (const float* grad : replicas) in.data[in.count++] = grad;
  SF_ASSIGN_OR_RETURN(CudaStream stream, CurrentCudaStream(device));
  cuda::LaunchSumReplicas(in, scale, out, count,
                          static_cast<cudaStream_t>(stream));
  return absl::OkStatus();
#else
  (void)count;
  (void)scale;
  (void)out;
  return absl::FailedPreconditionError(absl::StrFormat(
      "summing gradients on cuda:%d: this build has no GPU code", device));
#endif
}

}  // namespace scopeflow
