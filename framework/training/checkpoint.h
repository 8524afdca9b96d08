// Training checkpoints: every persistable variable of a training net
// (parameters, optimizer state, the step counter) in one parameter file per
// step, written atomically, checksummed, the newest few kept. A trainer's
// checkpoint also records its optimizer and which variables are that
// optimizer's state (the tensor "@CHECKPOINT_INFO", text), so that resuming
// with another optimizer is refused rather than silently dropping or
// inventing state.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_CHECKPOINT_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_CHECKPOINT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/scope.h"
#include "platform/place.h"

namespace scopeflow {

// The optimizer whose state a checkpoint holds.
struct OptimizerLayout {
  std::string type;  // "sgd", "momentum", "adam"
  // The variables of its state, sorted (the moments, velocities).
  std::vector<std::string> state;
};

// The variable a checkpoint's OptimizerLayout is saved as.
inline constexpr char kCheckpointInfoVar[] = "@CHECKPOINT_INFO";

struct CheckpointFile {
  std::string path;
  int64_t step = 0;
  // Set by RestoreLatestCheckpoint: the optimizer the file records (none
  // for a checkpoint written without one), and the variables of its state
  // left out because RestoreOptions::reset_optimizer_state asked so.
  std::optional<OptimizerLayout> optimizer;
  std::vector<std::string> skipped;
};

struct RestoreOptions {
  // When set, the checkpoint must hold exactly these variables (the
  // resuming trainer's state), and, if it records its optimizer, the same
  // optimizer with the same state layout as `optimizer`.
  std::optional<std::vector<std::string>> expected_names;
  std::optional<OptimizerLayout> optimizer;
  // Keep the parameters and the step, not the optimizer's state: the
  // checkpoint's optimizer state is skipped and the variables of
  // `optimizer`'s state keep what the scope holds (fresh from a startup
  // net). Needed to resume with another optimizer.
  bool reset_optimizer_state = false;
};

// "DIR/ckpt-000000001234.sfparams" for step 1234.
std::string CheckpointPath(const std::string& dir, int64_t step);

// The checkpoints in `dir`, oldest first (none if `dir` does not exist).
absl::StatusOr<std::vector<CheckpointFile>> ListCheckpoints(
    const std::string& dir);

// Writes the variables `names` of `scope` as the checkpoint of `step`,
// creating `dir` if needed. The file appears whole or not at all (a
// temporary file, fsync, rename), so an interrupted save leaves the earlier
// checkpoints as they were; after it, all but the newest `keep` are removed.
// With `optimizer`, records it in the file too.
absl::Status SaveCheckpoint(const Scope& scope,
                            const std::vector<std::string>& names,
                            const std::string& dir, int64_t step, int keep,
                            const OptimizerLayout* optimizer = nullptr);

// Loads the newest checkpoint of `dir` into `scope`, verifying every
// checksum before changing anything, and returns it; nullopt if there is
// none. A damaged newest checkpoint is an error that names it and the
// previous one, rather than a silent fallback that would repeat training
// the user thinks was saved.
absl::StatusOr<std::optional<CheckpointFile>> RestoreLatestCheckpoint(
    const std::string& dir, Scope& scope, const Place& place,
    const RestoreOptions& options = {});

// An exclusive lock on a checkpoint folder (flock on DIR/scopeflow.lock),
// held by the one trainer that writes it; the kernel drops it when the
// process ends, however it ends. Thread-compatible; the lock is per open
// file, so a second lock of one folder fails in the same process too.
class CheckpointDirLock {
 public:
  // Creates `dir` if needed. FailedPrecondition naming the folder and the
  // holder's process id when another holds the lock.
  static absl::StatusOr<std::unique_ptr<CheckpointDirLock>> Acquire(
      const std::string& dir);
  ~CheckpointDirLock();
  CheckpointDirLock(const CheckpointDirLock&) = delete;
  CheckpointDirLock& operator=(const CheckpointDirLock&) = delete;

 private:
  explicit CheckpointDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_CHECKPOINT_H_
