#include "framework/executor.h"

#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/check_numerics.h"
#include "framework/host_staging.h"
#include "framework/memory/infer_from_shapes.h"
#include "framework/memory/offload_run.h"
#include "framework/memory/run_arena.h"
#include "framework/run_buffer_pool.h"
#include "framework/run_scope_cache.h"
#include "framework/step_scopes.h"
#include "framework/var_info_checks.h"
#include "platform/cuda_runtime.h"
#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

// Takes a run scope from the net's cache and gives it back, emptied, when
// the run ends, whichever way it ends. Lists of scopes a control-flow op
// left in it are cleared first, deleting their scopes.
class RunScopeLease {
 public:
  RunScopeLease(RunScopeCache& cache, const PreparedNet& prepared,
                bool keep_buffers)
      : cache_(cache), prepared_(prepared), keep_buffers_(keep_buffers) {}
  ~RunScopeLease() {
    if (run_ == nullptr) return;
    for (const std::string& name : prepared_.scope_lists()) {
      Variable* var = run_->scope->FindLocalVar(name);
      if (var != nullptr) var->Clear();
    }
    if (keep_buffers_) {
      // The fed buffers are the caller's.
      for (const std::string& name : prepared_.input_names()) {
        Tensor* tensor = run_->tensors[prepared_.VarIndex(name)];
        if (tensor != nullptr) tensor->Clear();
      }
    }
    cache_.Release(std::move(run_), keep_buffers_);
  }
  absl::Status Acquire(Scope& parent) {
    const int n = static_cast<int>(prepared_.var_names().size());
    std::vector<bool> temporary(n);
    for (int v = 0; v < n; ++v) temporary[v] = prepared_.IsTemporary(v);
    SF_ASSIGN_OR_RETURN(
        run_, cache_.Acquire(parent, prepared_.var_names(), temporary));
    return absl::OkStatus();
  }
  RunScope& get() const { return *run_; }

 private:
  RunScopeCache& cache_;
  const PreparedNet& prepared_;
  const bool keep_buffers_;
  std::unique_ptr<RunScope> run_;
};

// An output updated in place keeps its input's buffer; if someone else
// also views that buffer (a tensor fetched earlier), the update goes to a
// private copy so what they hold does not change under them.
absl::Status PrepareInPlace(const PreparedOp& op, int v, const VarInfo& info,
                            const std::vector<std::string>& names,
                            Tensor& tensor) {
  SF_CHECK(tensor.initialized() && tensor.dtype() == info.dtype &&
               ShapeAdmits(info, tensor.dims()),
           "%s: variable \"%s\" is updated in place, so it must "
           "hold %s before the op; it holds %s",
           OpName(op), names[v], InfoToString(info), tensor.DebugString());
  if (!tensor.OwnsBufferAlone()) {
    SF_ASSIGN_OR_RETURN(tensor, tensor.CopyTo(tensor.place()));
  }
  // The op writes the buffer with no Allocate to declare it: copies kept of
  // the old contents must not serve a later read.
  tensor.MarkWritten();
  return absl::OkStatus();
}

// The tensor `var` holds (made if it holds nothing), or an error naming
// the variable when it holds something else.
absl::StatusOr<Tensor*> TensorOf(Variable& var, const std::string& name) {
  absl::StatusOr<Tensor*> tensor = var.GetMutable<Tensor>();
  if (!tensor.ok()) {
    return absl::Status(
        tensor.status().code(),
        absl::StrCat("variable \"", name, "\": ", tensor.status().message()));
  }
  return *tensor;
}

// Persistable variable v's tensor in `scope`: created there if the net
// writes it before reading it, otherwise found by lookup.
absl::StatusOr<Tensor*> FindPersistable(const PreparedNet& prepared,
                                        Scope& scope, int v) {
  const std::string& name = prepared.var_names()[v];
  const bool created_here = prepared.IsWrittenFirst(v);
  Variable* var = nullptr;
  if (created_here) {
    var = scope.Var(name);
  } else {
    var = scope.FindVar(name);
    SF_CHECK_CODE(var != nullptr, absl::StatusCode::kFailedPrecondition,
                  "persistable variable \"%s\" is not in the scope: run the "
                  "startup net or load the parameters first",
                  name);
  }
  return TensorOf(*var, name);
}

