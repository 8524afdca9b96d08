#include "framework/training/data_parallel_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "framework/backward.h"
#include "platform/cuda_runtime.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Scalar(const Tensor& fetched) {
  absl::StatusOr<Tensor> host =
      fetched.place().is_cpu() ? fetched : fetched.CopyTo(CPUPlace());
  if (!host.ok()) return std::nan("");
  const Tensor& tensor = *host;
  switch (tensor.dtype()) {
    case kFloat32:
      return tensor.data<float>()[0];
    case kFloat64:
      return tensor.data<double>()[0];
    default:
      return std::nan("");
  }
}

// Gives every dropout op of `net` its own seed for replica `replica`.
void SeedDropoutForReplica(NetDef& net, int replica) {
  if (replica == 0) return;
  for (BlockDef& block : *net.mutable_blocks()) {
    for (OpDef& op : *block.mutable_ops()) {
      if (op.type() != "dropout") continue;
      AttrDef* seed = nullptr;
      for (AttrDef& attr : *op.mutable_attrs()) {
        if (attr.name() == "seed") seed = &attr;
      }
      if (seed == nullptr) {
        seed = op.add_attrs();
        seed->set_name("seed");
      }
      seed->set_i(seed->i() + replica * kReplicaSeedStride);
    }
  }
}

// The persistable variables block 0 of `net` writes.
std::vector<std::string> WrittenPersistables(const NetDef& net) {
  std::set<std::string> persistable;
  for (const VarDef& var : net.blocks(0).vars()) {
    if (var.persistable()) persistable.insert(var.name());
  }
  std::set<std::string> written;
  for (const OpDef& op : net.blocks(0).ops()) {
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        if (persistable.count(var) > 0) written.insert(var);
      }
    }
  }
  return std::vector<std::string>(written.begin(), written.end());
}

// Drops from block 0 the variables no op of `net` reads or writes: the
// replica net declares the optimizer's state and the update net the
// activations, which the other half of the training net uses.
void DropUnusedVars(NetDef& net) {
  std::set<std::string> used;
  for (const BlockDef& block : net.blocks()) {
    for (const OpDef& op : block.ops()) {
      for (const auto* slots : {&op.inputs(), &op.outputs()}) {
        for (const OpSlot& slot : *slots) {
          used.insert(slot.vars().begin(), slot.vars().end());
        }
      }
    }
  }
  auto* vars = net.mutable_blocks(0)->mutable_vars();
  for (int v = vars->size() - 1; v >= 0; --v) {
    if (used.count(vars->Get(v).name()) == 0) vars->DeleteSubrange(v, 1);
  }
}

// Declares the gradients in `block` as inputs to feed, shaped like their
// parameters: the update net reads the summed gradients so.
void DeclareGradientInputs(BlockDef& block, const std::vector<VarGrad>& grads) {
  for (const VarGrad& grad : grads) {
    VarDef* declared = nullptr;
    const VarDef* param = nullptr;
    for (VarDef& var : *block.mutable_vars()) {
      if (var.name() == grad.grad) declared = &var;
      if (var.name() == grad.var) param = &var;
    }
    if (declared == nullptr) {
      declared = block.add_vars();
      declared->set_name(grad.grad);
    }
    if (param != nullptr) {
      declared->set_dtype(param->dtype());
      *declared->mutable_shape() = param->shape();
    }
  }
}

// Hands the reducer each of a replica's gradients as soon as the op that
// finishes it has run, so that its bucket can be summed while the backward
// pass goes on. Owned by the trainer; runs on its replica's thread.
class GradientTap final : public OpObserver {
 public:
  // Finds, in `plan` (the net a run fetching the gradients steps through),
  // the op after which each gradient is final: the last op writing it, or
  // a control-flow op after that (whose blocks may write it unlisted).
  static absl::StatusOr<std::unique_ptr<GradientTap>> Create(
      const PreparedNet& plan, const std::vector<VarGrad>& grads, int replica,
      const Place& place, GradientReducer& reducer) {
    auto tap =
        std::unique_ptr<GradientTap>(new GradientTap(replica, place, reducer));
    tap->plan_ = &plan;
    int last_control_flow = -1;
    std::vector<int> last_writer(plan.var_names().size(), -1);
    for (size_t p = 0; p < plan.ops().size(); ++p) {
      const PreparedOp& op = plan.ops()[p];
      if (op.spec->control_flow()) last_control_flow = static_cast<int>(p);
      for (const std::vector<int>& slot : op.outputs) {
        for (int v : slot) last_writer[v] = static_cast<int>(p);
      }
    }
    tap->ready_after_.resize(plan.ops().size());
    for (size_t g = 0; g < grads.size(); ++g) {
      const int v = plan.VarIndex(grads[g].grad);
      SF_CHECK(v >= 0, "the backward pass has no gradient \"%s\"",
               grads[g].grad);
      const int ready = std::max(last_writer[v], last_control_flow);
      SF_CHECK(ready >= 0, "no op of the backward pass writes gradient \"%s\"",
               grads[g].grad);
      tap->ready_after_[ready].push_back({static_cast<int>(g), v});
      tap->ready_at_.push_back(ready);
    }
    return tap;
  }

