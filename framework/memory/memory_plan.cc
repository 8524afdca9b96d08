#include "framework/memory/memory_plan.h"

#include <memory>
#include <utility>

#include "framework/memory/infer_from_shapes.h"
#include "framework/memory/memory_plan_cache.h"
#include "framework/memory/op_uses.h"
#include "platform/allocator.h"

namespace scopeflow {

MemoryPlan PlanMemoryFor(const PreparedNet& prepared,
                         const std::vector<VarInfo>& infos,
                         absl::Span<const std::string> fetches,
                         size_t min_bytes) {
  const int n = static_cast<int>(prepared.var_names().size());
  const std::vector<OpUses> op_uses = CollectOpUses(prepared);
  std::vector<int> first(n, -1);
  std::vector<int> last(n, -1);
  std::vector<bool> written_first(n, false);
  // Out of the arena whatever its lifetime.
  std::vector<bool> excluded(n, false);
  for (const std::string& name : fetches) {
    const int v = prepared.VarIndex(name);
    if (v >= 0) excluded[v] = true;
  }
  for (int i = 0; i < static_cast<int>(op_uses.size()); ++i) {
    const PreparedOp& op = prepared.ops()[i];
    // A run allocates such outputs from what it infers or reads back.
    const bool dynamic =
        op.spec->control_flow() || op.spec->infer() == nullptr;
    for (int v : op_uses[i].reads) {
      if (first[v] < 0) first[v] = i;
      last[v] = i;
      if (op.spec->control_flow()) excluded[v] = true;
    }
    for (int v : op_uses[i].writes) {
      if (first[v] < 0) {
        first[v] = i;
        written_first[v] = true;
      }
      last[v] = i;
      if (dynamic) excluded[v] = true;
    }
  }

  MemoryPlan plan;
  plan.offset_of.assign(n, -1);
  plan.index_of.assign(n, -1);
  for (int v = 0; v < n; ++v) {
    if (!prepared.IsTemporary(v) || first[v] < 0) continue;
    const size_t bytes = BytesOf(infos[v]);
    if (excluded[v] || !written_first[v] || prepared.is_input(v) ||
        bytes == 0 || bytes < min_bytes) {
      ++plan.unplanned_temporaries;
      continue;
    }
    plan.vars.push_back(v);
    plan.uses.push_back({bytes, first[v], last[v]});
  }
  plan.arena = PlanArena(plan.uses, kAllocationAlignment);
  for (size_t i = 0; i < plan.vars.size(); ++i) {
    plan.offset_of[plan.vars[i]] = static_cast<int64_t>(plan.arena.offsets[i]);
    plan.index_of[plan.vars[i]] = static_cast<int>(i);
  }
  return plan;
}

std::shared_ptr<const MemoryPlan> CachedMemoryPlan(
    const PreparedNet& prepared, const std::vector<VarInfo>& run_infos,
    const std::vector<Tensor*>* bound) {
  MemoryPlanCache::Signature signature;
  if (prepared.infers_at_run()) {
    for (int v : prepared.input_vars()) {
      const Dims& dims = run_infos[v].dims;
      signature.insert(signature.end(), dims.begin(), dims.end());
      signature.push_back(static_cast<int64_t>(dims.size()));
    }
  }
  return prepared.memory_plans().Get(signature, [&] {
    return std::make_shared<const MemoryPlan>(PlanMemoryFor(
        prepared,
        prepared.infers_at_run() ? InferFromShapes(prepared, run_infos, bound)
                                 : prepared.var_infos(),
        {}, kSmallestArenaTensor));
  });
}

}  // namespace scopeflow
