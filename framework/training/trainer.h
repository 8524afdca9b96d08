// The training loop: a startup net fills the parameters, a training net
// (the forward net plus its backward pass and optimizer updates) runs over
// shuffled batches, an inference copy of the forward net evaluates, and
// checkpoints let a stopped run resume exactly where it was.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_TRAINER_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_TRAINER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/executor.h"
#include "framework/scope.h"
#include "framework/training/checkpoint.h"
#include "framework/training/dataset.h"
#include "framework/training/optimizer.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

struct TrainerOptions {
  // Variables of the forward net: the loss to minimise, an optional
  // accuracy metric ("" for none), and the two inputs a batch feeds.
  std::string loss = "loss";
  std::string accuracy = "accuracy";
  // Empty names: the caller feeds every batch itself (TrainStep), by name.
  std::string features_feed = "image";
  std::string labels_feed = "label";
  int64_t batch_size = 64;
  int64_t epochs = 10;
  // Seeds the order of the examples in each epoch.
  uint64_t seed = 1;
  OptimizerConfig optimizer;
  // Where checkpoints go ("" for none) and how many are kept. The trainer
  // locks the folder (CheckpointDirLock) from its first Resume or
  // SaveCheckpoint on, so a second trainer on it fails instead of
  // overwriting this one's steps.
  std::string checkpoint_dir;
  int keep_checkpoints = 3;
  // Resume keeps the parameters and the step but starts the optimizer's
  // state afresh; needed to resume a checkpoint of another optimizer.
  bool reset_optimizer_state = false;
  // Off only for the processes of a data-parallel run that read the
  // checkpoints rank 0 writes.
  bool lock_checkpoint_dir = true;
  // Where the nets run and the parameters live.
  Place place = CPUPlace();
  // How the executor runs the nets (a trace, the numerics check).
  RunOptions run;
};

struct StepReport {
  int64_t step = 0;  // steps done so far
  int64_t total_steps = 0;
  int64_t epoch = 0;  // 0-based epoch of this step
  int64_t epochs = 0;
  double loss = 0;
  double examples_per_second = 0;
  double seconds_left = 0;
};

struct EvalReport {
  int64_t epoch = 0;  // epochs done when evaluated
  int64_t examples = 0;
  double loss = 0;
  double accuracy = 0;  // 0 when the net has no accuracy variable
  double seconds = 0;
};

// Copy of `net` for inference: every op with an "is_test" attribute gets it
// set to true (dropout keeps all units, batch_norm uses running statistics),
// and control-flow ops lose their list-of-scopes outputs (their steps'
// values are freed as each step ends instead of kept for a gradient).
NetDef ForInference(const NetDef& net);

class Trainer {
  // Only Create constructs trainers.
  class Key {
    friend class Trainer;
    Key() = default;
  };

 public:
  explicit Trainer(Key) {}

  // Builds the training and evaluation nets and prepares all three; errors
  // name the net and op at fault.
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(
      const NetDef& startup, const NetDef& main, const TrainerOptions& options);

  // Runs the startup net: fresh parameters and optimizer state.
  absl::Status Initialize();
  // Loads the newest checkpoint of options.checkpoint_dir over the current
  // state; false if there is none. The checkpoint must hold exactly this
  // trainer's state and, when it records its optimizer, have the same one
  // (see TrainerOptions::reset_optimizer_state).
  absl::StatusOr<bool> Resume();
  absl::Status SaveCheckpoint();

  // The steps done so far (the step counter in the scope).
  absl::StatusOr<int64_t> step() const;
  int64_t StepsPerEpoch(const Dataset& train) const;

  // Trains from the current step up to step `until`. Step s takes batch
  // s % StepsPerEpoch of epoch s / StepsPerEpoch's order, so the batches do
  // not depend on where a run was stopped and resumed.
  absl::Status TrainUntil(const Dataset& train, int64_t until,
                          const std::function<void(const StepReport&)>& report);
  absl::StatusOr<EvalReport> Evaluate(const Dataset& data);

  // One training step on a batch the caller made (from a data iterator of
  // its own): `feeds` by name, as the training net's inputs want them.
  // Returns the batch's loss, computed before the update.
  absl::StatusOr<double> TrainStep(absl::Span<const Feed> feeds);
  // The loss and the accuracy (0 without an accuracy variable) of the
  // inference net on one batch the caller made; changes nothing.
  absl::StatusOr<std::pair<double, double>> EvaluateBatch(
      absl::Span<const Feed> feeds);

  // Trains options.epochs epochs from the current step, evaluating on
  // `test` and saving a checkpoint after each epoch.
  absl::Status Fit(const Dataset& train, const Dataset& test,
                   const std::function<void(const StepReport&)>& on_step,
                   const std::function<void(const EvalReport&)>& on_epoch);

  Scope& scope() { return scope_; }
  const NetDef& train_net() const { return train_net_; }
  const NetDef& startup_net() const { return startup_net_; }
  // Everything a checkpoint holds.
  const std::vector<std::string>& state_names() const { return state_names_; }
  // The optimizer and the variables of its state.
  const OptimizerLayout& optimizer_layout() const { return optimizer_layout_; }
  // What the last Resume found: the checkpoint's optimizer and what a reset
  // left out.
  const std::optional<CheckpointFile>& resumed_from() const {
    return resumed_from_;
  }

 private:
  std::vector<Feed> BatchFeeds(const Dataset& batch) const;

  TrainerOptions options_;
  NetDef startup_net_;
  NetDef train_net_;
  NetDef eval_net_;
  Executor executor_;
  PreparedNet startup_;
  PreparedNet train_;
  PreparedNet eval_;
  absl::Status LockCheckpointDir();

  std::vector<std::string> state_names_;
  OptimizerLayout optimizer_layout_;
  std::optional<CheckpointFile> resumed_from_;
  std::unique_ptr<CheckpointDirLock> checkpoint_lock_;
  Scope scope_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_TRAINER_H_