  absl::Status AfterOp(const PreparedNet& plan, size_t position,
                       absl::Span<Tensor* const> tensors) override {
    last_op_end_ = Clock::now();
    SF_CHECK_CODE(&plan == plan_, absl::StatusCode::kInternal,
                  "replica %d ran another plan than its gradients were "
                  "located in",
                  replica_);
    // On a CUDA device the gradients are final once this thread's stream
    // has run the op; the thread summing them reads them on its own.
    if (place_.is_cuda() && !ready_after_[position].empty()) {
      SF_RETURN_IF_ERROR(SynchronizeCudaStream(place_.device()));
    }
    for (const auto& [grad, var] : ready_after_[position]) {
      int completed = -1;
      SF_RETURN_IF_ERROR(
          reducer_.Provide(replica_, grad, *tensors[var], &completed));
      if (completed >= 0 && bucket_complete_ != nullptr) {
        bucket_complete_(completed);
      }
    }
    return absl::OkStatus();
  }

  // Called on this replica's thread when its gradient completes a bucket
  // (every replica has provided all of its gradients).
  void set_bucket_complete(std::function<void(int bucket)> bucket_complete) {
    bucket_complete_ = std::move(bucket_complete);
  }

  // When the last op so far of this replica's run ended (before any sum
  // this thread then did).
  Clock::time_point last_op_end() const { return last_op_end_; }

  // Per gradient: the position of the op after which it is final.
  const std::vector<int>& ready_at() const { return ready_at_; }

 private:
  GradientTap(int replica, const Place& place, GradientReducer& reducer)
      : replica_(replica), place_(place), reducer_(reducer) {}

  const int replica_;
  const Place place_;
  GradientReducer& reducer_;
  const PreparedNet* plan_ = nullptr;
  std::function<void(int bucket)> bucket_complete_;
  Clock::time_point last_op_end_;
  // Per op position: the (gradient, variable) pairs final after it.
  std::vector<std::vector<std::pair<int, int>>> ready_after_;
  std::vector<int> ready_at_;
};

}  // namespace

DataParallelTrainer::~DataParallelTrainer() {
  // The workers run against the replica scopes: join them first.
  pool_.reset();
}

absl::StatusOr<std::vector<Place>> ParsePlaces(absl::string_view text) {
  std::vector<Place> places;
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    absl::StatusOr<Place> place = ParsePlace(name);
    SF_CHECK(place.ok(), "places \"%s\": %s", text, place.status().message());
    places.push_back(*place);
  }
  return places;
}

absl::StatusOr<std::unique_ptr<DataParallelTrainer>>
DataParallelTrainer::Create(const NetDef& startup, const NetDef& main,
                            const TrainerOptions& options, int replicas,
                            Communicator* communicator, int64_t bucket_bytes) {
  SF_CHECK(replicas >= 1, "replicas must be >= 1, got %d", replicas);
  SF_CHECK(options.place.is_cpu(),
           "data-parallel training with a replica count runs its replicas "
           "on CPU threads; place %s: give the replicas' places instead",
           options.place.ToString());
  return Create(startup, main, options,
                std::vector<Place>(replicas, CPUPlace()), communicator,
                bucket_bytes);
}

