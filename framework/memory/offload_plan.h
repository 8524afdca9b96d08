// Which variables a budgeted run keeps in device memory before each op,
// and the copies between host and device that keep the device's bytes
// within the budget.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_OFFLOAD_PLAN_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_OFFLOAD_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/prepared_net.h"

namespace scopeflow {

enum class OffloadPolicy {
  // Each op's variables move to the device just before it and back right
  // after, every one of them (TensorRef's "Genoa"): the fewest device
  // bytes, the most copies.
  kOnDemand,
  // Variables stay on the device while they fit; to make room the one used
  // furthest in the future leaves first (Belady's rule), copied back only
  // if written since it came, and the next op's inputs are copied in
  // while this op runs where they fit (TensorRef's "Flow").
  kPlanned,
};

// "on_demand" or "planned"; InvalidArgument naming the text otherwise.
absl::StatusOr<OffloadPolicy> ParseOffloadPolicy(absl::string_view text);
const char* OffloadPolicyName(OffloadPolicy policy);

// One step of a budgeted run, in the order the run takes them.
struct OffloadAction {
  enum Kind {
    // Copy the variable's host tensor to new device memory.
    kLoad,
    // Give an output new device memory, with nothing to copy (the op
    // writes it whole).
    kAllocate,
    // Copy the device tensor back to the host, then free it.
    kWriteBack,
    // Free the device tensor, whose host copy is current.
    kDrop,
    // A temporary no later op uses (and no one fetches) is freed.
    kDie,
  };
  Kind kind;
  int var;
  size_t bytes;
  // A load for a later op, made before this op's kernel so that it
  // overlaps it.
  bool prefetch = false;

  bool copies() const { return kind == kLoad || kind == kWriteBack; }
  friend bool operator==(const OffloadAction& a, const OffloadAction& b) {
    return a.kind == b.kind && a.var == b.var && a.bytes == b.bytes &&
           a.prefetch == b.prefetch;
  }
};

struct OffloadStep {
  // Before the op's kernel: evictions, then loads and allocations for the
  // op, then prefetches for the next.
  std::vector<OffloadAction> before;
  // After the op's kernel.
  std::vector<OffloadAction> after;
  // The variables on the device while the op runs, and their bytes.
  std::vector<int> resident;
  size_t device_bytes = 0;
};

// Immutable once made.
struct OffloadPlan {
  OffloadPolicy policy = OffloadPolicy::kPlanned;
  size_t budget = 0;
  // Indexed like prepared.ops().
  std::vector<OffloadStep> steps;
  // After the last op: what must end on the host is written back, the
  // rest dropped.
  std::vector<OffloadAction> finish;
  // The most device bytes held during an op, the first op holding them,
  // and which variables they are.
  size_t peak_bytes = 0;
  int peak_step = -1;
  std::vector<int> resident_at_peak;
  // Bytes copied either way, and how many copies.
  size_t moved_bytes = 0;
  int transfers = 0;

  // Variables whose size depends on values computed during the run, each
  // with the first op that writes it, in op order: left out of the plan
  // (only a plan without a budget has any).
  struct Unsized {
    int var;
    int op;
  };
  std::vector<Unsized> unsized;

  // Every action in the order a run takes them.
  std::vector<OffloadAction> AllActions() const;
};

// The budget of a plan that only reports what a run moves.
inline constexpr size_t kNoDeviceMemoryBudget = SIZE_MAX;

// Plans a run of `prepared` (which fetches `fetches`) that keeps at most
// `budget` bytes of its variables (parameters, inputs and temporaries) on
// the device, where they are what `infos` says (indexed like
// prepared.var_infos()). Every variable an op uses needs a dtype and shape
// known before the run. Errors: an op whose inputs and outputs alone
// exceed the budget (naming it and the bytes it needs), an input or
// parameter of unknown size, a control-flow op (its blocks allocate
// outside the plan), and under a budget (not kNoDeviceMemoryBudget) an
// output whose size depends on values computed in the run (naming the
// first op writing one); without a budget those are left out and listed
// in `unsized`.
absl::StatusOr<OffloadPlan> PlanOffloadFor(
    const PreparedNet& prepared, const std::vector<VarInfo>& infos,
    absl::Span<const std::string> fetches, size_t budget,
    OffloadPolicy policy);
// The same with what Prepare inferred.
inline absl::StatusOr<OffloadPlan> PlanOffload(
    const PreparedNet& prepared, absl::Span<const std::string> fetches,
    size_t budget, OffloadPolicy policy) {
  return PlanOffloadFor(prepared, prepared.var_infos(), fetches, budget,
                        policy);
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_OFFLOAD_PLAN_H_
