// Carries out an OffloadPlan in one run: moves the run's variables between
// their host tensors and device memory before and after each op.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_OFFLOAD_RUN_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_OFFLOAD_RUN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/memory/device_memory.h"
#include "framework/memory/offload_plan.h"
#include "framework/op_context.h"
#include "framework/prepared_net.h"
#include "framework/tensor.h"

namespace scopeflow {

// Belongs to one run on one thread; `device`, `prepared` and the run's
// tensor table outlive it. While a variable is on the device, the
// run's tensor (for a parameter: the scope's own Tensor object) views
// device memory and this keeps its host tensor; when it leaves, the host
// tensor takes its place again. A run that fails part way puts the host
// tensors back as they were when the variables left the host.
class OffloadRun {
 public:
  OffloadRun(OffloadPlan plan, DeviceMemory& device,
             const PreparedNet& prepared, std::vector<Tensor*>& tensors);

  // Plans a run of `prepared` fetching `fetches` under `budget` bytes of
  // `device` (PlanOffloadFor), its variables being what `infos` says (the
  // run's shapes, infer_from_shapes.h), to carry it out on `tensors`.
  // Errors: those of PlanOffloadFor, no device, a device whose kernels run
  // elsewhere than the net's.
  static absl::StatusOr<std::unique_ptr<OffloadRun>> Start(
      const PreparedNet& prepared, const std::vector<VarInfo>& infos,
      absl::Span<const std::string> fetches, size_t budget,
      OffloadPolicy policy, DeviceMemory* device,
      std::vector<Tensor*>& tensors);

  const OffloadPlan& plan() const { return plan_; }
  ~OffloadRun();

  OffloadRun(const OffloadRun&) = delete;
  OffloadRun& operator=(const OffloadRun&) = delete;

  // Before op `position`'s outputs are allocated: evictions, loads (waited
  // for), allocations, prefetches (not waited for).
  absl::Status BeforeOp(size_t position);
  // After its kernel: an output left viewing another variable's memory (as
  // reshape leaves it) gets device memory of its own, then the step's
  // write-backs and frees.
  absl::Status AfterOp(size_t position);
  // After the last op: the variables still on the device go back; waits
  // for every copy.
  absl::Status Finish();

 private:
  absl::Status Apply(const OffloadAction& action);
  absl::Status Load(int v, bool prefetch);
  absl::Status AllocateOutput(int v, size_t bytes);
  absl::Status WriteBack(int v);
  // Waits for write-backs queued, whose device memory is freed once done.
  absl::Status SettleWriteBacks();

  const OffloadPlan plan_;
  DeviceMemory& device_;
  const PreparedNet& prepared_;
  std::vector<Tensor*>& tensors_;
  // Per variable: its host tensor while it is on the device; the device
  // memory given it (to tell a view of other memory).
  std::vector<Tensor> home_;
  std::vector<const Allocation*> device_buffer_;
  std::vector<char> on_device_;
  // The last copy queued; the last write-back not yet waited for; the
  // newest load this op waits for.
  uint64_t last_ticket_ = 0;
  uint64_t pending_write_back_ = 0;
  uint64_t needed_ticket_ = 0;
  bool finished_ = false;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_OFFLOAD_RUN_H_
