#include "framework/op_spec.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_join.h"
#include "framework/kernel_registry.h"

namespace scopeflow {

OpSpec& OpSpec::Input(std::string name, bool optional, bool variadic) {
  inputs_.push_back({std::move(name), optional, variadic});
  return *this;
}

OpSpec& OpSpec::Output(std::string name, bool optional, bool variadic) {
  outputs_.push_back({std::move(name), optional, variadic});
  return *this;
}

OpSpec& OpSpec::ScopesInput(std::string name) {
  inputs_.push_back({std::move(name), /*optional=*/true, /*variadic=*/false,
                     /*scopes=*/true});
  return *this;
}

OpSpec& OpSpec::ScopesOutput(std::string name) {
  outputs_.push_back({std::move(name), /*optional=*/true, /*variadic=*/false,
                      /*scopes=*/true});
  return *this;
}

OpSpec& OpSpec::ControlFlow(BlockRewriteFn rewrite) {
  control_flow_ = true;
  block_rewrite_ = std::move(rewrite);
  return *this;
}

OpSpec& OpSpec::Layout(LayoutRole role) {
  layout_role_ = role;
  return *this;
}

OpSpec& OpSpec::Random() {
  random_ = true;
  return *this;
}

bool OpSpec::pure() const {
  if (random_ || control_flow_ || !in_place_.empty()) return false;
  for (const std::vector<SlotSpec>* slots : {&inputs_, &outputs_}) {
    for (const SlotSpec& slot : *slots) {
      if (slot.scopes) return false;
    }
  }
  return true;
}

OpSpec& OpSpec::Attr(std::string name, AttrType type, AttrCheckFn check) {
  attrs_.push_back({std::move(name), type, std::nullopt, std::move(check)});
  return *this;
}

OpSpec& OpSpec::Attr(std::string name, AttrType type, AttrValue default_value,
                     AttrCheckFn check) {
  attrs_.push_back(
      {std::move(name), type, std::move(default_value), std::move(check)});
  return *this;
}

OpSpec& OpSpec::Infer(InferFn infer) {
  infer_ = std::move(infer);
  return *this;
}

OpSpec& OpSpec::Kernel(DeviceType device, DataType dtype, KernelFn kernel) {
  kernels_[KernelKey{device, dtype}] = kernel;
  return *this;
}

OpSpec& OpSpec::KernelDtypeFromInput(std::string slot) {
  kernel_dtype_from_input_ = true;
  kernel_dtype_slot_ = std::move(slot);
  return *this;
}

OpSpec& OpSpec::KernelDtypeFromOutput(std::string slot) {
  kernel_dtype_from_input_ = false;
  kernel_dtype_slot_ = std::move(slot);
  return *this;
}

OpSpec& OpSpec::Grad(GradSpec grad) {
  grad_ = std::move(grad);
  return *this;
}

OpSpec& OpSpec::InPlace(std::string output, std::string input) {
  in_place_.emplace_back(std::move(output), std::move(input));
  return *this;
}

int OpSpec::InPlaceInput(int output) const {
  // Asked for every output of every op at each run; most ops have none.
  if (in_place_.empty()) return -1;
  if (output < 0 || output >= static_cast<int>(outputs_.size())) return -1;
  for (const auto& [out, in] : in_place_) {
    if (out == outputs_[output].name) return InputIndex(in);
  }
  return -1;
}

int OpSpec::kernel_dtype_slot() const {
  if (kernel_dtype_slot_.empty()) return 0;
  return kernel_dtype_from_input_ ? InputIndex(kernel_dtype_slot_)
                                  : OutputIndex(kernel_dtype_slot_);
}

namespace {

// Slot and attribute names are a few characters, and kernels look them up
// on every call: an inline loop beats a call to memcmp.
bool SameName(const std::string& a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

int IndexOf(const std::vector<SlotSpec>& slots, absl::string_view name) {
  for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
    if (SameName(slots[i].name, name)) return i;
  }
  return -1;
}

}  // namespace

int OpSpec::InputIndex(absl::string_view slot) const {
  return IndexOf(inputs_, slot);
}

int OpSpec::OutputIndex(absl::string_view slot) const {
  return IndexOf(outputs_, slot);
}

const AttrSpec* OpSpec::FindAttr(absl::string_view name) const {
  for (const AttrSpec& attr : attrs_) {
    if (SameName(attr.name, name)) return &attr;
  }
  return nullptr;
}

KernelFn OpSpec::FindKernel(const KernelKey& key) const {
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return it->second;
  return FindRegisteredKernel(type_, key);
}

std::string OpSpec::KernelDtypes(DeviceType device) const {
  std::vector<DataType> dtypes;
  for (const auto& [key, kernel] : kernels_) {
    if (key.device == device) dtypes.push_back(key.dtype);
  }
  AppendRegisteredKernelDtypes(type_, device, dtypes);
  std::vector<std::string> names;
  for (DataType dtype : dtypes) names.push_back(DataTypeName(dtype));
  std::sort(names.begin(), names.end());
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry registry;
  return registry;
}

OpSpec& OpRegistry::Add(absl::string_view type) {
  std::unique_ptr<OpSpec>& spec = specs_[type];
  if (spec != nullptr) {
    std::fprintf(stderr, "scopeflow: op type \"%s\" is registered twice\n",
                 std::string(type).c_str());
    std::abort();
  }
  spec = std::make_unique<OpSpec>(std::string(type));
  return *spec;
}

const OpSpec* OpRegistry::Find(absl::string_view type) const {
  auto it = specs_.find(type);
  return it == specs_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::Types() const {
  std::vector<std::string> types;
  for (const auto& entry : specs_) types.push_back(entry.first);
  std::sort(types.begin(), types.end());
  return types;
}

}  // namespace scopeflow
