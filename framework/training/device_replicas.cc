#include "framework/training/device_replicas.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/training/device_gradient_sum.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<std::unique_ptr<DeviceReplicas>> DeviceReplicas::Create(
    const std::vector<Place>& places) {
  SF_CHECK(!places.empty(), "data-parallel training on no CUDA device");
  std::vector<std::string> names;
  for (const Place& place : places) names.push_back(place.ToString());
  const std::string listed = absl::StrJoin(names, ",");
  for (const Place& place : places) {
    SF_CHECK(place.is_cuda(),
             "places %s: %s among CUDA devices (replicas run either all on "
             "the CPU or all on CUDA devices)",
             listed, place.ToString());
  }
  SF_CHECK_CODE(BuiltWithCuda(), absl::StatusCode::kFailedPrecondition,
                "places %s: this build has no GPU code (no CUDA toolkit was "
                "found at build time, or --config=cpu_only was given)",
                listed);
  const int count = CudaDeviceCount();
  auto replicas = std::unique_ptr<DeviceReplicas>(new DeviceReplicas());
  for (size_t r = 0; r < places.size(); ++r) {
    const int device = places[r].device();
    SF_CHECK_CODE(device < count, absl::StatusCode::kFailedPrecondition,
                  "places %s: replica %d is on %s, and this process sees %d "
                  "CUDA device%s",
                  listed, r, places[r].ToString(), count,
                  count == 1 ? "" : "s");
    int k = 0;
    while (k < replicas->devices() && replicas->devices_[k] != device) ++k;
    if (k == replicas->devices()) {
      replicas->devices_.push_back(device);
      replicas->replicas_on_.emplace_back();
    }
    replicas->device_of_.push_back(k);
    replicas->replicas_on_[k].push_back(static_cast<int>(r));
  }
  SF_ASSIGN_OR_RETURN(replicas->nccl_, NewNcclDeviceGroup(replicas->devices_));
  replicas->flat_.resize(replicas->devices_.size());
  replicas->sums_.resize(replicas->devices_.size());
  return replicas;
}

absl::Status DeviceReplicas::Broadcast(const std::vector<Scope*>& scopes,
                                       const std::vector<std::string>& names) {
  SF_CHECK(static_cast<int>(scopes.size()) == devices(),
           "a broadcast to %d devices got %d scopes", devices(), scopes.size());
  if (devices() == 1) return absl::OkStatus();
  for (const std::string& name : names) {
    // State the training net computes before reading it (the learning
    // rate) does not exist until the first step, and needs no broadcast.
    const Variable* var = scopes[0]->FindLocalVar(name);
    if (var == nullptr) continue;
    SF_ASSIGN_OR_RETURN(const Tensor* first, var->Get<Tensor>());
    SF_CHECK(first->initialized(), "state \"%s\" on %s holds no tensor", name,
             place(0).ToString());
    if (first->place().is_cpu()) {
      for (int k = 1; k < devices(); ++k) {
        SF_ASSIGN_OR_RETURN(Tensor * copy,
                            scopes[k]->Var(name)->GetMutable<Tensor>());
        SF_ASSIGN_OR_RETURN(*copy, first->CopyTo(CPUPlace()));
      }
      continue;
    }
    SF_CHECK(first->place() == place(0),
             "state \"%s\" is %s: expected a tensor on %s or the CPU", name,
             first->DebugString(), place(0).ToString());
    std::vector<void*> data = {const_cast<void*>(first->raw_data())};
    for (int k = 1; k < devices(); ++k) {
      SF_ASSIGN_OR_RETURN(Tensor * copy,
                          scopes[k]->Var(name)->GetMutable<Tensor>());
      SF_RETURN_IF_ERROR(
          copy->Allocate(place(k), first->dtype(), first->dims()));
      data.push_back(copy->raw_data());
    }
    // The startup net's writes to device 0 are queued on this thread's
    // stream, which the broadcast follows.
    SF_RETURN_IF_ERROR(nccl_->Broadcast(
        data, static_cast<int64_t>(first->nbytes()), /*root=*/0));
  }
  return absl::OkStatus();
}

absl::Status DeviceReplicas::BeginStep(const GradientReducer& reducer) {
  const int grads = static_cast<int>(reducer.order().size());
  for (int k = 0; k < devices(); ++k) {
    // Last step's views go first, so that the buffer is reused.
    sums_[k].clear();
    SF_RETURN_IF_ERROR(
        flat_[k].Allocate(place(k), kFloat32, {reducer.total_elements()}));
    sums_[k].resize(grads);
    for (int g = 0; g < grads; ++g) {
      const int64_t begin = reducer.gradient_offset(g);
      SF_ASSIGN_OR_RETURN(
          sums_[k][g],
          flat_[k].Slice(begin, begin + reducer.gradient_elements(g)));
      SF_RETURN_IF_ERROR(sums_[k][g].Reshape(reducer.gradient_dims(g)));
    }
  }
  return absl::OkStatus();
}

absl::Status DeviceReplicas::SumBucket(const GradientReducer& reducer,
                                       int bucket, float scale) {
  for (int k = 0; k < devices(); ++k) {
    std::vector<const float*> in(replicas_on_[k].size());
    for (int g : reducer.order()) {
      if (reducer.bucket_of(g) != bucket) continue;
      for (size_t i = 0; i < in.size(); ++i) {
        in[i] = reducer.input(replicas_on_[k][i], g).data<float>();
      }
      SF_RETURN_IF_ERROR(QueueSumReplicasOnDevice(
          devices_[k], in, reducer.gradient_elements(g), scale,
          flat_[k].data<float>() + reducer.gradient_offset(g)));
    }
  }
  return absl::OkStatus();
}

absl::Status DeviceReplicas::AllReduceBucket(const GradientReducer& reducer,
                                             int bucket) {
  const int64_t begin = reducer.bucket_begin(bucket);
  std::vector<float*> data;
  for (Tensor& flat : flat_) data.push_back(flat.data<float>() + begin);
  return nccl_->AllReduceSum(data, reducer.bucket_end(bucket) - begin);
}

}  // namespace scopeflow
