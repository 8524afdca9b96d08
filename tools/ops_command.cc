#include "tools/ops_command.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/onnx/onnx_op_map.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Values of `type` outside what checks admit: the most negative integer,
// NaN, a control character, and for lists also the empty list (which
// checks of a list's length refuse). None for types whose every value may
// be legal (bools, blocks).
std::vector<AttrValue> ProbeValues(AttrType type) {
  constexpr int32_t kInt = std::numeric_limits<int32_t>::min();
  constexpr int64_t kInt64 = std::numeric_limits<int64_t>::min();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::string odd = "\x01";
  switch (type) {
    case AttrType::kInt:
      return {AttrValue(kInt)};
    case AttrType::kInt64:
      return {AttrValue(kInt64)};
    case AttrType::kFloat:
      return {AttrValue(nan)};
    case AttrType::kString:
      return {AttrValue(odd)};
    case AttrType::kInts:
      return {AttrValue(std::vector<int32_t>{}),
              AttrValue(std::vector<int32_t>{kInt})};
    case AttrType::kInt64s:
      return {AttrValue(std::vector<int64_t>{}),
              AttrValue(std::vector<int64_t>{kInt64})};
    case AttrType::kFloats:
      return {AttrValue(std::vector<float>{}),
              AttrValue(std::vector<float>{nan})};
    case AttrType::kStrings:
      return {AttrValue(std::vector<std::string>{}),
              AttrValue(std::vector<std::string>{odd})};
    default:
      return {};
  }
}

// An attribute value as the op reference prints it.
struct ValuePrinter {
  std::string operator()(int32_t v) const { return absl::StrCat(v); }
  std::string operator()(int64_t v) const { return absl::StrCat(v); }
  std::string operator()(float v) const { return absl::StrCat(v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::string& v) const {
    return absl::StrCat("\"", v, "\"");
  }
  std::string operator()(const std::vector<std::string>& v) const {
    std::vector<std::string> quoted;
    for (const std::string& s : v) {
      quoted.push_back(absl::StrCat("\"", s, "\""));
    }
    return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
  }
  std::string operator()(const std::vector<bool>& v) const {
    std::vector<std::string> names;
    for (bool b : v) names.push_back(b ? "true" : "false");
    return absl::StrCat("[", absl::StrJoin(names, ", "), "]");
  }
  template <typename T>
  std::string operator()(const std::vector<T>& v) const {
    return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
  }
  std::string operator()(BlockIndex v) const {
    return absl::StrCat("block ", v.index);
  }
};

std::string ValueToString(const AttrValue& value) {
  return std::visit(ValuePrinter(), value);
}

// "X", "X (optional)", "X (optional, variadic)", "Steps (list of scopes)".
std::string SlotText(const SlotSpec& slot) {
  std::vector<std::string> notes;
  if (slot.optional) notes.push_back("optional");
  if (slot.variadic) notes.push_back("variadic");
  if (slot.scopes) notes.push_back("list of scopes");
  return notes.empty()
             ? slot.name
             : absl::StrCat(slot.name, " (", absl::StrJoin(notes, ", "), ")");
}

std::string SlotNames(const std::vector<SlotSpec>& slots) {
  std::vector<std::string> names;
  for (const SlotSpec& slot : slots) {
    names.push_back(slot.optional ? absl::StrCat(slot.name, "?") : slot.name);
  }
  return absl::StrJoin(names, ", ");
}

// "type, default 0.5, must be positive" or "type, required".
std::string AttrText(const AttrSpec& attr) {
  std::string text = AttrTypeName(attr.type);
  if (attr.default_value.has_value()) {
    absl::StrAppend(&text, ", default ", ValueToString(*attr.default_value));
  } else {
    absl::StrAppend(&text, ", required");
  }
  const std::string allowed = AllowedValues(attr);
  if (!allowed.empty()) absl::StrAppend(&text, ", ", allowed);
  return text;
}

std::string GradText(const OpSpec& spec) {
  const GradSpec* grad = spec.grad();
  if (grad == nullptr) return "none";
  std::string text = grad->grad_type().empty() ? "yes" : grad->grad_type();
  if (!grad->input_grads().empty()) {
    absl::StrAppend(&text, " (differentiates ",
                    absl::StrJoin(grad->input_grads(), ", "), ")");
  }
  return text;
}

std::string OnnxText(const OpSpec& spec) {
  const std::vector<std::string> onnx =
      onnx_import::OnnxOpsImportedAs(spec.type());
  return onnx.empty() ? "none" : absl::StrJoin(onnx, ", ");
}

std::string CudaText(const OpSpec& spec) {
  return BuiltWithCuda() ? spec.KernelDtypes(DeviceType::kCUDA)
                         : "(this build has no GPU code)";
}

// Properties beyond slots and attributes, "" for none.
std::string TraitsText(const OpSpec& spec) {
  std::vector<std::string> traits;
  if (spec.control_flow()) traits.push_back("control flow (runs blocks)");
  if (spec.random()) traits.push_back("random");
  for (size_t o = 0; o < spec.outputs().size(); ++o) {
    const int in = spec.InPlaceInput(static_cast<int>(o));
    if (in >= 0) {
      traits.push_back(absl::StrCat("updates ", spec.inputs()[in].name,
                                    " in place as ", spec.outputs()[o].name));
    }
  }
  return absl::StrJoin(traits, "; ");
}

}  // namespace

