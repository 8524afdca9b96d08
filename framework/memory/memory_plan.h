// The static memory plan of a prepared net: which of a run's temporaries
// share one arena, and where each lies in it.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_MEMORY_PLAN_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_MEMORY_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "framework/memory/arena_plan.h"
#include "framework/memory/infer_from_shapes.h"
#include "framework/prepared_net.h"

namespace scopeflow {

// Immutable once made; shared by the runs of a net.
struct MemoryPlan {
  // The temporaries placed in the arena, and their lifetimes (op positions
  // in prepared.ops(): the first op that writes one, the last that uses it).
  std::vector<int> vars;
  std::vector<TensorUse> uses;
  ArenaPlan arena;
  // Per variable of the net: its offset in the arena, or -1 for one a run
  // allocates on its own.
  std::vector<int64_t> offset_of;
  // Per variable of the net: its index in `vars`, or -1.
  std::vector<int> index_of;
  // Temporaries left to their own allocations: shapes known only at run
  // time, written by a control-flow op, read or written by one (its steps
  // may keep views of them), fed, fetched, or below the smallest size
  // planned.
  int unplanned_temporaries = 0;
};

// Plans the temporaries of `prepared` whose dtype and shape `infos` (by
// default Prepare's) fully gives, of `min_bytes` or more, written by ops
// that infer their outputs (not control-flow ops). `fetches` stay out of
// the arena: the caller keeps them after the run.
MemoryPlan PlanMemoryFor(const PreparedNet& prepared,
                         const std::vector<VarInfo>& infos,
                         absl::Span<const std::string> fetches,
                         size_t min_bytes = 0);
inline MemoryPlan PlanMemory(const PreparedNet& prepared,
                             absl::Span<const std::string> fetches,
                             size_t min_bytes = 0) {
  return PlanMemoryFor(prepared, prepared.var_infos(), fetches, min_bytes);
}

// The smallest temporary a run places in its arena. Smaller ones go to
// the run's pool of dead buffers (run_buffer_pool.h), which hands them out
// without the allocator; an arena view costs a few small allocations of
// its own, which a net of many tiny tensors would feel.
inline constexpr size_t kSmallestArenaTensor = 4097;

// The plan of a run whose inputs and parameters hold what `run_infos`
// says (prepared.var_infos() where Prepare knew every shape), `bound` its
// tensors (or null): PlanMemoryFor(prepared, InferFromShapes(prepared,
// run_infos, bound) (infer_from_shapes.h), {},
// kSmallestArenaTensor), made by the first run whose inputs have those
// shapes and kept in prepared.memory_plans() for the next. Runs leave the
// fetched variables they find in it out of the arena at run time.
// Thread-safe.
std::shared_ptr<const MemoryPlan> CachedMemoryPlan(
    const PreparedNet& prepared, const std::vector<VarInfo>& run_infos,
    const std::vector<Tensor*>* bound = nullptr);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_MEMORY_PLAN_H_
