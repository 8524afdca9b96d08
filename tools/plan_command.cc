// scopeflow plan.
#include "tools/plan_command.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/memory/infer_from_shapes.h"
#include "framework/memory/memory_plan.h"
#include "framework/memory/offload_plan.h"
#include "framework/memory/op_uses.h"
#include "framework/net_io.h"
#include "framework/param_io.h"
#include "framework/scope.h"
#include "framework/var_info_checks.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Gives every unknown dimension of the main block's inputs (variables no
// op of it writes and no run keeps) the size `batch`.
void SetBatch(int64_t batch, NetDef& net) {
  if (net.blocks_size() == 0) return;
  BlockDef& block = *net.mutable_blocks(0);
  absl::flat_hash_set<std::string> written;
  for (const OpDef& op : block.ops()) {
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& name : slot.vars()) written.insert(name);
    }
  }
  for (VarDef& var : *block.mutable_vars()) {
    if (var.persistable() || written.contains(var.name())) continue;
    for (int d = 0; d < var.shape_size(); ++d) {
      if (var.shape(d) != -1) continue;
      var.set_shape(d, batch);
      // Only an unknown dimension may have a name (an exporter's "batch").
      if (d < var.dim_names_size()) var.set_dim_names(d, "");
    }
  }
}

// Declares in `net` the parameters whose shape it leaves to the startup
// net, with what Prepare inferred for them there.
void DeclareFromStartup(const PreparedNet& startup, const PreparedNet& main,
                        NetDef& net) {
  BlockDef& block = *net.mutable_blocks(0);
  for (VarDef& var : *block.mutable_vars()) {
    const int v = main.VarIndex(var.name());
    const int s = startup.VarIndex(var.name());
    if (!var.persistable() || v < 0 || s < 0 ||
        FullyKnown(main.var_infos()[v]) ||
        !FullyKnown(startup.var_infos()[s])) {
      continue;
    }
    const VarInfo& info = startup.var_infos()[s];
    var.set_dtype(info.dtype);
    var.clear_shape();
    var.clear_dim_names();
    for (int64_t d : info.dims) var.add_shape(d);
  }
}

// What no op of the net reads: what a run fetches by default.
std::vector<std::string> NetOutputs(const PreparedNet& prepared) {
  const std::vector<OpUses> uses = CollectOpUses(prepared);
  std::vector<bool> read(prepared.var_names().size(), false);
  std::vector<bool> written(prepared.var_names().size(), false);
  for (const OpUses& op : uses) {
    for (int v : op.reads) read[v] = true;
    for (int v : op.writes) written[v] = true;
  }
  std::vector<std::string> outputs;
  for (size_t v = 0; v < read.size(); ++v) {
    if (written[v] && !read[v]) outputs.push_back(prepared.var_names()[v]);
  }
  return outputs;
}

void PrintArena(const MemoryPlan& plan) {
  std::printf(
      "arena: %zu temporaries planned, %d allocated on their own; arena "
      "bytes: %zu, live peak bytes: %zu, sum of their sizes: %zu\n",
      plan.vars.size(), plan.unplanned_temporaries, plan.arena.arena_bytes,
      plan.arena.live_peak_bytes, plan.arena.sum_bytes);
}

// The variables a plan could not size, which a run sizes as it computes
// them: at most kListed, the first op writing each.
void PrintUnsized(const PreparedNet& prepared,
                  const std::vector<VarInfo>& infos, const OffloadPlan& plan) {
  if (plan.unsized.empty()) return;
  constexpr size_t kListed = 20;
  std::printf(
      "unsized: %zu variable(s) whose size depends on values computed "
      "during the run, left out of the figures above\n",
      plan.unsized.size());
  for (size_t i = 0; i < plan.unsized.size() && i < kListed; ++i) {
    const int v = plan.unsized[i].var;
    std::printf("  %-40s %s, written by %s\n",
                prepared.var_names()[v].c_str(),
                InfoToString(infos[v]).c_str(),
                OpName(prepared.ops()[plan.unsized[i].op]).c_str());
  }
  if (plan.unsized.size() > kListed) {
    std::printf("  and %zu more\n", plan.unsized.size() - kListed);
  }
}

