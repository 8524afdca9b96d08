// Data-parallel training on CPU threads: N replicas of the training net,
// each running the forward and backward pass on its shard of every batch
// from its own thread, in its own child scope of one root scope that holds
// the parameters and the optimizer state once; their gradients are summed
// in a fixed order and one optimizer update follows.
//
// Gradient buckets (as PyTorch's DistributedDataParallel): the gradients
// are cut, in the order the backward pass produces them, into buckets of
// about `bucket_bytes` (the first of at most kFirstBucketBytes, so that
// summing starts early). The executor tells each replica's run when the
// last op writing a gradient has run (OpObserver); the replica thread whose
// gradient completes a bucket (every replica has produced all of it) sums
// it there and then, while the others go on computing earlier layers'
// gradients, and the thread that called TrainStep all-reduces it across
// processes. The last bucket completes as the backward passes end: when it
// is large, every replica's thread sums a part of it (as a reduce-scatter
// would), rather than one thread all of it. Buckets are summed in a fixed order
// and each element adds replica 0, 1, ... N-1, so the results are the same
// bits as summing everything at the end.
//
// The global batch (TrainerOptions::batch_size) is what one replica would
// take: each of N replicas takes batch_size / N of its examples, and step s
// still takes batch s of the epoch's order, so N replicas follow (within
// float rounding) the path of one, and a checkpoint saved with N replicas
// resumes with any other number.
//
// Batch norm: each replica normalises by the statistics of its own shard
// (no synchronised batch norm). A synchronised one would add a blocking
// exchange to every batch-norm layer of the forward and backward passes;
// per-replica statistics cost nothing, match PyTorch's DistributedDataParallel
// and Paddle's default, and with shards of 16 or more examples the
// statistics are close. The running statistics each replica records are
// averaged, in replica order, into the root after every step (for the
// mean, exactly what one replica over the whole batch would record).
//
// Dropout: replica r draws its masks with the op's seed attribute plus
// r * kReplicaSeedStride (replica 0 keeps the net's seed), mixed with the
// step counter as in Trainer, so replicas never share a mask and a run is
// reproducible.
//
// On CUDA devices (Create with CUDA places; a device may take several
// replicas): the parameters and optimizer state live once per device. The
// startup net (or Resume) fills the first device's, which NCCL broadcasts
// to the others; each replica runs on its device in a child scope of that
// device's root, from its own thread; a device sums its replicas'
// gradients of a bucket there (in replica order), then NCCL sums the
// bucket over the devices; every device applies the same update to its
// copy. Checkpoints and Evaluate use the first device's. Batch norm's
// running statistics are averaged on the host and copied to every device.
//
// Across processes (a Communicator, e.g. MPI): the global batch is split
// over processes x replicas; each process sums its replicas' gradients as
// above, then the processes sum theirs (all-reduce) and every process
// applies the same update to its own copy of the state, which rank 0
// broadcasts after Initialize and Resume. Only rank 0 writes checkpoints.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_DATA_PARALLEL_TRAINER_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_DATA_PARALLEL_TRAINER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/executor.h"
#include "framework/parallel/communicator.h"
#include "framework/parallel/parallel.h"
#include "framework/scope.h"
#include "framework/training/dataset.h"
#include "framework/training/device_replicas.h"
#include "framework/training/gradient_reducer.h"
#include "framework/training/trainer.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// Replicas' places from a comma-separated list ("cpu,cpu",
// "cuda:0,cuda:1", "cuda:0,cuda:0"); errors name the place not understood.
absl::StatusOr<std::vector<Place>> ParsePlaces(absl::string_view text);

// Added to a dropout op's seed attribute per replica index.
inline constexpr int64_t kReplicaSeedStride = 1000003;

// DistributedDataParallel's cap on the first bucket.
inline constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;

// A last bucket this large is summed in parts, one per replica thread;
// a smaller one by one thread (waking the others cost more than it saves
// on the digits MLP's 33 KiB).
inline constexpr int64_t kSplitLastBucketBytes = int64_t{1} << 20;

// Where the time of the steps went, summed over the steps trained.
struct DataParallelTimes {
  int64_t steps = 0;
  // From handing the shards to the replicas until the last replica's
  // forward and backward pass ended.
  double forward_backward_seconds = 0;
  // Summing the replicas' gradients (and the batch-norm statistics), and
  // the part of it done while some replica's backward pass still ran.
  double reduce_seconds = 0;
  double reduce_hidden_seconds = 0;
  // Summing the processes' gradients (with a communicator), and the part
  // of it done while some replica's backward pass still ran.
  double all_reduce_seconds = 0;
  double all_reduce_hidden_seconds = 0;
  // The optimizer update.
  double update_seconds = 0;
};

