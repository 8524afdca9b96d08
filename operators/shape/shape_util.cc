#include "operators/shape/shape_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace shape_util {

std::string DescribeInput(const InferContext& context, absl::string_view slot,
                          int i) {
  const VarInfo& info = context.Input(slot, i);
  return absl::StrFormat(
      "input \"%s\" (variable \"%s\") of %s", slot, context.InputName(slot, i),
      info.has_dims ? absl::StrCat("shape ", DimsToString(info.dims))
                    : std::string("unknown rank"));
}

bool FullyKnown(const VarInfo& info) {
  return info.has_dims && std::all_of(info.dims.begin(), info.dims.end(),
                                      [](int64_t d) { return d >= 0; });
}

absl::StatusOr<std::vector<int>> NormalizeAxes(const InferContext& context,
                                               absl::string_view slot,
                                               absl::Span<const int32_t> axes,
                                               int rank,
                                               absl::string_view attr) {
  std::vector<int> normalized;
  std::vector<bool> seen(rank, false);
  for (int32_t axis : axes) {
    SF_ASSIGN_OR_RETURN(int a,
                        NormalizeAxisOf(context, slot, axis, rank, attr));
    SF_CHECK(!seen[a], "attribute \"%s\" names axis %d twice, for %s", attr, a,
             DescribeInput(context, slot));
    seen[a] = true;
    normalized.push_back(a);
  }
  return normalized;
}

absl::StatusOr<int> NormalizeAxisOf(const InferContext& context,
                                    absl::string_view slot, int64_t axis,
                                    int rank, absl::string_view attr) {
  absl::StatusOr<int> normalized = NormalizeAxis(axis, rank, attr);
  if (!normalized.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        normalized.status().message(), ", for ", DescribeInput(context, slot)));
  }
  return normalized;
}

VarInfo UnknownRank(DataType dtype) {
  VarInfo info;
  info.dtype = dtype;
  return info;
}

absl::Status CheckOutGrad(const InferContext& context, const VarInfo& out) {
  const VarInfo& grad = context.Input("Out@GRAD");
  SF_CHECK(grad.dtype == out.dtype,
           "%s has dtype %s: expected %s, that of the forward output",
           DescribeInput(context, "Out@GRAD"), DataTypeName(grad.dtype),
           DataTypeName(out.dtype));
  if (!grad.has_dims || !out.has_dims) return absl::OkStatus();
  bool same = grad.dims.size() == out.dims.size();
  for (size_t k = 0; same && k < grad.dims.size(); ++k) {
    same = grad.dims[k] < 0 || out.dims[k] < 0 || grad.dims[k] == out.dims[k];
  }
  SF_CHECK(same, "%s does not match the forward output's shape %s",
           DescribeInput(context, "Out@GRAD"), DimsToString(out.dims));
  return absl::OkStatus();
}

int ConcatGradInputIndex(const Attributes& attrs, int i) {
  const auto& grad_inputs = attrs.Get<std::vector<int32_t>>("grad_inputs");
  return grad_inputs.empty() ? i : grad_inputs[i];
}

absl::Status ViewKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  Dims dims = out->dims();
  out->ShareBufferWith(x);
  return out->Reshape(std::move(dims));
}

}  // namespace shape_util
}  // namespace scopeflow