void PrintOffload(const PreparedNet& prepared,
                  const std::vector<VarInfo>& infos, const OffloadPlan& plan,
                  bool budgeted) {
  if (budgeted) {
    std::printf("device memory budget: %zu bytes, offload policy: %s\n",
                plan.budget, OffloadPolicyName(plan.policy));
  } else {
    std::printf("no device memory budget: each variable moves in once\n");
  }
  std::printf("peak bytes: %zu\n", plan.peak_bytes);
  std::printf("moved bytes: %zu\n", plan.moved_bytes);
  std::printf("transfers: %d\n", plan.transfers);
  PrintUnsized(prepared, infos, plan);
  if (plan.peak_step < 0) return;
  const PreparedOp& op = prepared.ops()[plan.peak_step];
  std::vector<int> resident = plan.resident_at_peak;
  std::vector<size_t> bytes(prepared.var_names().size(), 0);
  for (int v : resident) bytes[v] = BytesOf(infos[v]);
  std::stable_sort(resident.begin(), resident.end(),
                   [&](int a, int b) { return bytes[a] > bytes[b]; });
  std::printf("resident at the peak, during %s: %zu variable(s)\n",
              OpName(op).c_str(), resident.size());
  for (int v : resident) {
    std::printf("  %-40s %12zu  %s\n", prepared.var_names()[v].c_str(),
                bytes[v], InfoToString(infos[v]).c_str());
  }
}

}  // namespace

absl::Status PlanCommand(const PlanCommandOptions& options) {
  SF_ASSIGN_OR_RETURN(Place place, ParsePlace(options.place));
  SF_ASSIGN_OR_RETURN(OffloadPolicy policy,
                      ParseOffloadPolicy(options.offload_policy));
  SF_CHECK(options.batch >= 0, "--batch must be positive, got %d",
           options.batch);
  const Executor executor;
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(options.net));
  if (options.batch > 0) SetBatch(options.batch, net);
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, executor.Prepare(net, 0, place));
  if (!options.startup.empty()) {
    SF_ASSIGN_OR_RETURN(NetDef startup_net, LoadNet(options.startup));
    SF_ASSIGN_OR_RETURN(PreparedNet startup,
                        executor.Prepare(startup_net, 0, place));
    DeclareFromStartup(startup, prepared, net);
    SF_ASSIGN_OR_RETURN(prepared, executor.Prepare(net, 0, place));
  }
  const std::vector<std::string> fetches = NetOutputs(prepared);
  std::printf("net \"%s\" on %s: %zu op(s) as prepared, %zu variable(s)\n",
              net.name().c_str(), place.ToString().c_str(),
              prepared.ops().size(), prepared.var_names().size());
  // The parameters' small values (constants of shape computations) size
  // what the net computes from its inputs' shapes.
  Scope params;
  std::vector<Tensor*> bound(prepared.var_names().size(), nullptr);
  if (!options.params.empty()) {
    SF_RETURN_IF_ERROR(LoadParams(options.params, params, CPUPlace()).status());
    for (size_t v = 0; v < bound.size(); ++v) {
      Variable* var = params.FindLocalVar(prepared.var_names()[v]);
      if (var == nullptr || prepared.IsTemporary(static_cast<int>(v))) {
        continue;
      }
      SF_ASSIGN_OR_RETURN(bound[v], var->GetMutable<Tensor>());
    }
  }
  // A parameter the net declares without its size has the file's.
  std::vector<VarInfo> declared = prepared.var_infos();
  for (size_t v = 0; v < bound.size(); ++v) {
    if (bound[v] != nullptr && bound[v]->initialized() &&
        !FullyKnown(declared[v])) {
      declared[v] = InfoOf(*bound[v]);
    }
  }
  const std::vector<VarInfo> infos =
      InferFromShapes(prepared, std::move(declared), &bound);
  PrintArena(PlanMemoryFor(prepared, infos, fetches));
  const bool budgeted = options.device_memory_budget > 0;
  absl::StatusOr<OffloadPlan> offload =
      PlanOffloadFor(prepared, infos, fetches,
                     budgeted ? options.device_memory_budget
                              : kNoDeviceMemoryBudget,
                     budgeted ? policy : OffloadPolicy::kPlanned);
  if (!offload.ok() && options.params.empty() &&
      offload.status().code() == absl::StatusCode::kInvalidArgument) {
    // Imported models declare some constants without their size.
    return absl::Status(
        offload.status().code(),
        absl::StrCat(offload.status().message(),
                     "; or give --params FILE, whose tensors size the "
                     "parameters the net declares without one"));
  }
  SF_RETURN_IF_ERROR(offload.status());
  PrintOffload(prepared, infos, *offload, budgeted);
  return absl::OkStatus();
}

}  // namespace scopeflow
