#include "framework/memory/offload_plan.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/memory/op_uses.h"
#include "framework/var_info_checks.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<OffloadPolicy> ParseOffloadPolicy(absl::string_view text) {
  if (text == "on_demand") return OffloadPolicy::kOnDemand;
  if (text == "planned") return OffloadPolicy::kPlanned;
  return absl::InvalidArgumentError(absl::StrCat(
      "offload policy \"", text, "\": expected on_demand or planned"));
}

const char* OffloadPolicyName(OffloadPolicy policy) {
  return policy == OffloadPolicy::kOnDemand ? "on_demand" : "planned";
}

std::vector<OffloadAction> OffloadPlan::AllActions() const {
  std::vector<OffloadAction> all;
  for (const OffloadStep& step : steps) {
    all.insert(all.end(), step.before.begin(), step.before.end());
    all.insert(all.end(), step.after.begin(), step.after.end());
  }
  all.insert(all.end(), finish.begin(), finish.end());
  return all;
}

namespace {

// What the planner knows of the net: each op's variables (of nonzero
// size), their bytes, when each is used.
struct NetView {
  std::vector<std::vector<int>> reads;
  std::vector<std::vector<int>> needs;  // reads and writes, sorted
  std::vector<std::vector<int>> writes;
  std::vector<size_t> bytes;
  std::vector<std::vector<int>> uses;  // op positions, ascending
  std::vector<bool> kept;              // must end the run on the host
};

// The first op that uses each variable of unknown size, for errors.
struct Unsized {
  std::vector<OffloadPlan::Unsized> written;  // by an op, in op order
  int input = -1;                             // a variable no op writes
  int input_op = -1;
};

absl::StatusOr<NetView> ViewNet(const PreparedNet& prepared,
                                const std::vector<VarInfo>& infos,
                                absl::Span<const std::string> fetches,
                                size_t budget, Unsized& unsized) {
  const int n = static_cast<int>(prepared.var_names().size());
  const std::vector<OpUses> op_uses = CollectOpUses(prepared);
  NetView view;
  view.bytes.assign(n, 0);
  view.uses.resize(n);
  view.kept.assign(n, false);
  for (int v = 0; v < n; ++v) view.kept[v] = !prepared.IsTemporary(v);
  for (const std::string& name : fetches) {
    const int v = prepared.VarIndex(name);
    if (v >= 0) view.kept[v] = true;
  }
  std::vector<bool> listed(n, false);
  const int ops = static_cast<int>(op_uses.size());
  view.reads.resize(ops);
  view.writes.resize(ops);
  view.needs.resize(ops);
  for (int i = 0; i < ops; ++i) {
    const PreparedOp& op = prepared.ops()[i];
    SF_CHECK_CODE(!op.spec->control_flow(), absl::StatusCode::kUnimplemented,
                  "%s: a run under a device memory budget cannot hold a "
                  "control-flow op (its blocks allocate outside the plan)",
                  OpName(op));
    auto add = [&](int v, std::vector<int>& to) {
      if (!prepared.is_tensor(v)) return;
      if (!FullyKnown(infos[v])) {
        if (listed[v]) return;
        listed[v] = true;
        if (prepared.is_written(v)) {
          unsized.written.push_back({v, i});
        } else if (unsized.input < 0) {
          unsized.input = v;
          unsized.input_op = i;
        }
        return;
      }
      view.bytes[v] = BytesOf(infos[v]);
      if (view.bytes[v] == 0) return;
      to.push_back(v);
      view.needs[i].push_back(v);
      if (view.uses[v].empty() || view.uses[v].back() != i) {
        view.uses[v].push_back(i);
      }
    };
    for (int v : op_uses[i].reads) add(v, view.reads[i]);
    for (int v : op_uses[i].writes) add(v, view.writes[i]);
    std::vector<int>& needs = view.needs[i];
    std::sort(needs.begin(), needs.end());
    needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
    size_t total = 0;
    for (int v : needs) total += view.bytes[v];
    if (total > budget) {
      std::vector<std::string> each;
      for (int v : needs) {
        each.push_back(absl::StrCat(prepared.var_names()[v], ": ",
                                    view.bytes[v]));
      }
      return absl::ResourceExhaustedError(absl::StrCat(
          OpName(op), " needs ", total,
          " bytes of device memory for its inputs and outputs (",
          absl::StrJoin(each, ", "), "), more than the budget of ", budget,
          " bytes"));
    }
  }
  // An input or parameter of unknown size: the caller can declare it.
  if (unsized.input >= 0) {
    const int v = unsized.input;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: variable \"%s\" is %s; a device memory budget needs the "
        "size of every variable at Prepare (declare the inputs' sizes)",
        OpName(prepared.ops()[unsized.input_op]), prepared.var_names()[v],
        InfoToString(infos[v])));
  }
  // The first op whose output's size is unknown read only sized
  // variables: that size depends on the values it reads.
  if (!unsized.written.empty() && budget != kNoDeviceMemoryBudget) {
    const OffloadPlan::Unsized& first = unsized.written.front();
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s writes variable \"%s\" as %s: its size depends on values "
        "computed during the run, so no device memory budget can be planned "
        "for this net (%d variable(s) are sized only while it runs; "
        "`scopeflow plan` without a budget lists them)",
        OpName(prepared.ops()[first.op]), prepared.var_names()[first.var],
        InfoToString(infos[first.var]), unsized.written.size()));
  }
  return view;
}

