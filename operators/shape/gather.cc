// gather: slices of X picked along an axis by a tensor of indices; its
// gradient scatter-adds back into X's shape.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::DescribeInput;
using shape_util::NormalizeAxisOf;

// Output dims: X.dims[:axis] + Index.dims + X.dims[axis + 1:].
absl::StatusOr<VarInfo> GatherOutInfo(const InferContext& context) {
  const VarInfo& x = context.Input("X");
  const VarInfo& index = context.Input("Index");
  SF_CHECK(index.dtype == kInt32 || index.dtype == kInt64,
           "%s has dtype %s: expected int32 or int64",
           DescribeInput(context, "Index"), DataTypeName(index.dtype));
  if (!x.has_dims || !index.has_dims) {
    if (x.has_dims) {
      SF_RETURN_IF_ERROR(NormalizeAxisOf(context, "X",
                                         context.attrs().Get<int32_t>("axis"),
                                         static_cast<int>(x.dims.size()))
                             .status());
    }
    return shape_util::UnknownRank(x.dtype);
  }
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxisOf(context, "X", context.attrs().Get<int32_t>("axis"),
                      static_cast<int>(x.dims.size())));
  Dims out(x.dims.begin(), x.dims.begin() + axis);
  out.insert(out.end(), index.dims.begin(), index.dims.end());
  out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
  return VarInfo{x.dtype, std::move(out), true};
}

absl::Status InferGather(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, GatherOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

// The index of element `flat` of a row-major tensor of `dims`, e.g.
// "[1, 0]".
std::string UnravelIndex(int64_t flat, absl::Span<const int64_t> dims) {
  Dims index(dims.size());
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    index[k] = flat % dims[k];
    flat /= dims[k];
  }
  return DimsToString(index);
}

// OK if every index is within [-n, n) for the n = dims[axis] of X.
template <typename I>
absl::Status CheckIndices(const I* indices, const Tensor& index, int axis,
                          absl::Span<const int64_t> dims) {
  const int64_t n = dims[axis];
  for (int64_t j = 0; j < index.numel(); ++j) {
    const int64_t i = indices[j];
    SF_CHECK(i >= -n && i < n,
             "input \"Index\" holds %d at %s, out of range for axis %d of "
             "input \"X\" (shape %s): expected [%d, %d)",
             i, UnravelIndex(j, index.dims()), axis, DimsToString(dims), -n, n);
  }
  return absl::OkStatus();
}

template <typename I>
absl::Status GatherWith(const Tensor& x, const Tensor& index, int axis,
                        Tensor* out) {
  const absl::Span<const int64_t> dims(x.dims());
  const int64_t outer = NumElements(dims.subspan(0, axis));
  const int64_t n = dims[axis];
  const int64_t inner_bytes = NumElements(dims.subspan(axis + 1)) *
                              static_cast<int64_t>(SizeOf(x.dtype()));
  const I* indices = index.data<I>();
  const int64_t count = index.numel();
  // Checked once, before any copy.
  SF_RETURN_IF_ERROR(CheckIndices(indices, index, axis, dims));
  if (out->numel() == 0) return absl::OkStatus();  // No buffer to write.
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = indices[j] < 0 ? indices[j] + n : indices[j];
      std::memcpy(dst + (o * count + j) * inner_bytes,
                  src + (o * n + i) * inner_bytes,
                  static_cast<size_t>(inner_bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status GatherKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& index = context.Input("Index");
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int axis = attr_axis < 0 ? attr_axis + x.rank() : attr_axis;
  Tensor* out = context.Output("Out");
  if (index.dtype() == kInt32) {
    return GatherWith<int32_t>(x, index, axis, out);
  }
  return GatherWith<int64_t>(x, index, axis, out);
}

absl::Status InferGatherGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, GatherOutInfo(context));
  SF_RETURN_IF_ERROR(shape_util::CheckOutGrad(context, out));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

// The scatter-add that undoes gather: every slice of Out@GRAD is added to
// the slice of X it was copied from, so an index picked twice gets both.
template <typename T, typename I>
absl::Status GatherGradWith(const Tensor& index, const Tensor& grad, int axis,
                            Tensor* x_grad) {
  const absl::Span<const int64_t> dims(x_grad->dims());
  const int64_t outer = NumElements(dims.subspan(0, axis));
  const int64_t n = dims[axis];
  const int64_t inner = NumElements(dims.subspan(axis + 1));
  const I* indices = index.data<I>();
  const int64_t count = index.numel();
  SF_RETURN_IF_ERROR(CheckIndices(indices, index, axis, dims));
  T* dst = x_grad->data<T>();
  std::fill(dst, dst + x_grad->numel(), T(0));
  if (grad.numel() == 0) return absl::OkStatus();
  const T* src = grad.data<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = indices[j] < 0 ? indices[j] + n : indices[j];
      T* to = dst + (o * n + i) * inner;
      const T* from = src + (o * count + j) * inner;
      for (int64_t t = 0; t < inner; ++t) to[t] += from[t];
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status GatherGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& index = context.Input("Index");
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int axis = attr_axis < 0 ? attr_axis + x_grad->rank() : attr_axis;
  if (index.dtype() == kInt32) {
    return GatherGradWith<T, int32_t>(index, grad, axis, x_grad);
  }
  return GatherGradWith<T, int64_t>(index, grad, axis, x_grad);
}

}  // namespace

SF_REGISTER_OP(gather)
    .Input("X")
    .Input("Index")
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Infer(InferGather)
    .Grad(GradSpec("gather_grad")
              .ReadInput("X")
              .ReadInput("Index")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .KernelDtypeFromInput("X")
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &GatherKernel; });

// No gradient for "Index": it only says where the values come from.
SF_REGISTER_OP(gather_grad)
    .Input("X")
    .Input("Index")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Infer(InferGatherGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &GatherGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GatherGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &GatherGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &GatherGradKernel<int64_t>);

}  // namespace scopeflow
