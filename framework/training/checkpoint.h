// Training checkpoints: every persistable variable of a training net
// (parameters, optimizer state, the step counter) in one parameter file per
// step, written atomically, checksummed, the newest few kept.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_CHECKPOINT_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_CHECKPOINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/scope.h"
#include "platform/place.h"

namespace scopeflow {

struct CheckpointFile {
  std::string path;
  int64_t step = 0;
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
absl::Status SaveCheckpoint(const Scope& scope,
                            const std::vector<std::string>& names,
                            const std::string& dir, int64_t step, int keep);

// Loads the newest checkpoint of `dir` into `scope`, verifying every
// checksum before changing anything, and returns it; nullopt if there is
// none. A damaged newest checkpoint is an error that names it and the
// previous one, rather than a silent fallback that would repeat training
// the user thinks was saved.
absl::StatusOr<std::optional<CheckpointFile>> RestoreLatestCheckpoint(
    const std::string& dir, Scope& scope, const Place& place);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_CHECKPOINT_H_
