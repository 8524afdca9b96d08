#include "framework/training/gradient_reducer.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "platform/status_macros.h"

namespace scopeflow {

absl::Status GradientReducer::Plan(const std::vector<std::string>& names,
                                   const std::vector<Dims>& dims,
                                   const std::vector<int>& order,
                                   int64_t bucket_bytes,
                                   int64_t first_bucket_bytes) {
  SF_CHECK(dims.size() == names.size() && order.size() == names.size(),
           "%d gradients, %d shapes and an order of %d", names.size(),
           dims.size(), order.size());
  SF_CHECK(bucket_bytes > 0, "buckets of %d bytes: expected more than 0",
           bucket_bytes);
  std::vector<bool> seen(names.size(), false);
  for (int g : order) {
    SF_CHECK(g >= 0 && g < static_cast<int>(names.size()) && !seen[g],
             "the order of the gradients is not a permutation of 0..%d",
             static_cast<int>(names.size()) - 1);
    seen[g] = true;
  }
  names_ = names;
  dims_ = dims;
  order_ = order;
  offsets_.assign(names.size(), 0);
  numel_.assign(names.size(), 0);
  bucket_of_.assign(names.size(), 0);
  bucket_offsets_.assign(1, 0);
  bucket_grads_.clear();
  int64_t at = 0;
  int64_t bucket_start = 0;
  int in_bucket = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const int g = order[k];
    offsets_[g] = at;
    numel_[g] = NumElements(dims[g]);
    at += numel_[g];
    bucket_of_[g] = static_cast<int>(bucket_grads_.size());
    ++in_bucket;
    const bool last = k + 1 == order.size();
    const int64_t cap = bucket_grads_.empty() && first_bucket_bytes > 0
                            ? first_bucket_bytes
                            : bucket_bytes;
    if (last || (at - bucket_start) * int64_t{sizeof(float)} >= cap) {
      bucket_offsets_.push_back(at);
      bucket_grads_.push_back(in_bucket);
      bucket_start = at;
      in_bucket = 0;
    }
  }
  total_ = at;
  planned_ = true;
  return absl::OkStatus();
}

absl::Status GradientReducer::BeginStep(int replicas, float scale) {
  SF_CHECK(planned_, "BeginStep before Plan");
  SF_CHECK(replicas >= 1, "%d replicas: expected at least one", replicas);
  SF_CHECK(places_.empty() || static_cast<int>(places_.size()) == replicas,
           "%d replicas, and places for %d", replicas, places_.size());
  // The sums are views of one buffer, so that a bucket's sum across
  // processes is one call. Dropping the old views first lets Allocate
  // reuse the buffer where the caller holds none of last step's.
  sums_.clear();
  if (!on_devices_) {
    SF_RETURN_IF_ERROR(flat_.Allocate(CPUPlace(), kFloat32, {total_}));
    sums_.resize(names_.size());
  }
  for (size_t g = 0; g < sums_.size(); ++g) {
    SF_ASSIGN_OR_RETURN(sums_[g],
                        flat_.Slice(offsets_[g], offsets_[g] + numel_[g]));
    SF_RETURN_IF_ERROR(sums_[g].Reshape(dims_[g]));
  }
  scale_ = scale;
  replicas_ = replicas;
  const std::lock_guard<std::mutex> lock(mu_);
  inputs_.assign(replicas, std::vector<Tensor>(names_.size()));
  missing_.resize(bucket_grads_.size());
  summed_.assign(bucket_grads_.size(), false);
  for (size_t b = 0; b < bucket_grads_.size(); ++b) {
    missing_[b] = bucket_grads_[b] * replicas;
  }
  aborted_ = false;
  return absl::OkStatus();
}

absl::Status GradientReducer::SetReplicaPlaces(std::vector<Place> places) {
  on_devices_ = false;
  for (const Place& place : places) {
    SF_CHECK(place.is_cpu() || place.is_cuda(),
             "a replica on %s: expected the CPU or a CUDA device",
             place.ToString());
    if (place.is_cuda()) on_devices_ = true;
  }
  places_ = std::move(places);
  return absl::OkStatus();
}

absl::Status GradientReducer::Provide(int replica, int grad,
                                      const Tensor& tensor, int* completed) {
  if (completed != nullptr) *completed = -1;
  SF_CHECK(replica >= 0 && replica < replicas_ && grad >= 0 &&
               grad < static_cast<int>(names_.size()),
           "gradient %d of replica %d: there are %d gradients and %d "
           "replicas",
           grad, replica, names_.size(), replicas_);
  const Place place = places_.empty() ? CPUPlace() : places_[replica];
  SF_CHECK(
      tensor.initialized() && tensor.dtype() == kFloat32 &&
          (place.is_cpu() ? tensor.place().is_cpu() : tensor.place() == place),
      "gradient \"%s\" of replica %d is %s: expected a float32 tensor "
      "on %s",
      names_[grad], replica, tensor.DebugString(),
      place.is_cpu() ? "the CPU" : place.ToString());
  SF_CHECK(tensor.dims() == dims_[grad],
           "gradient \"%s\" of replica %d has shape %s, its parameter %s",
           names_[grad], replica, DimsToString(tensor.dims()),
           DimsToString(dims_[grad]));
  const int bucket = bucket_of_[grad];
  const std::lock_guard<std::mutex> lock(mu_);
  SF_CHECK(!inputs_[replica][grad].initialized(),
           "gradient \"%s\" of replica %d was provided twice", names_[grad],
           replica);
  inputs_[replica][grad] = tensor;
  if (--missing_[bucket] == 0) {
    if (completed != nullptr) *completed = bucket;
    bucket_done_.notify_all();
  }
  return absl::OkStatus();
}

