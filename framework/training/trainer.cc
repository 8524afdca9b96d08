#include "framework/training/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "framework/training/checkpoint.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

absl::Status WithNet(const absl::Status& status, absl::string_view what) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(what, ": ", status.message()));
}

double Scalar(const Tensor& fetched) {
  // A fetch of a run on a device: one value to read, so one small copy.
  absl::StatusOr<Tensor> host = fetched.place().is_cpu()
                                    ? absl::StatusOr<Tensor>(fetched)
                                    : fetched.CopyTo(CPUPlace());
  if (!host.ok()) return std::nan("");
  const Tensor& tensor = *host;
  switch (tensor.dtype()) {
    case kFloat32:
      return tensor.data<float>()[0];
    case kFloat64:
      return tensor.data<double>()[0];
    default:
      return 0;
  }
}

}  // namespace

NetDef ForInference(const NetDef& net) {
  NetDef copy = net;
  for (BlockDef& block : *copy.mutable_blocks()) {
    for (OpDef& op : *block.mutable_ops()) {
      const OpSpec* spec = OpRegistry::Global().Find(op.type());
      if (spec == nullptr) continue;
      // A control-flow op without its list of scopes runs each step in a
      // scope freed at once: nothing is kept for a gradient.
      auto* outputs = op.mutable_outputs();
      for (int s = outputs->size() - 1; s >= 0; --s) {
        const int slot = spec->OutputIndex(outputs->Get(s).slot());
        if (slot >= 0 && spec->outputs()[slot].scopes) {
          outputs->DeleteSubrange(s, 1);
        }
      }
      if (spec->FindAttr("is_test") == nullptr) continue;
      AttrDef* is_test = nullptr;
      for (AttrDef& attr : *op.mutable_attrs()) {
        if (attr.name() == "is_test") is_test = &attr;
      }
      if (is_test == nullptr) {
        is_test = op.add_attrs();
        is_test->set_name("is_test");
      }
      is_test->set_b(true);
    }
  }
  return copy;
}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(
    const NetDef& startup, const NetDef& main, const TrainerOptions& options) {
  SF_CHECK(options.batch_size > 0, "batch size must be positive, got %d",
           options.batch_size);
  SF_CHECK(options.epochs >= 0, "epochs must be >= 0, got %d", options.epochs);
  auto trainer = std::make_unique<Trainer>(Key());
  trainer->options_ = options;
  trainer->startup_net_ = startup;
  trainer->train_net_ = main;
  trainer->eval_net_ = ForInference(main);
  SF_RETURN_IF_ERROR(WithNet(
      AppendTrainingOps(trainer->train_net_, trainer->startup_net_,
                        options.loss, options.optimizer)
          .status(),
      absl::StrCat("building the training net from \"", main.name(), "\"")));
  ExecutorOptions executor_options;
  executor_options.run = options.run;
  trainer->executor_ = Executor(executor_options);
  const Executor& executor = trainer->executor_;
  SF_ASSIGN_OR_RETURN(trainer->startup_, executor.Prepare(trainer->startup_net_,
                                                          0, options.place));
  SF_ASSIGN_OR_RETURN(trainer->train_,
                      executor.Prepare(trainer->train_net_, 0, options.place));
  SF_ASSIGN_OR_RETURN(trainer->eval_,
                      executor.Prepare(trainer->eval_net_, 0, options.place));
  for (const std::string& feed : {options.features_feed, options.labels_feed}) {
    if (feed.empty()) continue;
    const auto& inputs = trainer->train_.input_names();
    SF_CHECK(std::find(inputs.begin(), inputs.end(), feed) != inputs.end(),
             "net \"%s\" has no input \"%s\" to feed (its inputs: %s)",
             main.name(), feed, absl::StrJoin(inputs, ", "));
  }
  if (!options.accuracy.empty()) {
    SF_CHECK(trainer->eval_.VarIndex(options.accuracy) >= 0,
             "net \"%s\" has no accuracy variable \"%s\" (pass an empty "
             "name if it computes none)",
             main.name(), options.accuracy);
  }
  absl::flat_hash_set<std::string> forward_state;
  for (const VarDef& var : main.blocks(0).vars()) {
    if (var.persistable()) forward_state.insert(var.name());
  }
  trainer->optimizer_layout_.type = options.optimizer.type;
  for (const VarDef& var : trainer->train_net_.blocks(0).vars()) {
    if (!var.persistable()) continue;
    trainer->state_names_.push_back(var.name());
    // What AppendTrainingOps declared, less the counter and the rate the
    // schedule recomputes: the optimizer's own state.
    if (!forward_state.contains(var.name()) && var.name() != kStepVar &&
        var.name() != kLearningRateVar) {
      trainer->optimizer_layout_.state.push_back(var.name());
    }
  }
  std::sort(trainer->optimizer_layout_.state.begin(),
            trainer->optimizer_layout_.state.end());
  return trainer;
}

