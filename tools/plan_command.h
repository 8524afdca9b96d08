// scopeflow plan: a net's static memory plan and, under a device memory
// budget, its moves between host and device, printed without running it.
#ifndef SCOPEFLOW_TOOLS_PLAN_COMMAND_H_
#define SCOPEFLOW_TOOLS_PLAN_COMMAND_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace scopeflow {

struct PlanCommandOptions {
  std::string net;
  // A startup net whose inferred parameter shapes fill in those the net
  // does not declare.
  std::string startup;
  // A parameter file: its small tensors (constants of shape computations,
  // as an imported model's) size what the net computes from shapes.
  std::string params;
  // Above 0: the size of every unknown (-1) dimension of the net's inputs.
  int64_t batch = 0;
  // 0: no budget (everything stays on the device once there).
  uint64_t device_memory_budget = 0;
  std::string offload_policy = "planned";
  std::string place = "cpu";
};

// Prepares the net as `scopeflow run` would and prints its arena plan
// (temporaries placed, arena bytes against their sum and their live peak),
// then the device plan: "peak bytes: N", "moved bytes: N", the number of
// transfers and the variables resident at the peak, and the variables
// whose size depends on values computed in the run (left out of those
// figures). Errors: those of Prepare, an input or parameter whose size is
// unknown (naming it: give --batch), a budget below what one op needs
// (naming the op and its bytes), a budget for a net with variables sized
// only in the run (naming the first op writing one).
absl::Status PlanCommand(const PlanCommandOptions& options);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_PLAN_COMMAND_H_
