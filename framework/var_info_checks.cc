#include "framework/var_info_checks.h"

#include "absl/strings/str_cat.h"
#include "platform/status_macros.h"

namespace scopeflow {

std::string InfoToString(const VarInfo& info) {
  return absl::StrCat(DataTypeName(info.dtype), " ",
                      info.has_dims ? DimsToString(info.dims) : "[?]");
}

bool FullyKnown(const VarInfo& info) {
  if (!info.has_dims || !IsValidDataType(info.dtype)) return false;
  for (int64_t d : info.dims) {
    if (d < 0) return false;
  }
  return true;
}

absl::Status CheckShape(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    SF_CHECK(d >= -1,
             "dimension %d is below -1 (expected a size, or -1 for unknown)",
             d);
    if (d > 0 && __builtin_mul_overflow(count, d, &count)) {
      return absl::InvalidArgumentError("its element count overflows int64");
    }
  }
  return absl::OkStatus();
}

bool ShapeAdmits(const VarInfo& declared, absl::Span<const int64_t> dims) {
  if (!declared.has_dims) return true;
  if (declared.dims.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (declared.dims[i] >= 0 && dims[i] >= 0 && declared.dims[i] != dims[i]) {
      return false;
    }
  }
  return true;
}

VarInfo InfoOf(const Tensor& tensor) {
  VarInfo info;
  info.dtype = tensor.dtype();
  info.dims = tensor.dims();
  info.has_dims = true;
  return info;
}

}  // namespace scopeflow