// After a control-flow op, its tensor outputs hold what its blocks wrote:
// later ops infer from those, which must fit what Prepare inferred.
absl::Status ReadBackOutputs(const PreparedOp& op, const PreparedNet& prepared,
                             const std::vector<Tensor*>& tensors,
                             std::vector<VarInfo>& infos) {
  for (const auto& slot : op.outputs) {
    for (int v : slot) {
      if (tensors[v] == nullptr || !tensors[v]->initialized()) continue;
      const VarInfo& known = prepared.var_infos()[v];
      SF_CHECK((known.dtype == DATA_TYPE_UNSPECIFIED ||
                known.dtype == tensors[v]->dtype()) &&
                   ShapeAdmits(known, tensors[v]->dims()),
               "%s: output \"%s\" was inferred as %s, but its block "
               "wrote %s",
               OpName(op), prepared.var_names()[v], InfoToString(known),
               tensors[v]->DebugString());
      infos[v] = InfoOf(*tensors[v]);
    }
  }
  return absl::OkStatus();
}
// The cancellation of the outermost run on this thread that was given one:
// the blocks control-flow ops run inside it (on the same thread, through
// BlockRunner, which carries no cancellation) are checked against it too.
thread_local const RunCancellation* current_cancellation = nullptr;

class CancellationScope {
 public:
  explicit CancellationScope(const RunCancellation* cancellation)
      : outer_(current_cancellation) {
    if (cancellation != nullptr) current_cancellation = cancellation;
  }
  ~CancellationScope() { current_cancellation = outer_; }
  CancellationScope(const CancellationScope&) = delete;
  CancellationScope& operator=(const CancellationScope&) = delete;

 private:
  const RunCancellation* const outer_;
};