std::string AllowedValues(const AttrSpec& attr) {
  if (attr.check == nullptr) return "";
  std::vector<std::string> rules;
  for (const AttrValue& probe : ProbeValues(attr.type)) {
    const absl::Status checked = attr.check(probe);
    if (checked.ok()) continue;
    std::string rule(checked.message());
    // The probe itself is no part of what is allowed.
    for (const char* got : {", got ", "; got "}) {
      const size_t at = rule.rfind(got);
      if (at != std::string::npos) rule.resize(at);
    }
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) {
      rules.push_back(rule);
    }
  }
  return absl::StrJoin(rules, "; ");
}

std::string OpLine(const OpSpec& spec) {
  std::vector<std::string> attrs;
  for (const AttrSpec& attr : spec.attrs()) attrs.push_back(attr.name);
  return absl::StrFormat(
      "%-28s (%s) -> (%s)  attrs: %s  cpu: %s  cuda: %s  grad: %s  onnx: %s",
      spec.type(), SlotNames(spec.inputs()), SlotNames(spec.outputs()),
      attrs.empty() ? "none" : absl::StrJoin(attrs, ", "),
      spec.KernelDtypes(DeviceType::kCPU),
      BuiltWithCuda() ? spec.KernelDtypes(DeviceType::kCUDA) : "-",
      spec.grad() == nullptr ? "no" : "yes", OnnxText(spec));
}

absl::StatusOr<std::string> OpDetails(const std::string& name) {
  const OpSpec* spec = OpRegistry::Global().Find(name);
  SF_CHECK_CODE(spec != nullptr, absl::StatusCode::kNotFound,
                "no op named \"%s\" (scopeflow ops lists them)", name);
  std::string out = absl::StrCat("op ", spec->type(), "\n");
  absl::StrAppend(&out, "  inputs:\n");
  if (spec->inputs().empty()) absl::StrAppend(&out, "    none\n");
  for (const SlotSpec& slot : spec->inputs()) {
    absl::StrAppend(&out, "    ", SlotText(slot), "\n");
  }
  absl::StrAppend(&out, "  outputs:\n");
  for (const SlotSpec& slot : spec->outputs()) {
    absl::StrAppend(&out, "    ", SlotText(slot), "\n");
  }
  absl::StrAppend(&out, "  attributes:\n");
  if (spec->attrs().empty()) absl::StrAppend(&out, "    none\n");
  for (const AttrSpec& attr : spec->attrs()) {
    absl::StrAppend(&out, "    ", attr.name, ": ", AttrText(attr), "\n");
  }
  absl::StrAppend(&out,
                  "  kernels:\n    cpu: ", spec->KernelDtypes(DeviceType::kCPU),
                  "\n    cuda: ", CudaText(*spec), "\n");
  absl::StrAppend(&out, "  gradient: ", GradText(*spec), "\n");
  absl::StrAppend(&out, "  imported from ONNX: ", OnnxText(*spec), "\n");
  const std::string traits = TraitsText(*spec);
  if (!traits.empty()) absl::StrAppend(&out, "  ", traits, "\n");
  return out;
}

