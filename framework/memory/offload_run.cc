#include "framework/memory/offload_run.h"

#include <algorithm>
#include <utility>

#include "framework/memory/op_uses.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<std::unique_ptr<OffloadRun>> OffloadRun::Start(
    const PreparedNet& prepared, const std::vector<VarInfo>& infos,
    absl::Span<const std::string> fetches, size_t budget, OffloadPolicy policy,
    DeviceMemory* device, std::vector<Tensor*>& tensors) {
  SF_CHECK(device != nullptr,
           "a device memory budget needs the device's memory "
           "(ExecutorOptions::device_memory)");
  SF_CHECK(device->place() == prepared.place(),
           "a device memory budget on %s: the net runs on %s",
           device->place().ToString(), prepared.place().ToString());
  SF_ASSIGN_OR_RETURN(OffloadPlan plan, PlanOffloadFor(prepared, infos, fetches,
                                                      budget, policy));
  return std::make_unique<OffloadRun>(std::move(plan), *device, prepared,
                                      tensors);
}

OffloadRun::OffloadRun(OffloadPlan plan, DeviceMemory& device,
                       const PreparedNet& prepared,
                       std::vector<Tensor*>& tensors)
    : plan_(std::move(plan)),
      device_(device),
      prepared_(prepared),
      tensors_(tensors),
      home_(tensors.size()),
      device_buffer_(tensors.size(), nullptr),
      on_device_(tensors.size(), false) {}

OffloadRun::~OffloadRun() {
  if (finished_) return;
  device_.Synchronize().IgnoreError();
  for (size_t v = 0; v < tensors_.size(); ++v) {
    if (on_device_[v] && home_[v].initialized()) {
      *tensors_[v] = std::move(home_[v]);
    }
  }
}

absl::Status OffloadRun::SettleWriteBacks() {
  if (pending_write_back_ == 0) return absl::OkStatus();
  SF_RETURN_IF_ERROR(device_.Wait(pending_write_back_));
  pending_write_back_ = 0;
  return absl::OkStatus();
}

absl::Status OffloadRun::Load(int v, bool prefetch) {
  SF_RETURN_IF_ERROR(SettleWriteBacks());
  Tensor& var = *tensors_[v];
  SF_CHECK_CODE(var.initialized(), absl::StatusCode::kFailedPrecondition,
                "variable \"%s\" is read before anything was written to it, "
                "so there is nothing to copy to the device",
                prepared_.var_names()[v]);
  home_[v] = std::move(var);
  var.Clear();
  SF_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> memory,
                      device_.Allocate(home_[v].nbytes()));
  device_buffer_[v] = memory.get();
  var.AdoptBuffer(std::move(memory));
  SF_RETURN_IF_ERROR(
      var.Allocate(device_.place(), home_[v].dtype(), home_[v].dims()));
  on_device_[v] = true;
  SF_ASSIGN_OR_RETURN(last_ticket_, device_.CopyToDevice(home_[v], var));
  if (!prefetch) needed_ticket_ = last_ticket_;
  return absl::OkStatus();
}

absl::Status OffloadRun::AllocateOutput(int v, size_t bytes) {
  SF_RETURN_IF_ERROR(SettleWriteBacks());
  Tensor& var = *tensors_[v];
  // A host value it held before is kept, for a failed run to restore.
  home_[v] = std::move(var);
  var.Clear();
  SF_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> memory,
                      device_.Allocate(bytes));
  device_buffer_[v] = memory.get();
  // The op's Allocate keeps this buffer, being its only user and large
  // enough.
  var.AdoptBuffer(std::move(memory));
  on_device_[v] = true;
  return absl::OkStatus();
}

absl::Status OffloadRun::WriteBack(int v) {
  Tensor& var = *tensors_[v];
  Tensor& home = home_[v];
  // Into the old host buffer where nothing else views it.
  SF_RETURN_IF_ERROR(home.Allocate(CPUPlace(), var.dtype(), var.dims()));
  SF_ASSIGN_OR_RETURN(last_ticket_, device_.CopyToHost(var, home));
  pending_write_back_ = last_ticket_;
  var = std::move(home);
  home.Clear();
  device_buffer_[v] = nullptr;
  on_device_[v] = false;
  return absl::OkStatus();
}

absl::Status OffloadRun::Apply(const OffloadAction& action) {
  const int v = action.var;
  switch (action.kind) {
    case OffloadAction::kLoad:
      return Load(v, action.prefetch);
    case OffloadAction::kAllocate:
      return AllocateOutput(v, action.bytes);
    case OffloadAction::kWriteBack:
      return WriteBack(v);
    case OffloadAction::kDrop:
      *tensors_[v] = std::move(home_[v]);
      home_[v].Clear();
      break;
    case OffloadAction::kDie:
      tensors_[v]->Clear();
      home_[v].Clear();
      break;
  }
  device_buffer_[v] = nullptr;
  on_device_[v] = false;
  return absl::OkStatus();
}

absl::Status OffloadRun::BeforeOp(size_t position) {
  // Prefetches queued by the op before are waited for too: they were
  // queued before anything this op queues.
  needed_ticket_ = last_ticket_;
  for (const OffloadAction& action : plan_.steps[position].before) {
    SF_RETURN_IF_ERROR(Apply(action));
  }
  // The op's inputs are on the device, and no copy holds its buffers
  // (an op updating one in place must find itself its only user).
  return device_.Wait(needed_ticket_);
}

absl::Status OffloadRun::AfterOp(size_t position) {
  const PreparedOp& op = prepared_.ops()[position];
  for (const auto& slot : op.outputs) {
    for (int v : slot) {
      Tensor& var = *tensors_[v];
      if (!on_device_[v] || !var.initialized() ||
          var.buffer() == device_buffer_[v]) {
        continue;
      }
      SF_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> memory,
                          device_.Allocate(var.nbytes()));
      device_buffer_[v] = memory.get();
      Tensor own;
      own.AdoptBuffer(std::move(memory));
      SF_RETURN_IF_ERROR(own.Allocate(device_.place(), var.dtype(), var.dims()));
      SF_RETURN_IF_ERROR(device_.CopyOnDevice(var, own));
      var = std::move(own);
    }
  }
  for (const OffloadAction& action : plan_.steps[position].after) {
    SF_RETURN_IF_ERROR(Apply(action));
  }
  return absl::OkStatus();
}

absl::Status OffloadRun::Finish() {
  for (const OffloadAction& action : plan_.finish) {
    SF_RETURN_IF_ERROR(Apply(action));
  }
  SF_RETURN_IF_ERROR(device_.Synchronize());
  finished_ = true;
  return absl::OkStatus();
}

}  // namespace scopeflow
