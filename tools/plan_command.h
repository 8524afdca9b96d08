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
// transfers and the variables resident at the peak. Errors: those of
// Prepare, a variable whose size is unknown (name it, or give --batch), a
// budget below what one op needs (naming the op and its bytes).
absl::Status PlanCommand(const PlanCommandOptions& options);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_PLAN_COMMAND_H_