std::string OpsMarkdown() {
  const std::vector<std::string> types = OpRegistry::Global().Types();
  std::string out =
      "# Operators\n\n"
      "Every op scopeflow registers, generated from its registries by\n"
      "`scopeflow ops --markdown`: do not edit; `//tools:ops_doc_test` fails\n"
      "when this file and the command's output differ. `scopeflow ops NAME`\n"
      "prints one op, `scopeflow ops` one line per op.\n\n"
      "CPU kernels are listed by the element types they take. The CUDA\n"
      "kernels a build has are listed by `scopeflow ops NAME` (and\n"
      "`scopeflow ops`) of that build, so that this page is the same for\n"
      "every build; an op without a CUDA kernel still runs in a net on a\n"
      "GPU: the executor copies its inputs to the host and runs its CPU\n"
      "kernel. A slot marked\n"
      "`?` may be left out. The gradient is the op that `backward` appends\n"
      "for it ([DESIGN.md](DESIGN.md)); ONNX lists the ONNX ops the\n"
      "importer turns into it ([CONFORMANCE.md](CONFORMANCE.md)).\n\n";
  absl::StrAppend(&out, types.size(), " ops.\n\n");
  absl::StrAppend(&out, "| op | inputs | outputs | CPU | gradient | ONNX |\n",
                  "|---|---|---|---|---|---|\n");
  for (const std::string& type : types) {
    const OpSpec& spec = *OpRegistry::Global().Find(type);
    absl::StrAppend(&out, "| [", type, "](#", type, ") | ",
                    SlotNames(spec.inputs()), " | ", SlotNames(spec.outputs()),
                    " | ", spec.KernelDtypes(DeviceType::kCPU), " | ",
                    spec.grad() == nullptr ? "no" : "yes", " | ",
                    OnnxText(spec), " |\n");
  }
  for (const std::string& type : types) {
    const OpSpec& spec = *OpRegistry::Global().Find(type);
    absl::StrAppend(&out, "\n## ", type, "\n\n");
    std::vector<std::string> inputs, outputs;
    for (const SlotSpec& slot : spec.inputs()) {
      inputs.push_back(absl::StrCat("`", SlotText(slot), "`"));
    }
    for (const SlotSpec& slot : spec.outputs()) {
      outputs.push_back(absl::StrCat("`", SlotText(slot), "`"));
    }
    absl::StrAppend(&out, "- Inputs: ",
                    inputs.empty() ? "none" : absl::StrJoin(inputs, ", "),
                    "\n- Outputs: ", absl::StrJoin(outputs, ", "), "\n");
    if (spec.attrs().empty()) {
      absl::StrAppend(&out, "- Attributes: none\n");
    } else {
      absl::StrAppend(&out, "- Attributes:\n");
      for (const AttrSpec& attr : spec.attrs()) {
        absl::StrAppend(&out, "  - `", attr.name, "`: ", AttrText(attr), "\n");
      }
    }
    absl::StrAppend(&out, "- CPU: ", spec.KernelDtypes(DeviceType::kCPU),
                    "\n- Gradient: ", GradText(spec),
                    "\n- ONNX: ", OnnxText(spec), "\n");
    const std::string traits = TraitsText(spec);
    if (!traits.empty()) absl::StrAppend(&out, "- Also: ", traits, "\n");
  }
  return out;
}

absl::Status OpsCommand(const OpsCommandOptions& options) {
  if (options.markdown) {
    SF_CHECK(options.name.empty(),
             "ops --markdown documents every op: give no NAME");
    std::fputs(OpsMarkdown().c_str(), stdout);
    return absl::OkStatus();
  }
  if (!options.name.empty()) {
    SF_ASSIGN_OR_RETURN(const std::string details, OpDetails(options.name));
    std::fputs(details.c_str(), stdout);
    return absl::OkStatus();
  }
  for (const std::string& type : OpRegistry::Global().Types()) {
    std::printf("%s\n", OpLine(*OpRegistry::Global().Find(type)).c_str());
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