class DataParallelTrainer {
  class Key {
    friend class DataParallelTrainer;
    Key() = default;
  };

 public:
  explicit DataParallelTrainer(Key) {}
  ~DataParallelTrainer();

  // `options.batch_size` is the global batch, split evenly over `replicas`
  // in each of the communicator's processes (it must divide). Runs on the
  // CPU only. Each replica's kernels get an equal share of the OpenMP
  // threads the caller may use (at least one). `communicator` (not owned,
  // null for one process) must outlive the trainer. `bucket_bytes`: the
  // size of the gradient buckets (above).
  static absl::StatusOr<std::unique_ptr<DataParallelTrainer>> Create(
      const NetDef& startup, const NetDef& main, const TrainerOptions& options,
      int replicas, Communicator* communicator = nullptr,
      int64_t bucket_bytes = kDefaultBucketBytes);

  // One replica per place of `places`: all the CPU (as `replicas` CPU
  // threads above), or all CUDA devices, a device given once per replica
  // it runs (see the top; options.place is then ignored, the state going
  // to the first device). Errors: CPU and CUDA places mixed, a build
  // without GPU code, a device this process does not see, CUDA places with
  // a communicator of more than one process.
  static absl::StatusOr<std::unique_ptr<DataParallelTrainer>> Create(
      const NetDef& startup, const NetDef& main, const TrainerOptions& options,
      const std::vector<Place>& places, Communicator* communicator = nullptr,
      int64_t bucket_bytes = kDefaultBucketBytes);

  // As Trainer's: the state lives once per process, in scope(); with a
  // communicator, every process then holds rank 0's.
  absl::Status Initialize();
  absl::StatusOr<bool> Resume();
  // Rank 0 writes; the others do nothing.
  absl::Status SaveCheckpoint();
  absl::StatusOr<int64_t> step() const { return trainer_->step(); }
  int64_t StepsPerEpoch(const Dataset& train) const {
    return trainer_->StepsPerEpoch(train);
  }

  // As Trainer::TrainUntil, the batches split over the replicas. A
  // replica's error stops the step before the update (the state is left as
  // it was) and names the replica.
  absl::Status TrainUntil(const Dataset& train, int64_t until,
                          const std::function<void(const StepReport&)>& report);
  // One step on `batch`, batch_size rows: replica r takes rows
  // [r * replica_batch(), (r + 1) * replica_batch()). Returns the mean of
  // the replicas' losses.
  absl::StatusOr<double> TrainStep(const Dataset& batch);

  absl::StatusOr<EvalReport> Evaluate(const Dataset& data) {
    return trainer_->Evaluate(data);
  }
  absl::Status Fit(const Dataset& train, const Dataset& test,
                   const std::function<void(const StepReport&)>& on_step,
                   const std::function<void(const EvalReport&)>& on_epoch);

  int replicas() const { return replicas_; }
  const std::vector<Place>& places() const { return places_; }
  // The devices the state lives on (1 on the CPU).
  int devices() const { return static_cast<int>(device_scopes_.size()); }
  // Device `device`'s root scope: its copy of the state (scope() for 0).
  Scope& device_scope(int device) { return *device_scopes_[device]; }
  int processes() const { return processes_; }
  int64_t replica_batch() const { return replica_batch_; }
  int threads_per_replica() const { return threads_per_replica_; }
  // The root scope: parameters, optimizer state, step counter.
  Scope& scope() { return trainer_->scope(); }
  const std::vector<std::string>& state_names() const {
    return trainer_->state_names();
  }
  // The parameters whose gradients are summed, in the net's order.
  const std::vector<VarGrad>& parameters() const { return grads_; }
  // The gradient buckets: how many, and which elements of the gradients
  // laid end to end in the order the backward pass produces them (known
  // from the first step of more than one replica or process on).
  const GradientReducer& reducer() const { return reducer_; }
  const DataParallelTimes& times() const { return times_; }