bool Contains(const std::vector<int>& sorted, int v) {
  return std::binary_search(sorted.begin(), sorted.end(), v);
}

// The first op after `position` that uses v; INT_MAX for none.
int NextUse(const NetView& view, int v, int position) {
  const std::vector<int>& uses = view.uses[v];
  auto next = std::upper_bound(uses.begin(), uses.end(), position);
  return next == uses.end() ? INT_MAX : *next;
}

bool DiesAt(const NetView& view, int v, int position) {
  return !view.kept[v] && view.uses[v].back() == position;
}

// The run as the planner simulates it: what is on the device and written
// there since it came.
class DeviceState {
 public:
  explicit DeviceState(const NetView& view)
      : view_(view),
        resident_(view.bytes.size(), false),
        dirty_(view.bytes.size(), false) {}

  void Add(OffloadAction::Kind kind, int v, bool prefetch,
           std::vector<OffloadAction>& to) {
    to.push_back({kind, v, view_.bytes[v], prefetch});
    resident_[v] = true;
    dirty_[v] = false;
    used_ += view_.bytes[v];
  }
  void Remove(OffloadAction::Kind kind, int v, std::vector<OffloadAction>& to) {
    to.push_back({kind, v, view_.bytes[v]});
    resident_[v] = false;
    dirty_[v] = false;
    used_ -= view_.bytes[v];
  }
  // Moves v off the device: written back if its host copy is stale and
  // someone still needs it.
  void Evict(int v, int position, std::vector<OffloadAction>& to) {
    const bool needed =
        view_.kept[v] || NextUse(view_, v, position) != INT_MAX;
    Remove(dirty_[v] && needed ? OffloadAction::kWriteBack
                               : OffloadAction::kDrop,
           v, to);
  }
  void MarkWritten(int v) { dirty_[v] = true; }

  bool resident(int v) const { return resident_[v]; }
  bool dirty(int v) const { return dirty_[v]; }
  size_t used() const { return used_; }
  std::vector<int> ResidentVars() const {
    std::vector<int> vars;
    for (size_t v = 0; v < resident_.size(); ++v) {
      if (resident_[v]) vars.push_back(static_cast<int>(v));
    }
    return vars;
  }

 private:
  const NetView& view_;
  std::vector<bool> resident_;
  std::vector<bool> dirty_;
  size_t used_ = 0;
};

