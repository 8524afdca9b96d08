// Runs the CPU kernel of an op that has no kernel on the device its net
// runs on: the op's inputs living on the device are copied to the host, the
// kernel writes host outputs, and those are copied back to the device into
// the variables' own tensors. Where Prepare chose such a kernel,
// PreparedOp::kernel_place is the CPU. One HostStaging serves one op call.
#ifndef SCOPEFLOW_FRAMEWORK_HOST_STAGING_H_
#define SCOPEFLOW_FRAMEWORK_HOST_STAGING_H_

#include <deque>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "platform/place.h"

namespace scopeflow {

class HostStaging {
 public:
  // Points each input variable of `op` whose tensor is not on the host at
  // a host copy of it, in `tensors` (the run's table, by variable index).
  absl::Status StageInputs(const PreparedOp& op, std::vector<Tensor*>& tensors);

  // Points output variable `v` at a host tensor for the kernel to write,
  // unless it is staged already (an input updated in place).
  void StageOutput(int v, std::vector<Tensor*>& tensors);

  // After the kernel: copies each staged output to `place` into the
  // variable's own tensor (into its buffer for an update in place, which
  // other views of the buffer then see) and points every staged variable
  // back at its own tensor.
  absl::Status Finish(const PreparedOp& op, const Place& place,
                      std::vector<Tensor*>& tensors);

 private:
  bool IsStaged(int v) const;
  Tensor* Original(int v) const;

  // Host tensors; a deque keeps their addresses as it grows.
  std::deque<Tensor> host_;
  // (variable, its own tensor) for each staged variable.
  std::vector<std::pair<int, Tensor*>> originals_;
  std::vector<int> inputs_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_HOST_STAGING_H_