  // On the CPU: true (the default), each bucket is summed by the replica
  // thread whose gradient completes it, while the others go on, and the
  // last one by every replica's thread, a part each, as their backward
  // passes end; false, by the thread that called TrainStep (a third thread
  // the replicas' cores are shared with). The same bits either way. Set
  // before a step, not during one.
  void set_sum_on_replica_threads(bool on) { sum_on_replica_threads_ = on; }

 private:
  struct ReplicaResult {
    double loss = 0;
    std::vector<Tensor> grads;
    // When its forward and backward pass's last op ended.
    std::chrono::steady_clock::time_point finished;
  };
  // When buckets were summed and all-reduced in a step.
  struct Span {
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point end;
  };
  // What a replica worker is handed: a shard to run forward and backward
  // on.
  struct ReplicaTask {
    Dataset shard;
  };

  absl::StatusOr<ReplicaResult> RunReplica(int replica, ReplicaTask task);
  // Lays out the buckets for the parameters' shapes in the root scope.
  absl::Status PlanBuckets();
  // Sums each bucket once every replica has produced it (and all-reduces
  // it across processes), in order; returns early, OK, when a replica
  // fails (its error comes from the pool). Records when each ran.
  absl::Status ReduceBuckets(std::vector<Span>& sums,
                             std::vector<Span>& all_reduces);
  // Copies the root's values of the state the replica net writes (batch
  // norm's running statistics) into each replica's own variables.
  absl::Status ShadowReplicaState();
  // Averages the replicas' copies of that state back into the root (and
  // over the processes).
  absl::Status AverageReplicaState();
  // Gives every process rank 0's state.
  absl::Status BroadcastState();
  bool SumsOnReplicaThreads() const;
  // On the replica thread that completed bucket `bucket`: sums it (all but
  // the last).
  void SumCompletedBucket(int bucket);
  // Whether the last bucket is summed in parts, one per replica thread
  // (else by the thread completing it, as the others).
  bool SplitLastBucket() const;
  // On replica `replica`'s thread once its backward pass ended: sums its
  // part of the last bucket once every replica has provided it.
  void SumLastBucketPart(int replica);

  // Which of device_scopes_ replica `replica`'s state lives in.
  int device_of(int replica) const {
    return devices_ != nullptr ? devices_->device_of(replica) : 0;
  }

  TrainerOptions options_;
  int replicas_ = 1;
  std::vector<Place> places_;
  // Null on the CPU.
  std::unique_ptr<DeviceReplicas> devices_;
  // The roots of the devices after the first (the first's is the
  // trainer's); then, per device, its root.
  std::vector<std::unique_ptr<Scope>> device_roots_;
  std::vector<Scope*> device_scopes_;
  Communicator* communicator_ = nullptr;
  int processes_ = 1;
  int rank_ = 0;
  int64_t replica_batch_ = 0;
  int threads_per_replica_ = 1;
  std::unique_ptr<Trainer> trainer_;
  std::vector<VarGrad> grads_;
  // Persistable variables the replica net writes.
  std::vector<std::string> replica_state_;
  Executor executor_;
  std::vector<PreparedNet> replica_nets_;
  // Per device (one on the CPU): the optimizer's ops.
  std::vector<PreparedNet> update_nets_;
  // Kids of their device's root, one per replica, owned by that scope.
  std::vector<Scope*> replica_scopes_;
  // The replicas' gradients of the step under way, then their sum.
  GradientReducer reducer_;
  int64_t bucket_bytes_ = kDefaultBucketBytes;
  // The gradients in the order replica 0's backward pass finishes them.
  std::vector<int> production_order_;
  // Per replica: hands its gradients to reducer_ as the ops finishing them
  // run (with more than one replica or process).
  std::vector<std::unique_ptr<OpObserver>> taps_;
  DataParallelTimes times_;
  bool sum_on_replica_threads_ = true;
  // Whether the step under way sums on the replicas' threads (set before
  // its items are put), and the rounds of items put so far.
  bool step_on_replicas_ = false;
  int64_t rounds_put_ = 0;
  // When each bucket was summed in the step under way (written by the
  // thread that summed it before MarkSummed), and the last bucket's parts.
  std::vector<Span> bucket_sums_;
  std::vector<Span> last_bucket_parts_;
  std::atomic<int> last_bucket_parts_done_{0};
  // Last: its threads are joined before the rest goes.
  std::unique_ptr<Parallel<ReplicaTask, ReplicaResult>> pool_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_DATA_PARALLEL_TRAINER_H_