void PlanOnDemandStep(const NetView& view, int i, DeviceState& device,
                      OffloadStep& step) {
  for (int v : view.needs[i]) {
    device.Add(Contains(view.reads[i], v) ? OffloadAction::kLoad
                                          : OffloadAction::kAllocate,
               v, /*prefetch=*/false, step.before);
  }
  step.resident = device.ResidentVars();
  step.device_bytes = device.used();
  for (int v : view.needs[i]) {
    device.Remove(DiesAt(view, v, i) ? OffloadAction::kDie
                                     : OffloadAction::kWriteBack,
                  v, step.after);
  }
}

// Belady's rule: the variable not needed now whose next use is furthest
// away; among equals a clean one (no copy back), then the largest.
int PickVictim(const NetView& view, const DeviceState& device, int i) {
  int victim = -1;
  std::tuple<int, bool, size_t> best;
  for (int v : device.ResidentVars()) {
    if (Contains(view.needs[i], v)) continue;
    const std::tuple<int, bool, size_t> key(NextUse(view, v, i),
                                            !device.dirty(v), view.bytes[v]);
    if (victim < 0 || key > best) {
      victim = v;
      best = key;
    }
  }
  return victim;
}

void PlanPlannedStep(const NetView& view, int i, size_t budget,
                     DeviceState& device, OffloadStep& step) {
  size_t missing = 0;
  for (int v : view.needs[i]) {
    if (!device.resident(v)) missing += view.bytes[v];
  }
  while (device.used() + missing > budget) {
    // ViewNet checked that the op's own variables fit.
    device.Evict(PickVictim(view, device, i), i, step.before);
  }
  for (int v : view.needs[i]) {
    if (device.resident(v)) continue;
    device.Add(Contains(view.reads[i], v) ? OffloadAction::kLoad
                                          : OffloadAction::kAllocate,
               v, /*prefetch=*/false, step.before);
  }
  if (i + 1 < static_cast<int>(view.reads.size())) {
    for (int v : view.reads[i + 1]) {
      if (device.resident(v) || device.used() + view.bytes[v] > budget) {
        continue;
      }
      device.Add(OffloadAction::kLoad, v, /*prefetch=*/true, step.before);
    }
  }
  step.resident = device.ResidentVars();
  step.device_bytes = device.used();
  for (int v : view.writes[i]) device.MarkWritten(v);
  for (int v : view.needs[i]) {
    if (DiesAt(view, v, i)) device.Remove(OffloadAction::kDie, v, step.after);
  }
}

}  // namespace

absl::StatusOr<OffloadPlan> PlanOffloadFor(
    const PreparedNet& prepared, const std::vector<VarInfo>& infos,
    absl::Span<const std::string> fetches, size_t budget,
    OffloadPolicy policy) {
  Unsized unsized;
  SF_ASSIGN_OR_RETURN(const NetView view,
                      ViewNet(prepared, infos, fetches, budget, unsized));
  OffloadPlan plan;
  plan.unsized = std::move(unsized.written);
  plan.policy = policy;
  plan.budget = budget;
  const int ops = static_cast<int>(prepared.ops().size());
  plan.steps.resize(ops);
  DeviceState device(view);
  for (int i = 0; i < ops; ++i) {
    OffloadStep& step = plan.steps[i];
    if (policy == OffloadPolicy::kOnDemand) {
      PlanOnDemandStep(view, i, device, step);
    } else {
      PlanPlannedStep(view, i, budget, device, step);
    }
    if (step.device_bytes > plan.peak_bytes) {
      plan.peak_bytes = step.device_bytes;
      plan.peak_step = i;
      plan.resident_at_peak = step.resident;
    }
  }
  for (int v : device.ResidentVars()) device.Evict(v, ops, plan.finish);
  for (const OffloadAction& action : plan.AllActions()) {
    if (!action.copies()) continue;
    plan.moved_bytes += action.bytes;
    ++plan.transfers;
  }
  return plan;
}

}  // namespace scopeflow