absl::StatusOr<std::unique_ptr<DataParallelTrainer>>
DataParallelTrainer::Create(const NetDef& startup, const NetDef& main,
                            const TrainerOptions& given_options,
                            const std::vector<Place>& places,
                            Communicator* communicator, int64_t bucket_bytes) {
  SF_CHECK(!places.empty(), "data-parallel training on no place");
  const int replicas = static_cast<int>(places.size());
  TrainerOptions options = given_options;
  std::unique_ptr<DeviceReplicas> devices;
  if (!places[0].is_cpu()) {
    SF_ASSIGN_OR_RETURN(devices, DeviceReplicas::Create(places));
    SF_CHECK_CODE(communicator == nullptr || communicator->size() == 1,
                  absl::StatusCode::kUnimplemented,
                  "replicas on CUDA devices across %d processes: only one "
                  "process drives CUDA devices (NCCL across processes is not "
                  "wired into the trainer)",
                  communicator->size());
    options.place = devices->place(0);
  } else {
    for (const Place& place : places) {
      SF_CHECK(place.is_cpu(),
               "replica places begin with the CPU, then %s: replicas run "
               "either all on the CPU or all on CUDA devices",
               place.ToString());
    }
    options.place = CPUPlace();
  }
  const int processes = communicator != nullptr ? communicator->size() : 1;
  const int64_t shards = int64_t{replicas} * processes;
  SF_CHECK(options.batch_size > 0 && options.batch_size % shards == 0,
           "the batch of %d examples does not split evenly over %d replicas "
           "(%d per process, %d processes)",
           options.batch_size, shards, replicas, processes);
  SF_CHECK(bucket_bytes > 0,
           "gradient buckets of %d bytes: expected more than 0", bucket_bytes);
  auto dp = std::make_unique<DataParallelTrainer>(Key());
  dp->options_ = options;
  dp->replicas_ = replicas;
  dp->places_ = places;
  dp->devices_ = std::move(devices);
  dp->communicator_ = communicator;
  dp->bucket_bytes_ = bucket_bytes;
  dp->processes_ = processes;
  dp->rank_ = communicator != nullptr ? communicator->rank() : 0;
  dp->replica_batch_ = options.batch_size / shards;
  dp->threads_per_replica_ = dp->devices_ != nullptr
                                 ? 1
                                 : std::max(1, MaxParallelThreads() / replicas);
  // Every process reads the checkpoint; only rank 0 writes it, and locks
  // the folder.
  TrainerOptions trainer_options = options;
  trainer_options.lock_checkpoint_dir = dp->rank_ == 0;
  SF_ASSIGN_OR_RETURN(dp->trainer_,
                      Trainer::Create(startup, main, trainer_options));

  // The training net is the forward net, its backward pass, then the
  // optimizer's ops: the replicas run the first two, the root the last.
  NetDef backward = main;
  SF_ASSIGN_OR_RETURN(dp->grads_, AppendBackward(backward, options.loss));
  const NetDef& train = dp->trainer_->train_net();
  const int split = backward.blocks(0).ops_size();
  SF_CHECK(split <= train.blocks(0).ops_size(),
           "the training net of \"%s\" has %d ops, fewer than its forward "
           "and backward passes (%d)",
           main.name(), train.blocks(0).ops_size(), split);
  for (int i = 0; i < split; ++i) {
    SF_CHECK(train.blocks(0).ops(i).type() == backward.blocks(0).ops(i).type(),
             "op %d of the training net of \"%s\" is %s, the backward pass "
             "has %s there",
             i, main.name(), train.blocks(0).ops(i).type(),
             backward.blocks(0).ops(i).type());
  }
  NetDef replica_net = train;
  replica_net.set_name(absl::StrCat(train.name(), "@replica"));
  auto* replica_ops = replica_net.mutable_blocks(0)->mutable_ops();
  replica_ops->DeleteSubrange(split, replica_ops->size() - split);
  NetDef update_net = train;
  update_net.set_name(absl::StrCat(train.name(), "@update"));
  update_net.mutable_blocks(0)->mutable_ops()->DeleteSubrange(0, split);
  DeclareGradientInputs(*update_net.mutable_blocks(0), dp->grads_);
  DropUnusedVars(replica_net);
  DropUnusedVars(update_net);
  dp->replica_state_ = WrittenPersistables(replica_net);

  ExecutorOptions executor_options;
  executor_options.run = options.run;
  dp->executor_ = Executor(executor_options);
  const Executor& executor = dp->executor_;
  // The state lives in the root on the CPU or the first device, and in a
  // root of its own on every other device.
  dp->device_scopes_.push_back(&dp->trainer_->scope());
  const int device_count =
      dp->devices_ != nullptr ? dp->devices_->devices() : 1;
  for (int k = 1; k < device_count; ++k) {
    dp->device_roots_.push_back(std::make_unique<Scope>());
    dp->device_scopes_.push_back(dp->device_roots_.back().get());
  }
  for (int r = 0; r < replicas; ++r) {
    NetDef net = replica_net;
    SeedDropoutForReplica(net, r);
    SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                        executor.Prepare(net, 0, places[r]));
    dp->replica_nets_.push_back(std::move(prepared));
    dp->replica_scopes_.push_back(
        &dp->device_scopes_[dp->device_of(r)]->NewScope());
  }
  for (int k = 0; k < device_count; ++k) {
    SF_ASSIGN_OR_RETURN(
        PreparedNet prepared,
        executor.Prepare(
            update_net, 0,
            dp->devices_ != nullptr ? dp->devices_->place(k) : CPUPlace()));
    dp->update_nets_.push_back(std::move(prepared));
  }
  std::set<std::string> grad_names;
  for (const VarGrad& grad : dp->grads_) grad_names.insert(grad.grad);
  for (const std::string& input : dp->update_nets_[0].input_names()) {
    SF_CHECK(grad_names.count(input) > 0,
             "the optimizer's ops of \"%s\" read \"%s\", which is neither a "
             "gradient nor persistable state",
             main.name(), input);
  }

  if (replicas > 1 || processes > 1) {
    SF_RETURN_IF_ERROR(dp->reducer_.SetReplicaPlaces(places));
    std::vector<std::string> fetches;
    for (const VarGrad& grad : dp->grads_) fetches.push_back(grad.grad);
    fetches.push_back(options.loss);
    for (int r = 0; r < replicas; ++r) {
      SF_ASSIGN_OR_RETURN(
          std::unique_ptr<GradientTap> tap,
          GradientTap::Create(dp->replica_nets_[r].PlanFor(fetches), dp->grads_,
                              r, places[r], dp->reducer_));
      if (r == 0) {
        // Stable: gradients finished by one op keep the net's order.
        std::vector<int>& order = dp->production_order_;
        for (size_t g = 0; g < dp->grads_.size(); ++g) {
          order.push_back(static_cast<int>(g));
        }
        const std::vector<int>& ready = tap->ready_at();
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return ready[a] < ready[b]; });
      }
      if (dp->devices_ == nullptr) {
        DataParallelTrainer* trainer = dp.get();
        tap->set_bucket_complete(
            [trainer](int bucket) { trainer->SumCompletedBucket(bucket); });
      }
      dp->taps_.push_back(std::move(tap));
    }
  }

  DataParallelTrainer* self = dp.get();
  dp->pool_ = std::make_unique<Parallel<ReplicaTask, ReplicaResult>>(
      replicas,
      [self](int replica, ReplicaTask task) {
        return self->RunReplica(replica, std::move(task));
      },
      /*serial_first_call=*/true);
  return dp;
}

