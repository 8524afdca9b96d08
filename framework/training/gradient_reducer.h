// GradientReducer: the in-process all-reduce of data-parallel training on
// CPU threads. Sums N replicas' gradients element by element, always adding
// replica 0, then 1, ... N-1, so the sum is bit-identical however the work
// is split (over threads, or into buckets).
//
// Buckets (as PyTorch's DistributedDataParallel): the gradients are laid
// end to end in the order the backward pass produces them and cut into
// buckets of about `bucket_bytes`; a bucket can be summed (and its sum
// all-reduced across processes) as soon as every replica has produced all
// of its gradients, while the replicas go on computing earlier layers'.
//
//   reducer.Plan(names, dims, production_order, 25 << 20);
//   // every step:
//   reducer.BeginStep(replicas, 1.0f / replicas);
//   //   replica threads, as each gradient is final:
//   reducer.Provide(replica, g, gradient);
//   //   the reducing thread, buckets in order:
//   for (int b = 0; b < reducer.buckets(); ++b) {
//     if (!reducer.WaitForBucket(b)) break;  // a replica failed
//     reducer.ReduceBucket(b);
//   }
//   reducer.ReleaseInputs();
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_GRADIENT_REDUCER_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_GRADIENT_REDUCER_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/tensor.h"
#include "platform/place.h"

namespace scopeflow {

// What DistributedDataParallel takes by default.
inline constexpr int64_t kDefaultBucketBytes = int64_t{25} << 20;

// Ownership: holds views of the replicas' gradients between BeginStep (or
// Start) and ReleaseInputs, and owns the sums (one buffer, reused from step
// to step while the caller holds no view of it).
//
// Thread safety: Plan and BeginStep on one thread while no other uses the
// reducer. Between BeginStep and ReleaseInputs, Provide and Abort from any
// threads at once, and WaitForBucket / ReduceBucket / ReducePart from
// others (ReduceBucket(b) after WaitForBucket(b) returned true; distinct
// buckets, parts or element ranges write distinct elements). The sums may be
// read once the last bucket or part is summed, by the thread that summed it or
// one it handed over to.
class GradientReducer {
 public:
  // Lays out the sums of gradients `names` (shapes `dims`): in the order
  // `order` (a permutation of their indices: the order the backward pass
  // produces them), cut into buckets of whole gradients, each closed once it
  // holds at least `bucket_bytes` (the first: `first_bucket_bytes`, where
  // given), so at least one gradient per bucket.
  absl::Status Plan(const std::vector<std::string>& names,
                    const std::vector<Dims>& dims,
                    const std::vector<int>& order, int64_t bucket_bytes,
                    int64_t first_bucket_bytes = 0);
  bool planned() const { return planned_; }

  // Begins a step: every bucket waits for `replicas` replicas' gradients;
  // the sums will be scale * (g_0 + g_1 + ... + g_{replicas-1}).
  absl::Status BeginStep(int replicas, float scale);

  // Where each replica's gradients are (one place per replica; without a
  // call, every replica's on the CPU). With a CUDA place among them the
  // reducer only keeps the views and tells when buckets are complete: the
  // caller sums them on the devices (input(), gradient_offset()) and
  // sums() stays empty.
  absl::Status SetReplicaPlaces(std::vector<Place> places);

  // Replica `replica`'s gradient `grad` (an index of `names`) is final: the
  // reducer keeps a view of it. Checks that it is a float32 CPU tensor of
  // the planned shape (errors name the gradient and the replica). When this
  // completes a bucket, the thread waiting for it wakes.
  // `*completed` (where given): the bucket this call completed, or -1.
  absl::Status Provide(int replica, int grad, const Tensor& tensor,
                       int* completed = nullptr);

  // Wakes WaitForBucket with false: a replica stopped before providing all
  // its gradients.
  void Abort();

  // Blocks until every replica has provided every gradient of bucket
  // `bucket` (true) or Abort was called (false).
  bool WaitForBucket(int bucket);

