#include "operators/optimizer/update_util.h"

#include <algorithm>
#include <cstdint>

#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {

bool ShapesCompatible(const VarInfo& a, const VarInfo& b) {
  if (!a.has_dims || !b.has_dims) return true;
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) {
      return false;
    }
  }
  return true;
}

absl::Status CheckLikeInput(const InferContext& context, absl::string_view slot,
                            absl::string_view like) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, like, slot));
  SF_CHECK(ShapesCompatible(context.Input(slot), context.Input(like)),
           "%s must have the shape of %s", DescribeInputShape(context, slot),
           DescribeInputShape(context, like));
  return absl::OkStatus();
}

absl::Status CheckOneElement(const InferContext& context,
                             absl::string_view slot) {
  SF_ASSIGN_OR_RETURN(const int64_t count, InputNumElements(context, slot));
  SF_CHECK(count < 0 || count == 1, "%s must hold exactly one element",
           DescribeInputShape(context, slot));
  return absl::OkStatus();
}

double ReadScalar(const Tensor& tensor) {
  switch (tensor.dtype()) {
    case kFloat64:
      return *tensor.data<double>();
    case kInt32:
      return *tensor.data<int32_t>();
    case kInt64:
      return static_cast<double>(*tensor.data<int64_t>());
    default:
      return *tensor.data<float>();
  }
}

void WriteScalar(Tensor& tensor, double value) {
  switch (tensor.dtype()) {
    case kFloat64:
      *tensor.data<double>() = value;
      return;
    case kInt32:
      *tensor.data<int32_t>() = static_cast<int32_t>(value);
      return;
    case kInt64:
      *tensor.data<int64_t>() = static_cast<int64_t>(value);
      return;
    default:
      *tensor.data<float>() = static_cast<float>(value);
      return;
  }
}

}  // namespace scopeflow
