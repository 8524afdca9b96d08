// The Executor: validates a block of a net once (Prepare), then runs it
// against scopes any number of times, from any number of threads (Run).
#ifndef SCOPEFLOW_FRAMEWORK_EXECUTOR_H_
#define SCOPEFLOW_FRAMEWORK_EXECUTOR_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/block_runner.h"
#include "framework/op_context.h"
#include "framework/passes/layout_rewrite.h"
#include "framework/run_scope_cache.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

class PreparedNetBuilder;

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
  // The index of the block this was prepared from.
  int block_index() const { return block_index_; }
  // For a block of a control-flow op: the variables of enclosing blocks it
  // reads and writes (through lookup in the scope it runs against).
  const std::vector<std::string>& outer_reads() const { return outer_reads_; }
  const std::vector<std::string>& outer_writes() const { return outer_writes_; }
  // Whether variable v lives in an enclosing block's scope.
  bool is_external(int v) const { return external_[v]; }
  // Whether variable v is a tensor that lives for one run (in the run's
  // scope), not a parameter, an enclosing block's variable or a list of
  // scopes.
  // Whether persistable variable v is written by the net before any op
  // reads it (so a run creates it in its scope, as a startup net does).
  bool IsWrittenFirst(int v) const { return written_[v] && !read_first_[v]; }
  // The variables holding lists of scopes (StepScopes).
  const std::vector<std::string>& scope_lists() const { return scope_lists_; }
  bool IsTemporary(int v) const {
    return !persistable_[v] && !external_[v] && is_tensor_[v];
  }
  // Whether the layout rewrite or the op fusion changed the block
  // (ExecutorOptions::channels_last, fuse_ops); ops() and var_names() are
  // then the rewritten block's.
  bool rewritten() const { return as_written_ != nullptr; }
  // The plan for a run fetching `fetches`: this one, or the block as
  // written where the rewrite renamed or the fusion removed a fetched
  // variable.
  const PreparedNet& PlanFor(absl::Span<const std::string> fetches) const;

 private:
  friend class Executor;
  friend class PreparedNetBuilder;

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
  int block_index_ = 0;
  // Variables of enclosing blocks, found by name in the scope at each run.
  std::vector<bool> external_;
  // False for lists of scopes (StepScopes), which kernels reach by name.
  std::vector<bool> is_tensor_;
  std::vector<std::string> scope_lists_;
  std::vector<std::string> outer_reads_;
  std::vector<std::string> outer_writes_;
  // Per position in ops_: the temporaries no later op uses, freed after it.
  std::vector<std::vector<int>> dies_after_;
  // The tensors a run binds from the caller's scope (of enclosing blocks,
  // or persistable), and the net's inputs: a run visits these, not every
  // variable of the net.
  std::vector<int> scope_bound_;
  std::vector<int> input_vars_;
  // Some op infers shapes at run time (Prepare did not know them all) or
  // is a control-flow op, whose outputs a run reads back: runs then work
  // on a copy of infos_; otherwise they read infos_ itself.
  bool infers_at_run_ = false;
  // Shared by copies of this PreparedNet; thread-safe.
  std::shared_ptr<RunScopeCache> run_scopes_;
  // For a block the layout rewrite or the fusion changed: the block as
  // written, for runs that fetch a variable they renamed or removed.
  std::shared_ptr<const PreparedNet> as_written_;
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
  // For serving: a pooled run scope keeps its temporaries' buffers when the
  // run ends (and none is freed after its last reader), so that the next
  // run on it with the same shapes allocates nothing. Costs one run's
  // temporaries of memory per idle run scope. Fed tensors are still let go
  // (they are the caller's), and a fetched tensor the caller still holds is
  // never written again: that run allocates a new buffer instead.
  bool keep_buffers_between_runs = false;
  // For serving: look the persistable variables up in the parent scope on
  // a pooled run scope's first run only, and reuse what was found on its
  // later runs. Only for a parent scope in which nothing erases or
  // replaces a parameter while the net is in use (a Predictor's root).
  bool resolve_persistables_once = false;
  // On the CPU, run chains of conv2d, pool2d and elementwise ops on
  // channels-last (NHWC) or channel-blocked (NCHW8c, NCHW16c) activations, as
  // oneDNN's convolutions want them, instead of reordering around each
  // convolution (framework/passes/layout_rewrite.h). A run that fetches a variable
  // the rewrite renamed runs the block as written. Off, a PreparedNet's ops
  // and variables are exactly the net's (as analyses of a net expect).
  bool channels_last = true;
  // The layout channels_last keeps activations in; kAuto: the one this
  // CPU's convolutions run fastest on (PreferredCpuActivationLayout), or
  // NHWC where channel counts that do not fill its blocks would leave
  // convolutions out of a blocked one.
  ActivationLayout activation_layout = ActivationLayout::kAuto;
  // On every place, fuse a matrix product and the bias added to it, and an
  // fc and the relu after it, into one fc (framework/passes/op_fusion.h). A run that
  // fetches a variable the fusion removed runs the block as written.
  bool fuse_ops = true;

  // Options under which a PreparedNet's ops and variables are exactly the
  // net's, as analyses of a net expect: no layout rewrite, no fusion.
  static ExecutorOptions AsWritten() {
    ExecutorOptions options;
    options.channels_last = false;
    options.fuse_ops = false;
    return options;
  }
};

