// The Executor: validates a block of a net once (Prepare), then runs it
// against scopes any number of times, from any number of threads (Run).
#ifndef SCOPEFLOW_FRAMEWORK_EXECUTOR_H_
#define SCOPEFLOW_FRAMEWORK_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/run_scope_cache.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// A block validated for one place: ops bound to their specs, attributes
// and kernels, variable names resolved to indices, inferred shapes.
// Immutable, so one PreparedNet may run on many threads at once.
class PreparedNet {
 public:
  const Place& place() const { return place_; }
  const std::vector<PreparedOp>& ops() const { return ops_; }
  const std::vector<std::string>& var_names() const { return names_; }
  // What Prepare inferred for each variable (dimensions may be -1).
  const std::vector<VarInfo>& var_infos() const { return infos_; }
  // The variables a run must be fed: declared, not persistable, and read
  // before any op writes them.
  const std::vector<std::string>& input_names() const { return input_names_; }
  // -1 if the net has no variable `name`.
  int VarIndex(absl::string_view name) const;

 private:
  friend class Executor;

  Place place_;
  std::vector<PreparedOp> ops_;
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, int> index_;
  std::vector<VarInfo> infos_;
  std::vector<bool> persistable_;
  std::vector<bool> written_;  // by some op of the block
  // Persistable and read by an op before any op writes it: must be in the
  // scope before the run.
  std::vector<bool> read_first_;
  std::vector<bool> is_input_;
  std::vector<std::string> input_names_;
  // Per position in ops_: the temporaries no later op uses, freed after it.
  std::vector<std::vector<int>> dies_after_;
  // Shared by copies of this PreparedNet; thread-safe.
  std::shared_ptr<RunScopeCache> run_scopes_;
};

struct Feed {
  std::string name;
  Tensor tensor;
};

// Time spent per op of a PreparedNet, added up over the runs given it.
struct RunProfile {
  struct OpTime {
    // Inference, output allocation, kernel and freeing.
    double total_seconds = 0;
    // The kernel alone; the rest of total_seconds is framework overhead.
    double kernel_seconds = 0;
  };
  // Indexed like PreparedNet::ops().
  std::vector<OpTime> ops;
};

struct ExecutorOptions {
  // Free each temporary tensor after the last op that uses it, so a deep
  // net's memory stays bounded. Off keeps every temporary until the run
  // ends (for debugging).
  bool free_dead_tensors = true;
};

// Runs prepared nets. Thread-safe: Prepare and Run may be called from any
// number of threads at once.
class Executor {
 public:
  explicit Executor(ExecutorOptions options = {}) : options_(options) {}

  // Validates block `block` of `net` for `place` and reports every problem
  // found, one per line, each naming the op (index and type) and the
  // variable: unknown op type, unknown or missing slot, missing, mistyped or
  // out-of-range attribute, a variable read before anything writes it (and
  // neither declared as an input nor persistable), shapes or dtypes that
  // inference finds incompatible, no kernel for the place and dtype.
  absl::StatusOr<PreparedNet> Prepare(const NetDef& net, int block,
                                      const Place& place) const;

  // Runs `prepared` once. Persistable variables live in `scope`: those the
  // net writes are created there (a startup net fills parameters so), those
  // it only reads must be there already. Every other variable lives in a
  // child scope of `scope` for this run, and its tensors are freed when the
  // run ends. Those child scopes are kept and reused by later runs on
  // `scope` (a few per scope, as many as ran at once), so that a run does
  // not create its variables again. Feeds are bound without copying. Returns
  // the fetched tensors in the order asked. With a `profile`, each op's time is
  // added to it.
  absl::StatusOr<std::vector<Tensor>> Run(const PreparedNet& prepared,
                                          Scope& scope,
                                          absl::Span<const Feed> feeds,
                                          absl::Span<const std::string> fetches,
                                          RunProfile* profile = nullptr) const;

 private:
  ExecutorOptions options_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_EXECUTOR_H_
