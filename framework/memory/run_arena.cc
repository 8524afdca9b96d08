#include "framework/memory/run_arena.h"

#include <cstdint>
#include <utility>

#include "framework/memory/op_uses.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<bool> RunArena::Assign(int v, DataType dtype, const Dims& dims,
                                      Tensor& tensor) {
  const int64_t offset = plan_.offset_of[v];
  if (offset < 0 || fetched_[v]) return false;
  VarInfo info;
  info.dtype = dtype;
  info.dims = dims;
  info.has_dims = true;
  const size_t bytes = BytesOf(info);
  // A run that inferred other shapes than Prepare's allocates on its own.
  if (bytes == 0 || bytes > plan_.uses[plan_.index_of[v]].bytes) {
    return false;
  }
  if (memory_ == nullptr) {
    SF_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(place_));
    SF_ASSIGN_OR_RETURN(memory_, allocator->Allocate(plan_.arena.arena_bytes));
  }
  char* data = static_cast<char*>(memory_->data()) + offset;
  SF_ASSIGN_OR_RETURN(tensor, Tensor::FromExternal(data, dtype, dims, place_,
                                                   [memory = memory_] {}));
  return true;
}

bool RunArena::Contains(const Tensor& tensor) const {
  if (memory_ == nullptr || !tensor.initialized()) return false;
  const char* data = static_cast<const char*>(tensor.raw_data());
  const char* base = static_cast<const char*>(memory_->data());
  return data >= base && data < base + memory_->size();
}

absl::Status RunArena::AfterOp(const PreparedOp& op,
                               std::vector<Tensor*>& tensors) {
  if (memory_ == nullptr) return absl::OkStatus();
  const char* base = static_cast<const char*>(memory_->data());
  for (const auto& slot : op.outputs) {
    for (int v : slot) {
      Tensor* tensor = tensors[v];
      if (tensor == nullptr || !Contains(*tensor)) continue;
      const int64_t offset = plan_.offset_of[v];
      const Tensor& view = *tensor;
      if (offset >= 0 && !fetched_[v] &&
          static_cast<const char*>(view.raw_data()) == base + offset) {
        continue;
      }
      SF_ASSIGN_OR_RETURN(*tensor, view.CopyTo(view.place()));
    }
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
