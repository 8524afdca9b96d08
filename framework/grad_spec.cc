#include "framework/grad_spec.h"

#include "absl/strings/str_cat.h"

namespace scopeflow {

std::string GradName(absl::string_view name) {
  return absl::StrCat(name, "@GRAD");
}

namespace {

const OpSlot* FindSlot(const google::protobuf::RepeatedPtrField<OpSlot>& slots,
                       absl::string_view name) {
  for (const OpSlot& slot : slots) {
    if (slot.slot() == name) return &slot;
  }
  return nullptr;
}

std::vector<std::string> VarsOf(const OpSlot* slot) {
  if (slot == nullptr) return {};
  return std::vector<std::string>(slot->vars().begin(), slot->vars().end());
}

}  // namespace

int GradOpContext::ForwardSlotIndex(bool input, absl::string_view slot) const {
  const auto& slots = input ? forward_.inputs() : forward_.outputs();
  for (int i = 0; i < slots.size(); ++i) {
    if (slots[i].slot() == slot) return i;
  }
  return -1;
}

std::vector<std::string> GradOpContext::Input(absl::string_view slot) const {
  return VarsOf(FindSlot(forward_.inputs(), slot));
}

std::vector<std::string> GradOpContext::Output(absl::string_view slot) const {
  return VarsOf(FindSlot(forward_.outputs(), slot));
}

std::vector<std::string> GradOpContext::InputGrad(
    absl::string_view slot) const {
  const int i = ForwardSlotIndex(/*input=*/true, slot);
  return i < 0 ? std::vector<std::string>() : input_grads_[i];
}

std::vector<std::string> GradOpContext::OutputGrad(
    absl::string_view slot) const {
  const int i = ForwardSlotIndex(/*input=*/false, slot);
  return i < 0 ? std::vector<std::string>() : output_grads_[i];
}

OpDef& GradOpContext::AddOp(absl::string_view type) {
  ops_.emplace_back();
  ops_.back().set_type(std::string(type));
  return ops_.back();
}

void GradOpContext::Bind(google::protobuf::RepeatedPtrField<OpSlot>* slots,
                         absl::string_view slot,
                         const std::vector<std::string>& vars) {
  OpSlot* bound = nullptr;
  for (const std::string& var : vars) {
    if (var.empty()) continue;
    if (bound == nullptr) {
      bound = slots->Add();
      bound->set_slot(std::string(slot));
    }
    bound->add_vars(var);
  }
}

void GradOpContext::SetAttr(OpDef& op, absl::string_view name,
                            const AttrValue& value) {
  AttrDef* attr = op.add_attrs();
  attr->set_name(std::string(name));
  AttrValueToProto(value, *attr);
}

void GradOpContext::CopyAttrs(OpDef& op) const {
  *op.mutable_attrs() = forward_.attrs();
}

absl::Status GradSpec::Make(GradOpContext& context) const {
  if (maker_ != nullptr) return maker_(context);
  OpDef& op = context.AddOp(grad_type_);
  for (const std::string& slot : read_inputs_) {
    GradOpContext::SetInput(op, slot, context.Input(slot));
  }
  for (const std::string& slot : read_outputs_) {
    GradOpContext::SetInput(op, slot, context.Output(slot));
  }
  for (const std::string& slot : output_grads_) {
    GradOpContext::SetInput(op, GradName(slot), context.OutputGrad(slot));
  }
  for (const std::string& slot : input_grads_) {
    GradOpContext::SetOutput(op, GradName(slot), context.InputGrad(slot));
  }
  context.CopyAttrs(op);
  return absl::OkStatus();
}

}  // namespace scopeflow
