// The gradient sum of data-parallel training for replicas on one CUDA
// device: their gradients are summed there, in replica order, to the same
// floats as GradientReducer's on the host; an NcclCommunicator
// (framework/parallel/nccl_communicator.h) then sums the devices' results
// across ranks, as the trainer does with a bucket of host sums.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_GRADIENT_SUM_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_GRADIENT_SUM_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "framework/tensor.h"

namespace scopeflow {

// out = scale * (replicas[0] + replicas[1] + ...), float32 tensors of one
// shape on one CUDA device (out is allocated there), at most 16 replicas.
// Queued on the calling thread's stream of the device, which then waits for
// it: out holds the sum on return. Errors name the replica that does not
// fit, or say that the build has no GPU code.
absl::Status SumReplicasOnDevice(const std::vector<const Tensor*>& replicas,
                                 float scale, Tensor& out);

// out[0, count) = scale * (replicas[0][i] + replicas[1][i] + ...), the same
// floats, for buffers on CUDA device `device` (a bucket's slices): queued on
// the calling thread's stream of the device and not waited for; the inputs
// must be final in that stream's order (their writers synchronised).
absl::Status QueueSumReplicasOnDevice(int device,
                                      const std::vector<const float*>& replicas,
                                      int64_t count, float scale, float* out);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_GRADIENT_SUM_H_
