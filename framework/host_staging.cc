#include "framework/host_staging.h"

#include <algorithm>

#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {

bool HostStaging::IsStaged(int v) const { return Original(v) != nullptr; }

Tensor* HostStaging::Original(int v) const {
  for (const auto& [var, tensor] : originals_) {
    if (var == v) return tensor;
  }
  return nullptr;
}

absl::Status HostStaging::StageInputs(const PreparedOp& op,
                                      std::vector<Tensor*>& tensors) {
  for (const std::vector<int>& slot : op.inputs) {
    for (int v : slot) {
      inputs_.push_back(v);
      Tensor* tensor = tensors[v];
      if (!tensor->initialized() || tensor->place().is_cpu() || IsStaged(v)) {
        continue;
      }
      SF_ASSIGN_OR_RETURN(Tensor host, tensor->CopyTo(CPUPlace()));
      host_.push_back(std::move(host));
      originals_.emplace_back(v, tensor);
      tensors[v] = &host_.back();
    }
  }
  return absl::OkStatus();
}

void HostStaging::StageOutput(int v, std::vector<Tensor*>& tensors) {
  if (IsStaged(v)) return;
  host_.emplace_back();
  originals_.emplace_back(v, tensors[v]);
  tensors[v] = &host_.back();
}

absl::Status HostStaging::Finish(const PreparedOp& op, const Place& place,
                                 std::vector<Tensor*>& tensors) {
  absl::Status status;
  for (const std::vector<int>& slot : op.outputs) {
    for (int v : slot) {
      Tensor* own = Original(v);
      const Tensor* host = tensors[v];
      if (own == nullptr || host == own || !host->initialized()) continue;
      const bool in_place =
          std::find(inputs_.begin(), inputs_.end(), v) != inputs_.end();
      if (in_place && own->initialized() && own->place() == place &&
          own->dtype() == host->dtype() && own->dims() == host->dims()) {
        status.Update(CopyBytes(place, own->raw_data(), CPUPlace(),
                                host->raw_data(), host->nbytes()));
        continue;
      }
      // Allocate keeps the buffer only where no one else views it.
      status.Update(own->Allocate(place, host->dtype(), host->dims()));
      if (status.ok()) {
        status.Update(CopyBytes(place, own->raw_data(), CPUPlace(),
                                host->raw_data(), host->nbytes()));
      }
    }
  }
  for (const auto& [v, own] : originals_) tensors[v] = own;
  return status;
}

}  // namespace scopeflow
