// The Executor: prepares a block of a net once (Prepare: prepare.h), then
// runs it against scopes any number of times, from any number of threads
// (Run). A run binds the block's variables to tensors (from the scope, the
// run's scope and the feeds), then steps through the prepared ops.
#ifndef SCOPEFLOW_FRAMEWORK_EXECUTOR_H_
#define SCOPEFLOW_FRAMEWORK_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/block_runner.h"
#include "framework/default_scope.h"
#include "framework/memory/device_memory.h"
#include "framework/memory/offload_plan.h"
#include "framework/prepare.h"
#include "framework/prepared_net.h"
#include "framework/run_cancellation.h"
#include "framework/run_trace.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "platform/default_place.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

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

// Told by a run, on the thread running it, as each op of the block given
// to Run finishes (not the ops of blocks that control-flow ops run inside
// it): data-parallel training starts summing a gradient once the last op
// writing it has run, while the run goes on with earlier layers' gradients.
// Owned by the caller, alive until Run returns.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  // After plan.ops()[position] ran and its outputs were written. `plan` is
  // the net the run steps through: the one given to Run, or its
  // PlanFor(fetches). `tensors` are the run's tensors of plan's variables,
  // indexed like plan.var_names() (null where the run binds none). The
  // observer may keep views (copies of the Tensor objects) of a fetched
  // variable's tensor and read them from other threads until Run returns,
  // as long as no later op of the plan writes that variable (a fetched
  // tensor is never freed or reused by the run). On a device, the op's
  // kernels may still be queued on the run's stream when this is called. An
  // error stops the run with it.
  virtual absl::Status AfterOp(const PreparedNet& plan, size_t position,
                               absl::Span<Tensor* const> tensors) = 0;
};

// How runs treat their tensors and scopes (what Prepare does is
// PrepareOptions').
struct RunOptions {
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
  // Place the temporaries whose shapes are known before the run (from the
  // fed shapes, not from values computed in it) in one arena per run, at
  // offsets planned at the first run of each fed shape
  // (framework/memory/memory_plan.h), so that a run allocates once for
  // them and temporaries that are never live together share memory. Only
  // in runs that free dead temporaries.
  bool plan_memory = true;
  // Non-null: every op the runs step through is recorded in it, with its
  // kernel's time and the host-device copies made for it
  // (framework/run_trace.h). The caller owns it and keeps it alive while
  // runs use it; nothing is timed or recorded when null.
  RunTrace* trace = nullptr;
  // Stop a run with an error at the first op that writes a NaN or an
  // infinity to a floating-point output, naming the op, the variable and
  // the element (framework/check_numerics.h). Costs a pass over each output
  // (a copy to the host for a device's) when on, nothing when off.
  bool check_numerics = false;
};

struct ExecutorOptions {
  PrepareOptions prepare;
  RunOptions run;
  // Above 0: a run keeps at most this many bytes of the net's variables
  // (parameters, inputs, temporaries) in `device_memory`, moving them
  // between it and host memory before and after ops as `offload_policy`
  // plans (framework/memory/offload_plan.h); fetched tensors and the
  // parameters end the run on the host. For nets without control-flow
  // ops whose every variable's size is known before the run, from the
  // fed shapes (framework/memory/infer_from_shapes.h); the plan is made
  // at each run.
  size_t device_memory_budget = 0;
  OffloadPolicy offload_policy = OffloadPolicy::kPlanned;
  // The device's memory (TestDevice for a net on the CPU), shared by the
  // executor's runs.
  std::shared_ptr<DeviceMemory> device_memory;

  // Options under which a PreparedNet's ops and variables are exactly the
  // net's, as analyses of a net expect: no pass runs.
  static ExecutorOptions AsWritten() {
    ExecutorOptions options;
    options.prepare = PrepareOptions::AsWritten();
    return options;
  }
};

// Runs prepared nets. Thread-safe: Prepare and Run may be called from any
// number of threads at once. Control-flow ops run their blocks through it
// as a BlockRunner.
class Executor final : public BlockRunner {
 public:
  explicit Executor(ExecutorOptions options = {}) : options_(options) {}

  // PrepareNet (prepare.h) with this executor's PrepareOptions.
  absl::StatusOr<PreparedNet> Prepare(const NetDef& net, int block,
                                      const Place& place) const {
    return PrepareNet(net, block, place, options_.prepare);
  }
  // The same on the calling thread's default place (DefaultPlace(): the CPU
  // unless a PlaceGuard on this thread names another).
  absl::StatusOr<PreparedNet> Prepare(const NetDef& net, int block = 0) const {
    return Prepare(net, block, DefaultPlace());
  }

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
  // Like Run, but stops early when `cancellation` (owned by the caller,
  // alive until Run returns; null: never) is cancelled or past its
  // deadline: before each op, and so at the start of every block a
  // control-flow op runs inside this run (each loop iteration), with
  // CANCELLED or DEADLINE_EXCEEDED naming the op it stopped before. A
  // run-time choice rather than a RunOptions field, since one executor
  // serves runs of many requests at once. Costs a pointer test per op when
  // null, an atomic load and a clock read per op otherwise.
  absl::StatusOr<std::vector<Tensor>> Run(
      const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches, RunProfile* profile,
      const RunCancellation* cancellation) const;
  absl::StatusOr<std::vector<Tensor>> Run(
      const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches) const override {
    return Run(prepared, scope, feeds, fetches, /*profile=*/nullptr);
  }
  // Like Run, with `observer` told after each op of `prepared` (or of the
  // plan it steps through) has run.
  absl::StatusOr<std::vector<Tensor>> Run(const PreparedNet& prepared,
                                          Scope& scope,
                                          absl::Span<const Feed> feeds,
                                          absl::Span<const std::string> fetches,
                                          OpObserver& observer) const;
  // The same against the calling thread's default scope (DefaultScope():
  // the global scope unless a ScopeGuard on this thread names another), so
  // that threads each guarding their own scope never share variables.
  absl::StatusOr<std::vector<Tensor>> Run(
      const PreparedNet& prepared, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches) const {
    return Run(prepared, DefaultScope(), feeds, fetches, /*profile=*/nullptr);
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
      bool free_dead_tensors, std::vector<Tensor*>* persistables = nullptr,
      OpObserver* observer = nullptr) const;
  // Run on a run scope leased from `prepared`'s cache.
  absl::StatusOr<std::vector<Tensor>> RunLeased(
      const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches, RunProfile* profile,
      OpObserver* observer) const;

  ExecutorOptions options_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_EXECUTOR_H_