// OK, or the cancellation's error naming the op the run stops before.
absl::Status CheckBeforeOp(const RunCancellation& cancellation,
                           const PreparedNet& prepared, size_t position) {
  absl::Status status = cancellation.Check();
  if (status.ok()) return status;
  return absl::Status(
      status.code(),
      absl::StrFormat("%s; stopped before %s, step %d of %d of its block",
                      status.message(), OpName(prepared.ops()[position]),
                      position + 1, prepared.ops().size()));
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> Executor::Run(
    const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches, RunProfile* profile,
    const RunCancellation* cancellation) const {
  const CancellationScope cancellation_scope(cancellation);
  return Run(prepared, scope, feeds, fetches, profile);
}

absl::StatusOr<std::vector<Tensor>> Executor::Run(
    const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches, RunProfile* profile) const {
  return RunLeased(prepared, scope, feeds, fetches, profile,
                   /*observer=*/nullptr);
}

absl::StatusOr<std::vector<Tensor>> Executor::Run(
    const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches, OpObserver& observer) const {
  return RunLeased(prepared, scope, feeds, fetches, /*profile=*/nullptr,
                   &observer);
}

absl::StatusOr<std::vector<Tensor>> Executor::RunLeased(
    const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches, RunProfile* profile,
    OpObserver* observer) const {
  if (prepared.rewritten()) {
    const PreparedNet& plan = prepared.PlanFor(fetches);
    if (&plan != &prepared) {
      return RunLeased(plan, scope, feeds, fetches, profile, observer);
    }
  }
  RunScopeLease run_scope(prepared.run_scopes(), prepared,
                          options_.run.keep_buffers_between_runs);
  SF_RETURN_IF_ERROR(run_scope.Acquire(scope));
  return RunResolved(
      prepared, scope, *run_scope.get().scope, run_scope.get().tensors, feeds,
      fetches, profile,
      options_.run.free_dead_tensors && !options_.run.keep_buffers_between_runs,
      options_.run.resolve_persistables_once ? &run_scope.get().persistables
                                             : nullptr,
      observer);
}

absl::StatusOr<std::vector<Tensor>> Executor::RunInScope(
    const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches) const {
  if (prepared.rewritten()) {
    const PreparedNet& plan = prepared.PlanFor(fetches);
    if (&plan != &prepared) return RunInScope(plan, scope, feeds, fetches);
  }
  const int n = static_cast<int>(prepared.var_names().size());
  std::vector<Tensor*> tensors(n, nullptr);
  for (int v = 0; v < n; ++v) {
    if (!prepared.IsTemporary(v)) continue;
    SF_ASSIGN_OR_RETURN(
        tensors[v],
        TensorOf(*scope.Var(prepared.var_names()[v]), prepared.var_names()[v]));
  }
  return RunResolved(prepared, scope, scope, std::move(tensors), feeds, fetches,
                     /*profile=*/nullptr, /*free_dead_tensors=*/false);
}

namespace {

// How many runs enclose the calling thread's current one.
thread_local int run_depth = 0;

class RunNesting {
 public:
  RunNesting() { ++run_depth; }
  ~RunNesting() { --run_depth; }
  RunNesting(const RunNesting&) = delete;
  RunNesting& operator=(const RunNesting&) = delete;
  bool outermost() const { return run_depth == 1; }
};

// One run's bindings, owned by the run: a tensor per variable of the net
// (null where the run needs none), this run's shapes, and what the steps
// over the ops share.
struct RunState {
  RunState(const PreparedNet& prepared, std::vector<Tensor*> tensors,
           Scope& run_scope, const BlockRunner* runner, RunProfile* profile,
           bool free_dead_tensors)
      : prepared(prepared),
        place(prepared.place()),
        tensors(std::move(tensors)),
        fetched(prepared.var_names().size(), false),
        run_scope(run_scope),
        runner(runner),
        profile(profile),
        free_dead_tensors(free_dead_tensors) {
    // Copying the table costs a cache line per variable: only where ops
    // infer at run time.
    if (prepared.infers_at_run()) run_infos = prepared.var_infos();
    // Dead temporaries' buffers for later outputs, in runs on the host.
    if (free_dead_tensors && place.is_cpu()) spare_buffers.emplace();
  }

  // The shapes of this run: Prepare's where it knew every one, else the
  // copy that the run's inference and what the scope and feeds hold update.
  // (Where Prepare knew every shape, the binding checks make those equal
  // to Prepare's.)
  const std::vector<VarInfo>& infos() const {
    return prepared.infers_at_run() ? run_infos : prepared.var_infos();
  }
  // Records what a bound tensor holds, where runs infer.
  void Learn(int v, const Tensor& tensor) {
    if (prepared.infers_at_run()) run_infos[v] = InfoOf(tensor);
  }

  const PreparedNet& prepared;
  const Place& place;
  std::vector<Tensor*> tensors;
  std::vector<VarInfo> run_infos;
  // Parameters copied to the run's place (BindScopeVariables).
  std::vector<std::unique_ptr<Tensor>> persistable_copies;
  // Flags as bytes: std::vector<bool>'s bit access costs more per op.
  std::vector<char> fetched;
  std::optional<RunBufferPool> spare_buffers;
  // The planned temporaries' memory (RunOptions::plan_memory), at the
  // offsets of the plan for this run's shapes, which the run holds (the
  // net's cache may drop it meanwhile).
  std::shared_ptr<const MemoryPlan> memory_plan;
  std::optional<RunArena> arena;
  // Moves between host and device under a budget
  // (ExecutorOptions::device_memory_budget).
  std::unique_ptr<OffloadRun> offload;
  Scope& run_scope;
  const BlockRunner* runner;
  RunProfile* profile;
  const bool free_dead_tensors;
  // RunOptions::trace and RunOptions::check_numerics.
  RunTrace* trace = nullptr;
  bool check_numerics = false;
  // Under a device memory budget: parameters and feeds stay where the
  // caller left them (the host) until the offload plan moves them.
  bool budgeted = false;
};

// Binds the variables of enclosing blocks and the persistable ones to
// their tensors in `scope` (or, with `persistables` filled by an earlier
// run on the same run scope, to those), and checks that what they hold
// fits what the net was prepared for.
absl::Status BindScopeVariables(Scope& scope,
                                std::vector<Tensor*>* persistables,
                                RunState& run) {
  const PreparedNet& prepared = run.prepared;
  std::vector<Tensor*>& tensors = run.tensors;
  const bool resolved = persistables != nullptr && !persistables->empty();
  for (int v : prepared.scope_bound()) {
    const std::string& name = prepared.var_names()[v];
    if (prepared.is_external(v)) {
      Variable* var = scope.FindVar(name);
      SF_CHECK_CODE(var != nullptr, absl::StatusCode::kFailedPrecondition,
                    "variable \"%s\" of an enclosing block is not in the "
                    "scope the block runs against",
                    name);
      SF_ASSIGN_OR_RETURN(tensors[v], TensorOf(*var, name));
      if (tensors[v]->initialized()) {
        // Ops were prepared with what the enclosing block knew of it.
        const VarInfo& known = prepared.var_infos()[v];
        SF_CHECK((known.dtype == DATA_TYPE_UNSPECIFIED ||
                  known.dtype == tensors[v]->dtype()) &&
                     ShapeAdmits(known, tensors[v]->dims()),
                 "variable \"%s\" of an enclosing block: the block was "
                 "prepared for %s, the scope holds %s",
                 name, InfoToString(known), tensors[v]->DebugString());
        run.Learn(v, *tensors[v]);
      }
      continue;
    }
    if (resolved) {
      tensors[v] = (*persistables)[v];
    } else {
      SF_ASSIGN_OR_RETURN(tensors[v], FindPersistable(prepared, scope, v));
    }
    if (!prepared.is_written(v) || prepared.is_read_first(v)) {
      SF_CHECK_CODE(tensors[v]->initialized(),
                    absl::StatusCode::kFailedPrecondition,
                    "persistable variable \"%s\" holds no tensor: run the "
                    "startup net or load the parameters first",
                    name);
      run.Learn(v, *tensors[v]);
      // Kernels were chosen at Prepare from the declared dtype.
      const VarInfo& declared = prepared.var_infos()[v];
      SF_CHECK(
          (declared.dtype == DATA_TYPE_UNSPECIFIED ||
           declared.dtype == tensors[v]->dtype()) &&
              ShapeAdmits(declared, tensors[v]->dims()),
          "persistable variable \"%s\": the net declares %s, the scope holds "
          "%s",
          name, InfoToString(declared), tensors[v]->DebugString());
    }
  }

  if (persistables != nullptr && !resolved) {
    persistables->assign(tensors.begin(), tensors.end());
  }

  // Parameters the caller left on another place (loaded on the host for a
  // net on a device): a run reads a copy on its place. One the net updates
  // must be on the place, or the update would go to the copy.
  for (int v : prepared.scope_bound()) {
    if (run.budgeted || prepared.is_external(v) ||
        !tensors[v]->initialized() || tensors[v]->place() == run.place ||
        (prepared.is_written(v) && !prepared.is_read_first(v))) {
      continue;  // a net that writes it first allocates it on its place
    }
    SF_CHECK_CODE(!prepared.is_written(v),
                  absl::StatusCode::kFailedPrecondition,
                  "persistable variable \"%s\" is on %s, but the net runs on "
                  "%s and writes it: copy it to %s first (Tensor::CopyTo)",
                  prepared.var_names()[v], tensors[v]->place().ToString(),
                  run.place.ToString(), run.place.ToString());
    SF_ASSIGN_OR_RETURN(Tensor copy, tensors[v]->CopyTo(run.place));
    run.persistable_copies.push_back(std::make_unique<Tensor>(std::move(copy)));
    tensors[v] = run.persistable_copies.back().get();
  }
  return absl::OkStatus();
}

// Binds each feed to its input variable, sharing the caller's buffer where
// it is on the run's place; every input must be fed.
absl::Status BindFeeds(absl::Span<const Feed> feeds, RunState& run) {
  const PreparedNet& prepared = run.prepared;
  std::vector<char> fed(prepared.var_names().size(), false);
  for (const Feed& feed : feeds) {
    const int v = prepared.VarIndex(feed.name);
    SF_CHECK(v >= 0 && prepared.is_input(v),
             "feed \"%s\" is not an input of the net (inputs: %s)", feed.name,
             absl::StrJoin(prepared.input_names(), ", "));
    const VarInfo& declared = prepared.var_infos()[v];
    SF_CHECK(feed.tensor.dtype() == declared.dtype &&
                 ShapeAdmits(declared, feed.tensor.dims()),
             "feed \"%s\": expected %s, got %s", feed.name,
             InfoToString(declared), feed.tensor.DebugString());
    Tensor& tensor = *run.tensors[v];
    if (feed.tensor.place() == run.place || run.budgeted) {
      tensor.ShareBufferWith(feed.tensor);
      // The caller may have changed the elements since a run before this
      // one was fed the same buffer.
      tensor.MarkWritten();
    } else {
      SF_ASSIGN_OR_RETURN(tensor, feed.tensor.CopyTo(run.place));
    }
    run.Learn(v, feed.tensor);
    fed[v] = true;
  }
  for (int v : prepared.input_vars()) {
    SF_CHECK(fed[v], "input \"%s\" is not fed", prepared.var_names()[v]);
  }
  return absl::OkStatus();
}

// The fetched variables, in the order asked; marks them so that no op
// frees them.
absl::StatusOr<std::vector<int>> BindFetches(
    absl::Span<const std::string> fetches, RunState& run) {
  std::vector<int> fetch_index;
  for (const std::string& name : fetches) {
    const int v = run.prepared.VarIndex(name);
    SF_CHECK(v >= 0, "fetch \"%s\": the net has no such variable", name);
    SF_CHECK(run.prepared.is_tensor(v),
             "fetch \"%s\": it holds a list of scopes, not a tensor", name);
    fetch_index.push_back(v);
    run.fetched[v] = true;
  }
  return fetch_index;
}

// Allocates op's outputs as inference says (an output updated in place
// keeps its input's buffer), staging them for a kernel on the host.
absl::Status AllocateOutputs(const PreparedOp& op, HostStaging* staging,
                             RunState& run) {
  const std::vector<VarInfo>& infos = run.infos();
  const std::vector<std::string>& names = run.prepared.var_names();
  std::vector<Tensor*>& tensors = run.tensors;
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const int in_place = op.spec->InPlaceInput(static_cast<int>(o));
    for (size_t k = 0; k < op.outputs[o].size(); ++k) {
      const int v = op.outputs[o][k];
      if (staging != nullptr) staging->StageOutput(v, tensors);
      if (in_place >= 0 && k < op.inputs[in_place].size() &&
          op.inputs[in_place][k] == v) {
        SF_RETURN_IF_ERROR(PrepareInPlace(op, v, infos[v], names, *tensors[v]));
        continue;
      }
      SF_CHECK_CODE(FullyKnown(infos[v]), absl::StatusCode::kInternal,
                    "%s: inference left output \"%s\" as %s at run time",
                    OpName(op), names[v], InfoToString(infos[v]));
      if (run.arena && staging == nullptr && !tensors[v]->initialized()) {
        SF_RETURN_IF_ERROR(run.arena
                               ->Assign(v, infos[v].dtype, infos[v].dims,
                                        *tensors[v])
                               .status());
      }
      if (run.spare_buffers && !tensors[v]->initialized()) {
        size_t bytes = SizeOf(infos[v].dtype);
        for (int64_t d : infos[v].dims) bytes *= static_cast<size_t>(d);
        run.spare_buffers->Lend(bytes, *tensors[v]);
      }
      absl::Status allocated =
          tensors[v]->Allocate(op.kernel_place, infos[v].dtype, infos[v].dims);
      if (!allocated.ok()) {
        return absl::Status(allocated.code(),
                            absl::StrFormat("%s: output \"%s\": %s", OpName(op),
                                            names[v], allocated.message()));
      }
    }
  }
  return absl::OkStatus();
}

// What the trace records of `op`, before its dead inputs are freed (the
// end time is set after).
RunTrace::OpEvent TraceEventOf(const PreparedOp& op, const RunState& run,
                               Clock::time_point start,
                               Clock::time_point kernel_start,
                               Clock::time_point kernel_end) {
  RunTrace::OpEvent event;
  event.type = op.spec->type();
  event.index = op.index;
  const std::vector<std::string>& names = run.prepared.var_names();
  for (const std::vector<int>& vars : op.outputs) {
    if (!vars.empty()) {
      event.output = names[vars[0]];
      break;
    }
  }
  for (const std::vector<int>& vars : op.inputs) {
    for (int v : vars) {
      const Tensor* tensor = run.tensors[v];
      event.inputs.push_back(
          tensor != nullptr && tensor->initialized()
              ? absl::StrCat(names[v], ": ", DataTypeName(tensor->dtype()), " ",
                             DimsToString(tensor->dims()))
              : names[v]);
    }
  }
  event.start = start;
  event.kernel_start = kernel_start;
  event.kernel_end = kernel_end;
  return event;
}

// One step of the run: the op at `position` infers what Prepare could not,
// gets its outputs allocated, runs its kernel (on host copies where it has
// none on the run's device), and the temporaries that die after it are
// freed.
absl::Status RunStep(size_t position, RunState& run) {
  const PreparedNet& prepared = run.prepared;
  const PreparedOp& op = prepared.ops()[position];
  RunProfile* const profile = run.profile;
  const bool timed = profile != nullptr || run.trace != nullptr;
  const Clock::time_point op_start = timed ? Clock::now() : Clock::time_point();
  if (op.spec->infer() != nullptr && !op.static_shapes) {
    InferContext context(op, run.run_infos, prepared.var_names(),
                         run.tensors.data());
    absl::Status inferred = op.spec->infer()(context);
    if (!inferred.ok()) {
      return absl::Status(inferred.code(),
                          absl::StrCat(OpName(op), ": ", inferred.message()));
    }
  }
  // An op with no kernel on the run's device runs its CPU kernel on host
  // copies of its inputs and outputs. The staging is made only for such an
  // op: a deque allocates as it is constructed, and an empty
  // std::optional of it is zeroed for every op.
  if (run.offload) {
    const Clock::time_point copy_start =
        run.trace != nullptr ? Clock::now() : Clock::time_point();
    SF_RETURN_IF_ERROR(run.offload->BeforeOp(position));
    if (run.trace != nullptr) {
      run.trace->AddCopy({absl::StrCat("moves before ", OpName(op)), copy_start,
                          Clock::now()});
    }
  }
  std::unique_ptr<HostStaging> staging;
  if (op.kernel_place != run.place) {
    staging = std::make_unique<HostStaging>();
    const Clock::time_point copy_start =
        run.trace != nullptr ? Clock::now() : Clock::time_point();
    absl::Status staged = staging->StageInputs(op, run.tensors);
    if (run.trace != nullptr) {
      run.trace->AddCopy({absl::StrCat("inputs of ", OpName(op), " to host"),
                          copy_start, Clock::now()});
    }
    if (!staged.ok()) {
      return absl::Status(
          staged.code(),
          absl::StrCat(OpName(op),
                       ": copying its inputs to the host for its CPU kernel: ",
                       staged.message()));
    }
  }
  if (!op.spec->control_flow()) {
    SF_RETURN_IF_ERROR(AllocateOutputs(op, staging.get(), run));
  }
  KernelContext context(op, run.tensors.data(), prepared.var_names(),
                        op.kernel_place, &run.run_scope, run.runner);
  const Clock::time_point kernel_start =
      timed ? Clock::now() : Clock::time_point();
  absl::Status status = op.kernel(context);
  const Clock::time_point kernel_end =
      timed ? Clock::now() : Clock::time_point();
  if (profile != nullptr) {
    profile->ops[position].kernel_seconds +=
        std::chrono::duration<double>(kernel_end - kernel_start).count();
  }
  if (staging != nullptr && status.ok()) {
    status = staging->Finish(op, run.place, run.tensors);
    if (run.trace != nullptr) {
      run.trace->AddCopy({absl::StrCat("outputs of ", OpName(op), " to ",
                                       run.place.ToString()),
                          kernel_end, Clock::now()});
    }
  }
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(OpName(op), ": ", status.message()));
  }
  if (run.check_numerics) {
    SF_RETURN_IF_ERROR(
        CheckOutputsFinite(op, prepared.var_names(), run.tensors.data()));
  }
  std::optional<RunTrace::OpEvent> traced;
  if (run.trace != nullptr) {
    traced = TraceEventOf(op, run, op_start, kernel_start, kernel_end);
  }
  if (op.spec->control_flow()) {
    SF_RETURN_IF_ERROR(
        ReadBackOutputs(op, prepared, run.tensors, run.run_infos));
  }
  if (run.arena) SF_RETURN_IF_ERROR(run.arena->AfterOp(op, run.tensors));
  if (run.free_dead_tensors) {
    for (int v : prepared.dies_after(position)) {
      if (run.fetched[v]) continue;
      if (run.spare_buffers) {
        run.spare_buffers->Keep(*run.tensors[v]);
      } else {
        run.tensors[v]->Clear();
      }
    }
  }
  if (run.offload) {
    const Clock::time_point copy_start =
        run.trace != nullptr ? Clock::now() : Clock::time_point();
    SF_RETURN_IF_ERROR(run.offload->AfterOp(position));
    if (run.trace != nullptr) {
      run.trace->AddCopy(
          {absl::StrCat("moves after ", OpName(op)), copy_start, Clock::now()});
    }
  }
  if (timed) {
    const Clock::time_point op_end = Clock::now();
    if (profile != nullptr) {
      profile->ops[position].total_seconds +=
          std::chrono::duration<double>(op_end - op_start).count();
    }
    if (traced.has_value()) {
      traced->end = op_end;
      run.trace->AddOp(*std::move(traced));
    }
  }
  return absl::OkStatus();
}