// Runs prepared nets. Thread-safe: Prepare and Run may be called from any
// number of threads at once. Control-flow ops run their blocks through it
// as a BlockRunner.
class Executor final : public BlockRunner {
 public:
  explicit Executor(ExecutorOptions options = {}) : options_(options) {}

  // Validates block `block` of `net` for `place` and reports every problem
  // found, one per line, each naming the op (index and type) and the
  // variable: unknown op type, unknown or missing slot, missing, mistyped or
  // out-of-range attribute, a variable read before anything writes it (and
  // neither declared as an input nor persistable), shapes or dtypes that
  // inference finds incompatible, no kernel for the place and dtype.
  // The blocks of control-flow ops are prepared with them and checked the
  // same way: a name a block does not declare, and that an enclosing block
  // defines before the op, is that enclosing variable (found through the
  // scope at run time), and the op must list it among its inputs (read) or
  // outputs (written).
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
                                          RunProfile* profile) const;
  absl::StatusOr<std::vector<Tensor>> Run(
      const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches) const override {
    return Run(prepared, scope, feeds, fetches, /*profile=*/nullptr);
  }

  // Runs `prepared` with its temporaries as local variables of `scope`
  // itself, kept after the run (no tensor is freed early): how a
  // control-flow op runs a step whose values its gradient op reads later
  // in the same scope. Variables of enclosing blocks and persistable ones
  // are found by lookup from `scope`.
  absl::StatusOr<std::vector<Tensor>> RunInScope(
      const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches) const override;

 private:
  // Runs the ops with `tensors` resolved for the temporaries; `scope` is
  // where persistable and enclosing variables are found, `run_scope` the
  // scope control-flow ops see.
  absl::StatusOr<std::vector<Tensor>> RunResolved(
      const PreparedNet& prepared, Scope& scope, Scope& run_scope,
      std::vector<Tensor*> tensors, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches, RunProfile* profile,
      bool free_dead_tensors,
      std::vector<Tensor*>* persistables = nullptr) const;

  // Prepare without the layout rewrite and the fusion.
  absl::StatusOr<PreparedNet> PrepareAsWritten(const NetDef& net, int block,
                                               const Place& place) const;

  // `block` rewritten to the activation layout the options ask for
  // (layout_rewrite.h), or nullopt; `as_written` gives the variables'
  // channel counts.
  std::optional<LayoutRewrite> RewriteLayout(
      const BlockDef& block, const PreparedNet& as_written) const;

  ExecutorOptions options_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_EXECUTOR_H_
