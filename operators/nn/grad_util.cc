#include "operators/nn/grad_util.h"

#include <cstddef>

#include "absl/strings/str_format.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace nn {
namespace {

bool ShapesAgree(const VarInfo& a, const VarInfo& b) {
  if (!a.has_dims || !b.has_dims) return true;
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (a.dims[d] >= 0 && b.dims[d] >= 0 && a.dims[d] != b.dims[d]) {
      return false;
    }
  }
  return true;
}

std::string ShapeString(const VarInfo& info) {
  return info.has_dims ? DimsToString(info.dims) : "[?]";
}

}  // namespace

absl::Status CheckGradInput(const InferContext& context,
                            absl::string_view grad_slot,
                            const VarInfo& expected,
                            absl::string_view forward_slot) {
  const VarInfo& grad = context.Input(grad_slot);
  const bool dtypes_agree = grad.dtype == DATA_TYPE_UNSPECIFIED ||
                            expected.dtype == DATA_TYPE_UNSPECIFIED ||
                            grad.dtype == expected.dtype;
  SF_CHECK(dtypes_agree && ShapesAgree(grad, expected),
           "input \"%s\" (variable \"%s\") is %s %s: expected %s %s, as the "
           "forward op's output \"%s\"",
           grad_slot, context.InputName(grad_slot), DataTypeName(grad.dtype),
           ShapeString(grad), DataTypeName(expected.dtype),
           ShapeString(expected), forward_slot);
  return absl::OkStatus();
}

absl::Status RequireInput(const InferContext& context, absl::string_view slot,
                          absl::string_view why) {
  SF_CHECK(context.HasInput(slot), "input \"%s\" is not bound: %s", slot, why);
  return absl::OkStatus();
}

bool BoolAttrOf(const OpDef& op, absl::string_view name, bool default_value) {
  for (const AttrDef& attr : op.attrs()) {
    if (attr.name() == name && attr.value_case() == AttrDef::kB) {
      return attr.b();
    }
  }
  return default_value;
}

}  // namespace nn
}  // namespace scopeflow