absl::StatusOr<DataParallelTrainer::ReplicaResult>
DataParallelTrainer::RunReplica(int replica, ReplicaTask task) {
  ReplicaResult result;
  ScopedMaxThreads threads(threads_per_replica_);
  std::vector<std::string> fetches;
  fetches.reserve(grads_.size() + 1);
  for (const VarGrad& grad : grads_) fetches.push_back(grad.grad);
  fetches.push_back(options_.loss);
  const std::vector<Feed> feeds = {
      {options_.features_feed, task.shard.features},
      {options_.labels_feed, task.shard.labels}};
  absl::StatusOr<std::vector<Tensor>> run =
      taps_.empty()
          ? executor_.Run(replica_nets_[replica], *replica_scopes_[replica],
                          feeds, fetches)
          : executor_.Run(replica_nets_[replica], *replica_scopes_[replica],
                          feeds, fetches, *taps_[replica]);
  // The end of its own ops: sums this thread did after them are not hidden
  // behind its backward pass.
  result.finished =
      taps_.empty()
          ? Clock::now()
          : static_cast<const GradientTap&>(*taps_[replica]).last_op_end();
  if (!run.ok()) {
    // The buckets it would have completed never will be.
    if (!taps_.empty()) reducer_.Abort();
    return run.status();
  }
  if (!taps_.empty() && SumsOnReplicaThreads()) SumLastBucketPart(replica);
  std::vector<Tensor>& out = *run;
  result.loss = Scalar(out.back());
  out.pop_back();
  // With taps, the reducer holds views of the gradients already.
  if (taps_.empty()) result.grads = std::move(out);
  return result;
}