absl::Status Trainer::Initialize() {
  return WithNet(executor_.Run(startup_, scope_, {}, {}).status(),
                 absl::StrCat("startup net \"", startup_net_.name(), "\""));
}

absl::StatusOr<bool> Trainer::Resume() {
  SF_CHECK(!options_.checkpoint_dir.empty(),
           "cannot resume: no checkpoint directory given");
  SF_RETURN_IF_ERROR(LockCheckpointDir());
  RestoreOptions restore;
  restore.expected_names = state_names_;
  restore.optimizer = optimizer_layout_;
  restore.reset_optimizer_state = options_.reset_optimizer_state;
  SF_ASSIGN_OR_RETURN(resumed_from_,
                      RestoreLatestCheckpoint(options_.checkpoint_dir, scope_,
                                              options_.place, restore));
  return resumed_from_.has_value();
}

absl::Status Trainer::SaveCheckpoint() {
  SF_ASSIGN_OR_RETURN(int64_t steps, step());
  SF_RETURN_IF_ERROR(LockCheckpointDir());
  return scopeflow::SaveCheckpoint(
      scope_, state_names_, options_.checkpoint_dir, steps,
      options_.keep_checkpoints, &optimizer_layout_);
}

absl::Status Trainer::LockCheckpointDir() {
  if (checkpoint_lock_ != nullptr || !options_.lock_checkpoint_dir) {
    return absl::OkStatus();
  }
  SF_ASSIGN_OR_RETURN(checkpoint_lock_,
                      CheckpointDirLock::Acquire(options_.checkpoint_dir));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Trainer::step() const {
  const Variable* var = scope_.FindVar(kStepVar);
  SF_CHECK_CODE(var != nullptr, absl::StatusCode::kFailedPrecondition,
                "the step counter \"%s\" is not in the scope: initialise or "
                "resume first",
                kStepVar);
  SF_ASSIGN_OR_RETURN(const Tensor* counter, var->Get<Tensor>());
  SF_CHECK(counter->dtype() == kInt64 && counter->numel() == 1,
           "the step counter \"%s\" holds %s, not one int64", kStepVar,
           counter->DebugString());
  SF_ASSIGN_OR_RETURN(const Tensor host, counter->CopyTo(CPUPlace()));
  return host.data<int64_t>()[0];
}

int64_t Trainer::StepsPerEpoch(const Dataset& train) const {
  return train.size() / options_.batch_size;
}

std::vector<Feed> Trainer::BatchFeeds(const Dataset& batch) const {
  return {{options_.features_feed, batch.features},
          {options_.labels_feed, batch.labels}};
}

absl::Status Trainer::TrainUntil(
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
  const std::vector<std::string> fetch = {options_.loss};
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
    SF_ASSIGN_OR_RETURN(
        std::vector<Tensor> out,
        executor_.Run(train_, scope_, BatchFeeds(batch), fetch));
    ++steps;
    if (report != nullptr) {
      StepReport r;
      r.step = steps;
      r.total_steps = until;
      r.epoch = epoch;
      r.epochs = options_.epochs;
      r.loss = Scalar(out[0]);
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

absl::StatusOr<EvalReport> Trainer::Evaluate(const Dataset& data) {
  const Clock::time_point start = Clock::now();
  EvalReport report;
  std::vector<std::string> fetch = {options_.loss};
  if (!options_.accuracy.empty()) fetch.push_back(options_.accuracy);
  for (int64_t begin = 0; begin < data.size(); begin += options_.batch_size) {
    const int64_t end = std::min(data.size(), begin + options_.batch_size);
    SF_ASSIGN_OR_RETURN(Dataset batch, Rows(data, begin, end));
    SF_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        executor_.Run(eval_, scope_, BatchFeeds(batch), fetch));
    const double n = static_cast<double>(end - begin);
    report.loss += Scalar(out[0]) * n;
    if (out.size() > 1) report.accuracy += Scalar(out[1]) * n;
    report.examples += end - begin;
  }
  if (report.examples > 0) {
    report.loss /= report.examples;
    report.accuracy /= report.examples;
  }
  report.seconds = SecondsSince(start);
  return report;
}

absl::StatusOr<double> Trainer::TrainStep(absl::Span<const Feed> feeds) {
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                      executor_.Run(train_, scope_, feeds, {options_.loss}));
  return Scalar(out[0]);
}

absl::StatusOr<std::pair<double, double>> Trainer::EvaluateBatch(
    absl::Span<const Feed> feeds) {
  std::vector<std::string> fetch = {options_.loss};
  if (!options_.accuracy.empty()) fetch.push_back(options_.accuracy);
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                      executor_.Run(eval_, scope_, feeds, fetch));
  return std::make_pair(Scalar(out[0]), out.size() > 1 ? Scalar(out[1]) : 0.0);
}

absl::Status Trainer::Fit(
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
