// The CUDA devices of a data-parallel run (DataParallelTrainer over CUDA
// places): which device each replica runs on, the NCCL group of the
// distinct devices, the broadcast of the state from the first device to
// the others, and the gradient sums. A device may take several replicas
// (two on cuda:0 with one GPU): they are summed on it first, in replica
// order (device_gradient_sum.h), then NCCL sums the devices' buckets.
//
// Ownership: owns the NCCL group and each device's buffer of sums; holds
// no view of the replicas' gradients (the GradientReducer does). Thread
// safety: one thread (the trainer's) calls everything.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_REPLICAS_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_REPLICAS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/parallel/nccl_communicator.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "framework/training/gradient_reducer.h"
#include "platform/place.h"

namespace scopeflow {

class DeviceReplicas {
 public:
  // `places`: each replica's CUDA device. Errors: a place that is not a
  // CUDA device, a build without GPU code, a device this process does not
  // see, NCCL failing to start.
  static absl::StatusOr<std::unique_ptr<DeviceReplicas>> Create(
      const std::vector<Place>& places);

  // The distinct devices, in the order of their first replica.
  int devices() const { return static_cast<int>(devices_.size()); }
  Place place(int device) const { return CUDAPlace(devices_[device]); }
  // Which of devices() replica `replica` runs on.
  int device_of(int replica) const { return device_of_[replica]; }
  // The replicas on device `device`, in replica order.
  const std::vector<int>& replicas_on(int device) const {
    return replicas_on_[device];
  }

  // Gives scopes[k] (device k's, k >= 1) the tensors `names` of scopes[0]
  // (device 0's): allocated on device k, then NCCL-broadcast from device
  // 0 (host tensors are copied). Names scopes[0] lacks are skipped.
  absl::Status Broadcast(const std::vector<Scope*>& scopes,
                         const std::vector<std::string>& names);

  // Before a step, after reducer.BeginStep: each device's buffer of sums,
  // laid out as the reducer plans (its flat()).
  absl::Status BeginStep(const GradientReducer& reducer);

  // Once every replica has provided bucket `bucket`: each device sums its
  // replicas' gradients of the bucket times `scale` (queued on the calling
  // thread's streams).
  absl::Status SumBucket(const GradientReducer& reducer, int bucket,
                         float scale);
  // Then NCCL sums the bucket over the devices; returns once done.
  absl::Status AllReduceBucket(const GradientReducer& reducer, int bucket);

  // Device `device`'s sums, in the order of the reducer's gradients.
  std::vector<Tensor>& sums(int device) { return sums_[device]; }

 private:
  DeviceReplicas() = default;

  std::vector<int> devices_;
  std::vector<int> device_of_;
  std::vector<std::vector<int>> replicas_on_;
  std::unique_ptr<NcclDeviceGroup> nccl_;
  std::vector<Tensor> flat_;
  std::vector<std::vector<Tensor>> sums_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_DEVICE_REPLICAS_H_