void GradientReducer::Abort() {
  const std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  bucket_done_.notify_all();
}

bool GradientReducer::WaitForBucket(int bucket) {
  std::unique_lock<std::mutex> lock(mu_);
  bucket_done_.wait(lock, [&] { return missing_[bucket] == 0 || aborted_; });
  return missing_[bucket] == 0;
}

void GradientReducer::ReduceBucket(int bucket) {
  ReduceElements(bucket_offsets_[bucket], bucket_offsets_[bucket + 1]);
}

void GradientReducer::ReduceBucketPart(int bucket, int part, int parts) {
  const int64_t begin = bucket_offsets_[bucket];
  const int64_t size = bucket_offsets_[bucket + 1] - begin;
  ReduceElements(begin + size * part / parts,
                 begin + size * (part + 1) / parts);
}

void GradientReducer::MarkSummed(int bucket) {
  const std::lock_guard<std::mutex> lock(mu_);
  summed_[bucket] = true;
  bucket_done_.notify_all();
}

bool GradientReducer::WaitForSum(int bucket) {
  std::unique_lock<std::mutex> lock(mu_);
  bucket_done_.wait(lock, [&] { return summed_[bucket] || aborted_; });
  return summed_[bucket];
}

void GradientReducer::ReducePart(int part, int parts) {
  ReduceElements(total_ * part / parts, total_ * (part + 1) / parts);
}

void GradientReducer::ReduceElements(int64_t begin, int64_t end) {
  std::vector<const float*> in(replicas_);
  // The gradients in the planned order lie end to end: visit those that
  // overlap [begin, end).
  for (int g : order_) {
    const int64_t lo = std::max(begin, offsets_[g]);
    const int64_t hi = std::min(end, offsets_[g] + numel_[g]);
    if (lo >= hi) continue;
    for (int r = 0; r < replicas_; ++r) {
      in[r] = inputs_[r][g].data<float>();
    }
    float* out = sums_[g].data<float>();
    for (int64_t i = lo - offsets_[g]; i < hi - offsets_[g]; ++i) {
      float sum = in[0][i];
      for (int r = 1; r < replicas_; ++r) sum += in[r][i];
      out[i] = sum * scale_;
    }
  }
}

void GradientReducer::ReleaseInputs() {
  const std::lock_guard<std::mutex> lock(mu_);
  for (std::vector<Tensor>& replica : inputs_) {
    for (Tensor& grad : replica) grad = Tensor();
  }
}

absl::Status GradientReducer::Start(
    const std::vector<std::vector<Tensor>>& replica_grads,
    const std::vector<std::string>& names, float scale) {
  SF_CHECK(!replica_grads.empty(), "no replica gradients to sum");
  for (size_t r = 0; r < replica_grads.size(); ++r) {
    SF_CHECK(replica_grads[r].size() == names.size(),
             "replica %d returned %d gradients, expected %d", r,
             replica_grads[r].size(), names.size());
  }
  const std::vector<Tensor>& first = replica_grads[0];
  std::vector<Dims> dims;
  std::vector<int> order;
  for (size_t g = 0; g < names.size(); ++g) {
    for (size_t r = 0; r < replica_grads.size(); ++r) {
      const Tensor& grad = replica_grads[r][g];
      SF_CHECK(grad.initialized() && grad.dtype() == kFloat32 &&
                   grad.place().is_cpu(),
               "gradient \"%s\" of replica %d is %s: expected a float32 "
               "tensor on the CPU",
               names[g], r, grad.DebugString());
      SF_CHECK(grad.dims() == first[g].dims(),
               "gradient \"%s\" of replica %d has shape %s, replica 0's %s",
               names[g], r, DimsToString(grad.dims()),
               DimsToString(first[g].dims()));
    }
    dims.push_back(first[g].dims());
    order.push_back(static_cast<int>(g));
  }
  if (!planned_ || names != names_ || dims != dims_ || order != order_ ||
      buckets() != 1) {
    SF_RETURN_IF_ERROR(Plan(names, dims, order, INT64_MAX));
  }
  const int replicas = static_cast<int>(replica_grads.size());
  SF_RETURN_IF_ERROR(BeginStep(replicas, scale));
  for (int r = 0; r < replicas; ++r) {
    for (size_t g = 0; g < names.size(); ++g) {
      SF_RETURN_IF_ERROR(Provide(r, static_cast<int>(g), replica_grads[r][g]));
    }
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