  // Sums bucket `bucket`.
  void ReduceBucket(int bucket);
  // Sums part `part` of `parts` of bucket `bucket` (complete): several
  // threads share a bucket so.
  void ReduceBucketPart(int bucket, int part, int parts);

  // Bucket `bucket` is summed (by whichever threads summed it): wakes
  // WaitForSum. The summing threads' writes happen before WaitForSum
  // returns.
  void MarkSummed(int bucket);
  // Blocks until MarkSummed(bucket) (true) or Abort (false).
  bool WaitForSum(int bucket);

  // Sums elements [begin, end) of flat(), whose buckets are complete:
  // parts of a bucket may be summed on several threads at once.
  void ReduceElements(int64_t begin, int64_t end);

  // Sums part `part` of `parts` of the elements of every gradient (the
  // inputs must all be provided).
  void ReducePart(int part, int parts);

  // Lets go of the replicas' gradients once every part is summed.
  void ReleaseInputs();

  // All at once, in the order of `names`, as one bucket: plans for replica
  // 0's shapes, then provides every replica's gradients. Errors name the
  // gradient and the replica.
  absl::Status Start(const std::vector<std::vector<Tensor>>& replica_grads,
                     const std::vector<std::string>& names, float scale);

  // The sums, in the order of `names`.
  std::vector<Tensor>& sums() { return sums_; }
  const std::vector<Tensor>& sums() const { return sums_; }

  // The sums laid end to end in the planned order: sums() are views of it.
  Tensor& flat() { return flat_; }
  const Tensor& flat() const { return flat_; }

  int buckets() const {
    return planned_ ? static_cast<int>(bucket_offsets_.size()) - 1 : 0;
  }
  // Bucket `bucket`'s elements in flat(): [begin, end).
  int64_t bucket_begin(int bucket) const { return bucket_offsets_[bucket]; }
  int64_t bucket_end(int bucket) const { return bucket_offsets_[bucket + 1]; }

  // The elements of all gradients together.
  int64_t total_elements() const { return total_; }

  // Gradient `grad`'s elements in the planned layout: [offset, offset +
  // numel), all in one bucket.
  int64_t gradient_offset(int grad) const { return offsets_[grad]; }
  int64_t gradient_elements(int grad) const { return numel_[grad]; }
  const Dims& gradient_dims(int grad) const { return dims_[grad]; }
  int bucket_of(int grad) const { return bucket_of_[grad]; }
  // The gradients in the planned order.
  const std::vector<int>& order() const { return order_; }
  // Replica `replica`'s gradient `grad`, once provided (between Provide
  // and ReleaseInputs).
  const Tensor& input(int replica, int grad) const {
    return inputs_[replica][grad];
  }

 private:
  bool planned_ = false;
  std::vector<std::string> names_;
  std::vector<Dims> dims_;
  // Gradient g's elements in flat(): [offsets_[g], offsets_[g] + numel).
  std::vector<int64_t> offsets_;
  std::vector<int64_t> numel_;
  // The gradients in the planned order, and each one's bucket.
  std::vector<int> order_;
  std::vector<int> bucket_of_;
  std::vector<int64_t> bucket_offsets_;
  // The gradients of each bucket, per replica, still to be provided.
  std::vector<int> bucket_grads_;
  int64_t total_ = 0;
  Tensor flat_;
  std::vector<Tensor> sums_;
  float scale_ = 1;
  int replicas_ = 0;
  // Empty: every replica on the CPU.
  std::vector<Place> places_;
  bool on_devices_ = false;

  std::mutex mu_;
  std::condition_variable bucket_done_;
  // Per replica and gradient: its view once provided.
  std::vector<std::vector<Tensor>> inputs_;
  // Per bucket: the (replica, gradient) pairs not provided yet, and
  // whether it is summed.
  std::vector<int> missing_;
  std::vector<bool> summed_;
  bool aborted_ = false;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_GRADIENT_REDUCER_H_
