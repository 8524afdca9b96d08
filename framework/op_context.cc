#include "framework/op_context.h"

#include <cassert>

#include "absl/strings/str_format.h"

namespace scopeflow {

std::string OpName(const PreparedOp& op) {
  if (op.written_type.empty()) {
    return absl::StrFormat("op %d (%s)", op.index, op.spec->type());
  }
  return absl::StrFormat("op %d (%s, run as %s)", op.index, op.written_type,
                         op.spec->type());
}

namespace {

int SlotSize(const std::vector<std::vector<int>>& slots, int slot) {
  return slot < 0 ? 0 : static_cast<int>(slots[slot].size());
}

}  // namespace

int InferContext::InputCount(absl::string_view slot) const {
  return SlotSize(op_.inputs, op_.spec->InputIndex(slot));
}

int InferContext::OutputCount(absl::string_view slot) const {
  return SlotSize(op_.outputs, op_.spec->OutputIndex(slot));
}

int InferContext::InputVar(absl::string_view slot, int i) const {
  const int index = op_.spec->InputIndex(slot);
  assert(index >= 0 && i < static_cast<int>(op_.inputs[index].size()));
  return op_.inputs[index][i];
}

int InferContext::OutputVar(absl::string_view slot, int i) const {
  const int index = op_.spec->OutputIndex(slot);
  assert(index >= 0 && i < static_cast<int>(op_.outputs[index].size()));
  return op_.outputs[index][i];
}

const VarInfo& InferContext::Input(absl::string_view slot, int i) const {
  return table_[InputVar(slot, i)];
}

const std::string& InferContext::InputName(absl::string_view slot,
                                           int i) const {
  return names_[InputVar(slot, i)];
}

const Tensor* InferContext::InputValue(absl::string_view slot, int i) const {
  return tensors_ == nullptr ? nullptr : tensors_[InputVar(slot, i)];
}

const std::string& InferContext::OutputName(absl::string_view slot,
                                            int i) const {
  return names_[OutputVar(slot, i)];
}

void InferContext::SetOutput(absl::string_view slot, int i, DataType dtype,
                             Dims dims) {
  VarInfo& info = table_[OutputVar(slot, i)];
  info.dtype = dtype;
  info.dims = std::move(dims);
  info.has_dims = true;
}

void InferContext::SetOutput(absl::string_view slot, int i,
                             const VarInfo& info) {
  table_[OutputVar(slot, i)] = info;
}

int KernelContext::InputCount(absl::string_view slot) const {
  return SlotSize(op_.inputs, op_.spec->InputIndex(slot));
}

int KernelContext::OutputCount(absl::string_view slot) const {
  return SlotSize(op_.outputs, op_.spec->OutputIndex(slot));
}

int KernelContext::InputVar(absl::string_view slot, int i) const {
  const int index = op_.spec->InputIndex(slot);
  assert(index >= 0 && i < static_cast<int>(op_.inputs[index].size()));
  return op_.inputs[index][i];
}

int KernelContext::OutputVar(absl::string_view slot, int i) const {
  const int index = op_.spec->OutputIndex(slot);
  assert(index >= 0 && i < static_cast<int>(op_.outputs[index].size()));
  return op_.outputs[index][i];
}

const Tensor& KernelContext::Input(absl::string_view slot, int i) const {
  return *tensors_[InputVar(slot, i)];
}

Tensor* KernelContext::Output(absl::string_view slot, int i) const {
  return tensors_[OutputVar(slot, i)];
}

const std::string& KernelContext::InputName(absl::string_view slot,
                                            int i) const {
  return names_[InputVar(slot, i)];
}

const std::string& KernelContext::OutputName(absl::string_view slot,
                                             int i) const {
  return names_[OutputVar(slot, i)];
}

const PreparedNet* KernelContext::Block(absl::string_view attr) const {
  for (const auto& [name, block] : op_.blocks) {
    if (name == attr) return block.get();
  }
  return nullptr;
}

}  // namespace scopeflow