absl::Status DataParallelTrainer::ShadowReplicaState() {
  for (const std::string& name : replica_state_) {
    for (int r = 0; r < replicas_; ++r) {
      Scope& device_root = *device_scopes_[device_of(r)];
      const Variable* var = device_root.FindLocalVar(name);
      SF_CHECK_CODE(var != nullptr, absl::StatusCode::kFailedPrecondition,
                    "state \"%s\" is not in the root scope of %s: "
                    "initialise or resume first",
                    name, places_[r].ToString());
      SF_ASSIGN_OR_RETURN(const Tensor* root, var->Get<Tensor>());
      SF_CHECK_CODE(root->initialized(), absl::StatusCode::kFailedPrecondition,
                    "state \"%s\" holds no tensor", name);
      SF_ASSIGN_OR_RETURN(Tensor * copy,
                          replica_scopes_[r]->Var(name)->GetMutable<Tensor>());
      if (root->place().is_cpu() && places_[r].is_cpu()) {
        SF_RETURN_IF_ERROR(
            copy->Allocate(CPUPlace(), root->dtype(), root->dims()));
        std::memcpy(copy->raw_data(), root->raw_data(), root->nbytes());
      } else {
        SF_ASSIGN_OR_RETURN(*copy, root->CopyTo(places_[r]));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DataParallelTrainer::AverageReplicaState() {
  for (const std::string& name : replica_state_) {
    SF_ASSIGN_OR_RETURN(Tensor * first_root,
                        scope().FindLocalVar(name)->GetMutable<Tensor>());
    // On CUDA devices the average is taken on the host (the state is
    // small: batch norm's running statistics), then copied to each device.
    Tensor host_root;
    Tensor* root = first_root;
    if (devices_ != nullptr) {
      SF_RETURN_IF_ERROR(host_root.Allocate(CPUPlace(), first_root->dtype(),
                                            first_root->dims()));
      root = &host_root;
    }
    std::vector<Tensor> host_copies;
    host_copies.reserve(replica_scopes_.size());
    std::vector<const Tensor*> copies;
    for (Scope* replica : replica_scopes_) {
      SF_ASSIGN_OR_RETURN(const Tensor* copy,
                          replica->FindLocalVar(name)->Get<Tensor>());
      if (!copy->place().is_cpu()) {
        SF_ASSIGN_OR_RETURN(Tensor host, copy->CopyTo(CPUPlace()));
        host_copies.push_back(std::move(host));
        copy = &host_copies.back();
      }
      SF_CHECK(copy->dtype() == root->dtype() && copy->dims() == root->dims(),
               "state \"%s\": a replica wrote %s over %s", name,
               copy->DebugString(), root->DebugString());
      copies.push_back(copy);
    }
    const int64_t n = root->numel();
    if (root->dtype() == kFloat32) {
      float* out = root->data<float>();
      for (int64_t i = 0; i < n; ++i) {
        float sum = copies[0]->data<float>()[i];
        for (size_t r = 1; r < copies.size(); ++r) {
          sum += copies[r]->data<float>()[i];
        }
        out[i] = sum / static_cast<float>(copies.size());
      }
    } else if (root->dtype() == kFloat64) {
      double* out = root->data<double>();
      for (int64_t i = 0; i < n; ++i) {
        double sum = copies[0]->data<double>()[i];
        for (size_t r = 1; r < copies.size(); ++r) {
          sum += copies[r]->data<double>()[i];
        }
        out[i] = sum / static_cast<double>(copies.size());
      }
    } else {
      // Counters and other integers: replica 0's.
      std::memcpy(root->raw_data(), copies[0]->raw_data(), root->nbytes());
    }
    if (communicator_ != nullptr && processes_ > 1 &&
        root->dtype() == kFloat32) {
      float* out = root->data<float>();
      SF_RETURN_IF_ERROR(communicator_->AllReduceSum(out, n));
      for (int64_t i = 0; i < n; ++i) out[i] /= static_cast<float>(processes_);
    }
    if (devices_ != nullptr) {
      for (Scope* device_root : device_scopes_) {
        SF_ASSIGN_OR_RETURN(Tensor * state,
                            device_root->Var(name)->GetMutable<Tensor>());
        const Place place =
            state->initialized() ? state->place() : first_root->place();
        SF_ASSIGN_OR_RETURN(*state, host_root.CopyTo(place));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DataParallelTrainer::BroadcastState() {
  if (devices_ != nullptr) {
    return devices_->Broadcast(device_scopes_, state_names());
  }
  if (communicator_ == nullptr || processes_ == 1) return absl::OkStatus();
  for (const std::string& name : state_names()) {
    // State the training net computes before reading it (the learning
    // rate) does not exist until the first step, and needs no broadcast.
    Variable* var = scope().FindLocalVar(name);
    if (var == nullptr) continue;
    SF_ASSIGN_OR_RETURN(Tensor * tensor, var->GetMutable<Tensor>());
    SF_CHECK(tensor->initialized() && tensor->place().is_cpu(),
             "state \"%s\" holds %s: expected a tensor on the CPU", name,
             tensor->DebugString());
    SF_RETURN_IF_ERROR(communicator_->Broadcast(
        tensor->raw_data(), static_cast<int64_t>(tensor->nbytes()), 0));
  }
  return absl::OkStatus();
}

absl::Status DataParallelTrainer::Initialize() {
  SF_RETURN_IF_ERROR(trainer_->Initialize());
  return BroadcastState();
}

absl::StatusOr<bool> DataParallelTrainer::Resume() {
  SF_ASSIGN_OR_RETURN(bool resumed, trainer_->Resume());
  SF_RETURN_IF_ERROR(BroadcastState());
  return resumed;
}

absl::Status DataParallelTrainer::SaveCheckpoint() {
  if (rank_ != 0) return absl::OkStatus();
  return trainer_->SaveCheckpoint();
}

absl::Status DataParallelTrainer::PlanBuckets() {
  std::vector<std::string> names;
  std::vector<Dims> dims;
  for (const VarGrad& grad : grads_) {
    const Variable* var = scope().FindVar(grad.var);
    SF_CHECK_CODE(var != nullptr, absl::StatusCode::kFailedPrecondition,
                  "parameter \"%s\" is not in the root scope: initialise or "
                  "resume first",
                  grad.var);
    SF_ASSIGN_OR_RETURN(const Tensor* param, var->Get<Tensor>());
    names.push_back(grad.grad);
    dims.push_back(param->dims());
  }
  return reducer_.Plan(names, dims, production_order_, bucket_bytes_,
                       std::min(bucket_bytes_, kFirstBucketBytes));
}

absl::Status DataParallelTrainer::ReduceBuckets(
    std::vector<Span>& sums, std::vector<Span>& all_reduces) {
  const bool across_processes = communicator_ != nullptr && processes_ > 1;
  const float scale = 1.0f / static_cast<float>(replicas_ * processes_);
  const bool on_replicas = SumsOnReplicaThreads();
  for (int b = 0; b < reducer_.buckets(); ++b) {
    if (on_replicas) {
      // The replicas' threads sum the buckets; this one all-reduces them.
      if (!reducer_.WaitForSum(b)) return absl::OkStatus();
      sums.push_back(bucket_sums_[b]);
      if (!across_processes) continue;
      Span all_reduce{Clock::now(), {}};
      SF_RETURN_IF_ERROR(communicator_->AllReduceSum(
          reducer_.flat().data<float>() + reducer_.bucket_begin(b),
          reducer_.bucket_end(b) - reducer_.bucket_begin(b)));
      all_reduce.end = Clock::now();
      all_reduces.push_back(all_reduce);
      continue;
    }
    if (!reducer_.WaitForBucket(b)) return absl::OkStatus();
    if (devices_ != nullptr) {
      // Each device sums its replicas (queued), then NCCL sums the
      // devices (waited for): one span each.
      Span sum{Clock::now(), {}};
      SF_RETURN_IF_ERROR(devices_->SumBucket(reducer_, b, scale));
      sum.end = Clock::now();
      sums.push_back(sum);
      Span all_reduce{Clock::now(), {}};
      SF_RETURN_IF_ERROR(devices_->AllReduceBucket(reducer_, b));
      all_reduce.end = Clock::now();
      all_reduces.push_back(all_reduce);
      continue;
    }
    Span sum{Clock::now(), {}};
    const int64_t begin = reducer_.bucket_begin(b);
    const int64_t end = reducer_.bucket_end(b);
    // One thread: the replicas' threads are busy with the backward pass,
    // and when they are done, their OpenMP teams still hold the cores
    // (a team for the last bucket measured slower on a loaded machine).
    reducer_.ReduceBucket(b);
    sum.end = Clock::now();
    sums.push_back(sum);
    if (!across_processes) continue;
    Span all_reduce{Clock::now(), {}};
    SF_RETURN_IF_ERROR(communicator_->AllReduceSum(
        reducer_.flat().data<float>() + begin, end - begin));
    all_reduce.end = Clock::now();
    all_reduces.push_back(all_reduce);
  }
  return absl::OkStatus();
}

absl::StatusOr<double> DataParallelTrainer::TrainStep(const Dataset& batch) {
  SF_CHECK(batch.size() == options_.batch_size,
           "a step takes a batch of %d examples, got %d", options_.batch_size,
           batch.size());
  SF_RETURN_IF_ERROR(ShadowReplicaState());
  const bool reduce = !taps_.empty();
  if (reduce) {
    if (!reducer_.planned()) SF_RETURN_IF_ERROR(PlanBuckets());
    SF_RETURN_IF_ERROR(reducer_.BeginStep(
        replicas_, 1.0f / static_cast<float>(replicas_ * processes_)));
    if (devices_ != nullptr) SF_RETURN_IF_ERROR(devices_->BeginStep(reducer_));
    bucket_sums_.assign(reducer_.buckets(), Span{});
    last_bucket_parts_.assign(replicas_, Span{});
    last_bucket_parts_done_ = 0;
  }
  // The pool's first round runs serially on this thread: a replica waiting
  // there for the others to finish the last bucket would wait forever.
  step_on_replicas_ =
      sum_on_replica_threads_ && devices_ == nullptr && rounds_put_ > 0;
  const Clock::time_point start = Clock::now();
  for (int r = 0; r < replicas_; ++r) {
    ReplicaTask task;
    const int64_t first = (int64_t{rank_} * replicas_ + r) * replica_batch_;
    SF_ASSIGN_OR_RETURN(task.shard, Rows(batch, first, first + replica_batch_));
    pool_->Put(std::move(task));
  }
  ++rounds_put_;
  // This thread sums (and all-reduces) the buckets as the replicas finish
  // them.
  std::vector<Span> sums;
  std::vector<Span> all_reduces;
  const absl::Status reduced =
      reduce ? ReduceBuckets(sums, all_reduces) : absl::OkStatus();
  // Every replica's result is got, failed or not, so that none is left
  // running into the next step; the first error stops the step.
  absl::Status failure;
  std::vector<Tensor> summed;
  double loss = 0;
  Clock::time_point backward_end = start;
  for (int r = 0; r < replicas_; ++r) {
    absl::StatusOr<ReplicaResult> result = pool_->Get();
    if (!result.ok()) {
      if (failure.ok()) failure = result.status();
      continue;
    }
    loss += result->loss;
    backward_end = std::max(backward_end, result->finished);
    // One replica's gradients are the sum: no copy.
    if (!reduce) summed = std::move(result->grads);
  }
  if (reduce) reducer_.ReleaseInputs();
  SF_RETURN_IF_ERROR(failure);
  SF_RETURN_IF_ERROR(reduced);
  times_.forward_backward_seconds +=
      std::chrono::duration<double>(backward_end - start).count();
  // Seconds of `spans`, and of their parts while a backward pass ran.
  const auto AddSpans = [backward_end](const std::vector<Span>& spans,
                                       double& total, double& hidden) {
    for (const Span& span : spans) {
      total += std::chrono::duration<double>(span.end - span.start).count();
      if (span.start < backward_end) {
        hidden += std::chrono::duration<double>(
                      std::min(span.end, backward_end) - span.start)
                      .count();
      }
    }
  };
  AddSpans(sums, times_.reduce_seconds, times_.reduce_hidden_seconds);
  AddSpans(all_reduces, times_.all_reduce_seconds,
           times_.all_reduce_hidden_seconds);
  if (reduce) {
    SF_CHECK_CODE(static_cast<int>(sums.size()) == reducer_.buckets(),
                  absl::StatusCode::kInternal,
                  "%d of %d gradient buckets were summed, and no replica "
                  "failed",
                  sums.size(), reducer_.buckets());
    if (devices_ == nullptr) summed = reducer_.sums();
  }
  if (communicator_ != nullptr && processes_ > 1) {
    const Clock::time_point all_reduce_start = Clock::now();
    float loss_sum = static_cast<float>(loss);
    SF_RETURN_IF_ERROR(communicator_->AllReduceSum(&loss_sum, 1));
    loss = loss_sum / processes_;
    times_.all_reduce_seconds += SecondsSince(all_reduce_start);
  }

  Clock::time_point phase = Clock::now();
  SF_RETURN_IF_ERROR(AverageReplicaState());
  times_.reduce_seconds += SecondsSince(phase);

  phase = Clock::now();
  // Every device applies the same update to its own copy of the state.
  for (size_t k = 0; k < update_nets_.size(); ++k) {
    std::vector<Tensor>& device_sums = reduce && devices_ != nullptr
                                           ? devices_->sums(static_cast<int>(k))
                                           : summed;
    std::vector<Feed> feeds;
    for (size_t g = 0; g < grads_.size(); ++g) {
      feeds.push_back({grads_[g].grad, std::move(device_sums[g])});
    }
    SF_RETURN_IF_ERROR(
        executor_.Run(update_nets_[k], *device_scopes_[k], feeds, {}).status());
  }
  times_.update_seconds += SecondsSince(phase);
  ++times_.steps;
  return loss / replicas_;
}

bool DataParallelTrainer::SumsOnReplicaThreads() const {
  return step_on_replicas_;
}

void DataParallelTrainer::SumCompletedBucket(int bucket) {
  // A large last bucket completes as the backward passes end: every
  // replica sums a part of it then (SumLastBucketPart).
  if (!SumsOnReplicaThreads() ||
      (bucket == reducer_.buckets() - 1 && SplitLastBucket())) {
    return;
  }
  Span sum{Clock::now(), {}};
  reducer_.ReduceBucket(bucket);
  sum.end = Clock::now();
  bucket_sums_[bucket] = sum;
  reducer_.MarkSummed(bucket);
}

bool DataParallelTrainer::SplitLastBucket() const {
  const int last = reducer_.buckets() - 1;
  return replicas_ > 1 &&
         (reducer_.bucket_end(last) - reducer_.bucket_begin(last)) *
                 int64_t{sizeof(float)} >=
             kSplitLastBucketBytes;
}

void DataParallelTrainer::SumLastBucketPart(int replica) {
  if (!SplitLastBucket()) return;
  const int last = reducer_.buckets() - 1;
  // False: another replica failed, and the step stops.
  if (!reducer_.WaitForBucket(last)) return;
  Span part{Clock::now(), {}};
  reducer_.ReduceBucketPart(last, replica, replicas_);
  part.end = Clock::now();
  last_bucket_parts_[replica] = part;
  if (last_bucket_parts_done_.fetch_add(1) + 1 < replicas_) return;
  // The last part: the bucket's span is from the first part's start to
  // the last one's end.
  Span whole = last_bucket_parts_[0];
  for (const Span& each : last_bucket_parts_) {
    whole.start = std::min(whole.start, each.start);
    whole.end = std::max(whole.end, each.end);
  }
  bucket_sums_[last] = whole;
  reducer_.MarkSummed(last);
}

absl::Status DataParallelTrainer::TrainUntil(
    const Dataset& train, int64_t until,
    const std::function<void(const StepReport&)>& report) {
  const int64_t per_epoch = StepsPerEpoch(train);
  SF_CHECK(per_epoch > 0,
           "the training set has %d examples, fewer than one batch of %d",
           train.size(), options_.batch_size);
  SF_ASSIGN_OR_RETURN(int64_t steps, step());
  const int64_t first = steps;
  const Clock::time_point start = Clock::now();
  std::vector<int64_t> order;
  int64_t order_epoch = -1;
  while (steps < until) {
    const int64_t epoch = steps / per_epoch;
    if (epoch != order_epoch) {
      order = EpochOrder(train.size(), options_.seed, epoch);
      order_epoch = epoch;
    }
    const int64_t begin = (steps % per_epoch) * options_.batch_size;
    SF_ASSIGN_OR_RETURN(
        Dataset batch,
        Gather(train, std::vector<int64_t>(
                          order.begin() + begin,
                          order.begin() + begin + options_.batch_size)));
    SF_ASSIGN_OR_RETURN(double loss, TrainStep(batch));
    ++steps;
    if (report != nullptr) {
      StepReport r;
      r.step = steps;
      r.total_steps = until;
      r.epoch = epoch;
      r.epochs = options_.epochs;
      r.loss = loss;
      const double seconds = SecondsSince(start);
      const double done = static_cast<double>(steps - first);
      r.examples_per_second =
          seconds > 0 ? done * options_.batch_size / seconds : 0;
      r.seconds_left = seconds / done * (until - steps);
      report(r);
    }
  }
  return absl::OkStatus();
}

absl::Status DataParallelTrainer::Fit(
    const Dataset& train, const Dataset& test,
    const std::function<void(const StepReport&)>& on_step,
    const std::function<void(const EvalReport&)>& on_epoch) {
  const int64_t per_epoch = StepsPerEpoch(train);
  SF_ASSIGN_OR_RETURN(int64_t steps, step());
  for (int64_t epoch = steps / std::max<int64_t>(per_epoch, 1);
       epoch < options_.epochs; ++epoch) {
    SF_RETURN_IF_ERROR(TrainUntil(train, (epoch + 1) * per_epoch, on_step));
    SF_ASSIGN_OR_RETURN(EvalReport report, Evaluate(test));
    report.epoch = epoch + 1;
    if (!options_.checkpoint_dir.empty()) {
      SF_RETURN_IF_ERROR(SaveCheckpoint());
    }
    if (on_epoch != nullptr) on_epoch(report);
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