// The fetched tensors, in the order asked.
absl::StatusOr<std::vector<Tensor>> TakeFetches(
    const std::vector<int>& fetch_index, const RunState& run) {
  std::vector<Tensor> results;
  results.reserve(fetch_index.size());
  for (int v : fetch_index) {
    SF_CHECK_CODE(run.tensors[v]->initialized(),
                  absl::StatusCode::kFailedPrecondition,
                  "fetch \"%s\": no op of the net wrote it and it was not fed",
                  run.prepared.var_names()[v]);
    results.push_back(*run.tensors[v]);
  }
  return results;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> Executor::RunResolved(
    const PreparedNet& prepared, Scope& scope, Scope& run_scope,
    std::vector<Tensor*> tensors, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches, RunProfile* profile,
    bool free_dead_tensors, std::vector<Tensor*>* persistables,
    OpObserver* observer) const {
  const Place& place = prepared.place();
  // Runs nest (a loop's body runs inside its op, on the same thread and
  // stream): the outermost run on a device is the one that waits for it.
  const RunNesting nesting;
  const bool waits_for_device = place.is_cuda() && nesting.outermost();
  if (waits_for_device) SF_RETURN_IF_ERROR(DiscardDeviceChecks(place.device()));

  RunState run(prepared, std::move(tensors), run_scope, this, profile,
               free_dead_tensors);
  run.trace = options_.run.trace;
  run.check_numerics = options_.run.check_numerics;
  run.budgeted = options_.device_memory_budget > 0;
  SF_RETURN_IF_ERROR(BindScopeVariables(scope, persistables, run));
  SF_RETURN_IF_ERROR(BindFeeds(feeds, run));
  SF_ASSIGN_OR_RETURN(const std::vector<int> fetch_index,
                      BindFetches(fetches, run));
  // Kept temporaries would share regions: only runs that free them. The
  // plan is for the shapes just fed (and the parameters found).
  if (options_.run.plan_memory && free_dead_tensors &&
      options_.device_memory_budget == 0) {
    run.memory_plan = CachedMemoryPlan(prepared, run.infos(), &run.tensors);
    if (!run.memory_plan->vars.empty()) {
      run.arena.emplace(*run.memory_plan, place, run.fetched);
    }
  }
  if (options_.device_memory_budget > 0) {
    // Dead buffers kept for reuse would hold device memory.
    run.spare_buffers.reset();
    // Sized for the shapes fed where Prepare did not know them all.
    SF_ASSIGN_OR_RETURN(
        run.offload,
        OffloadRun::Start(
            prepared,
            prepared.infers_at_run()
                ? InferFromShapes(prepared, run.infos(), &run.tensors)
                : prepared.var_infos(),
            fetches, options_.device_memory_budget, options_.offload_policy,
            options_.device_memory.get(), run.tensors));
  }
  if (profile != nullptr) profile->ops.resize(prepared.ops().size());
  const RunCancellation* const cancellation = current_cancellation;
  for (size_t position = 0; position < prepared.ops().size(); ++position) {
    if (cancellation != nullptr) {
      SF_RETURN_IF_ERROR(CheckBeforeOp(*cancellation, prepared, position));
    }
    SF_RETURN_IF_ERROR(RunStep(position, run));
    if (observer != nullptr) {
      SF_RETURN_IF_ERROR(observer->AfterOp(prepared, position, run.tensors));
    }
  }
  if (run.offload) SF_RETURN_IF_ERROR(run.offload->Finish());
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> results,
                      TakeFetches(fetch_index, run));

  if (waits_for_device) {
    // The run's kernels were only queued on this thread's stream: wait, so
    // that the fetched tensors and the parameters the run wrote may be used
    // from any thread once Run returns, then read what the kernels found
    // wrong in their inputs.
    absl::Status done = SynchronizeCudaStream(place.device());
    if (!done.ok()) {
      return absl::Status(done.code(),
                          absl::StrCat("a kernel of the run failed on ",
                                       place.ToString(), ": ", done.message()));
    }
    SF_RETURN_IF_ERROR(TakeDeviceCheckFailure(place.device()));
  }
  return results;
}

}  // namespace scopeflow
