// One run's arena: the memory its planned temporaries share (MemoryPlan),
// allocated once when the first of them is written.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_RUN_ARENA_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_RUN_ARENA_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "framework/data_type.h"
#include "framework/memory/memory_plan.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "platform/allocator.h"
#include "platform/place.h"

namespace scopeflow {

// Belongs to one run on one thread. The arena's memory lives as long as
// any tensor viewing it: a view that outlives the run (kept by a kernel)
// keeps the whole arena, never a region reused under it, because the run
// never reuses a region before its variable's last reader has run and
// copies out any output that views another variable's region (AfterOp).
class RunArena {
 public:
  // `plan` must outlive the arena; `fetched` flags (per variable) the
  // variables the caller keeps, which stay out of it.
  RunArena(const MemoryPlan& plan, const Place& place,
           const std::vector<char>& fetched)
      : plan_(plan), place_(place), fetched_(fetched) {}

  // Makes `tensor` a view of variable v's region, of `dtype` and `dims`,
  // where v is planned and they fill the region's bytes (the next Allocate
  // then keeps it); false where v is allocated on its own.
  absl::StatusOr<bool> Assign(int v, DataType dtype, const Dims& dims,
                              Tensor& tensor);

  // After `op` ran: an output left viewing memory of the arena that is not
  // its own region (a kernel that shares its input's buffer, as reshape
  // does) gets a copy of its own, since that region is reused once its
  // variable dies.
  absl::Status AfterOp(const PreparedOp& op, std::vector<Tensor*>& tensors);

  // Whether `tensor`'s elements lie in the arena.
  bool Contains(const Tensor& tensor) const;

 private:
  const MemoryPlan& plan_;
  const Place place_;
  const std::vector<char>& fetched_;
  std::shared_ptr<Allocation> memory_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_RUN_ARENA_H_
