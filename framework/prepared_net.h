// PreparedNet: a block of a net as Prepare made it, ready to run.
#ifndef SCOPEFLOW_FRAMEWORK_PREPARED_NET_H_
#define SCOPEFLOW_FRAMEWORK_PREPARED_NET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/memory/memory_plan_cache.h"
#include "framework/op_context.h"
#include "platform/place.h"

namespace scopeflow {

class PassPipeline;
class PreparedNetBuilder;
class RunScopeCache;

// A block validated for one place: ops bound to their specs, attributes
// and kernels, variable names resolved to indices, inferred shapes.
// Immutable, so one PreparedNet may run on many threads at once. Copies
// share the block as written (as_written_), the run scopes kept for reuse
// (run_scopes_) and the memory plans (memory_plans_), both thread-safe.
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
  // Whether persistable variable v is written by the net before any op
  // reads it (so a run creates it in its scope, as a startup net does).
  bool IsWrittenFirst(int v) const { return written_[v] && !read_first_[v]; }
  // The variables holding lists of scopes (StepScopes).
  const std::vector<std::string>& scope_lists() const { return scope_lists_; }
  // Whether variable v is a tensor that lives for one run (in the run's
  // scope), not a parameter, an enclosing block's variable or a list of
  // scopes.
  bool IsTemporary(int v) const {
    return !persistable_[v] && !external_[v] && is_tensor_[v];
  }
  // Whether a pass of Prepare changed the block (framework/passes/pass.h,
  // PrepareOptions); ops() and var_names() are then the rewritten block's.
  bool rewritten() const { return as_written_ != nullptr; }
  // The names of the passes that changed the block, in the order they ran
  // (empty where none did).
  const std::vector<std::string>& passes() const { return passes_; }
  // The plan for a run fetching `fetches`: this one, or the block as
  // written where a pass renamed or removed a fetched variable.
  const PreparedNet& PlanFor(absl::Span<const std::string> fetches) const;

  // What a run binds and frees, worked out here so that runs do not.
  // The tensors a run binds from the caller's scope (of enclosing blocks,
  // or persistable), and the net's inputs: a run visits these, not every
  // variable of the net.
  const std::vector<int>& scope_bound() const { return scope_bound_; }
  const std::vector<int>& input_vars() const { return input_vars_; }
  bool is_input(int v) const { return is_input_[v]; }
  // False for a list of scopes.
  bool is_tensor(int v) const { return is_tensor_[v]; }
  // Whether some op of the block writes variable v; whether a persistable
  // one is read before any op writes it (it must then be in the scope).
  bool is_written(int v) const { return written_[v]; }
  bool is_read_first(int v) const { return read_first_[v]; }
  // The temporaries no op after ops()[position] uses.
  const std::vector<int>& dies_after(size_t position) const {
    return dies_after_[position];
  }
  // Some op infers shapes at run time (Prepare did not know them all) or
  // is a control-flow op, whose outputs a run reads back: runs then work
  // on a copy of var_infos(); otherwise they read var_infos() itself.
  bool infers_at_run() const { return infers_at_run_; }
  // The run scopes kept for reuse; shared by copies, thread-safe.
  RunScopeCache& run_scopes() const { return *run_scopes_; }
  // The memory plans of its temporaries (framework/memory/memory_plan.h)
  // for the shapes runs were fed, made by the first run of each; shared by
  // copies, thread-safe.
  MemoryPlanCache& memory_plans() const { return *memory_plans_; }

 private:
  friend class PreparedNetBuilder;
  friend class PassPipeline;

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
  std::vector<std::vector<int>> dies_after_;
  std::vector<int> scope_bound_;
  std::vector<int> input_vars_;
  bool infers_at_run_ = false;
  std::shared_ptr<RunScopeCache> run_scopes_;
  std::shared_ptr<MemoryPlanCache> memory_plans_;
  // For a block a pass changed: the block as written, for runs that fetch
  // a variable a pass renamed or removed.
  std::shared_ptr<const PreparedNet> as_written_;
  std::vector<std::string> passes_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PREPARED_NET_H_
