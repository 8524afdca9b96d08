// gather_nd (ONNX GatherND): each row of Index (its last axis, K long)
// picks a slice of X; with "batch_dims" b, the first b axes of X and Index
// are batch axes, matched one to one:
//   Out[b..., m...] = X[b..., row[0], ..., row[K - 1], :, ...]
// for the row Index[b..., m..., :]. Out's shape is Index's without its last
// axis, then X's axes after b + K. Its gradient scatter-adds Out@GRAD into
// zeros of X's shape.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/indexing/index_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using indexing::SliceOffsets;
using indexing::Slices;

// Out's dtype and shape, after checking X, Index and "batch_dims" against
// each other.
absl::StatusOr<VarInfo> GatherNdOutInfo(const InferContext& context) {
  SF_RETURN_IF_ERROR(indexing::CheckIndexDtype(context, "Index"));
  const VarInfo& x = context.Input("X");
  const VarInfo& index = context.Input("Index");
  const int64_t batch_dims = context.attrs().Get<int64_t>("batch_dims");
  const VarInfo unknown{x.dtype, {}, false};
  if (!x.has_dims || !index.has_dims) return unknown;
  const int64_t r = static_cast<int64_t>(x.dims.size());
  const int64_t q = static_cast<int64_t>(index.dims.size());
  SF_CHECK(q >= 1, "%s is a scalar: expected rank 1 or more",
           DescribeInputShape(context, "Index"));
  SF_CHECK(batch_dims < q && batch_dims < r,
           "attribute \"batch_dims\" = %d: expected fewer than the ranks of "
           "%s and %s",
           batch_dims, DescribeInputShape(context, "X"),
           DescribeInputShape(context, "Index"));
  for (int64_t d = 0; d < batch_dims; ++d) {
    SF_CHECK(x.dims[d] < 0 || index.dims[d] < 0 || x.dims[d] == index.dims[d],
             "%s and %s differ along batch axis %d: expected equal sizes "
             "(attribute \"batch_dims\" = %d)",
             DescribeInputShape(context, "X"),
             DescribeInputShape(context, "Index"), d, batch_dims);
  }
  const int64_t k = index.dims.back();
  if (k < 0) return unknown;
  SF_CHECK(k <= r - batch_dims,
           "%s has rows of %d indices: expected at most %d, the rank of %s "
           "less attribute \"batch_dims\" = %d",
           DescribeInputShape(context, "Index"), k, r - batch_dims,
           DescribeInputShape(context, "X"), batch_dims);
  Dims out(index.dims.begin(), index.dims.end() - 1);
  out.insert(out.end(), x.dims.begin() + batch_dims + k, x.dims.end());
  return VarInfo{x.dtype, std::move(out), true};
}

absl::Status InferGatherNd(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, GatherNdOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

int BatchDims(const KernelContext& context) {
  return static_cast<int>(context.attrs().Get<int64_t>("batch_dims"));
}

template <typename T>
absl::Status GatherNdKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const Slices slices,
                      SliceOffsets(context, "X", x.dims(), BatchDims(context)));
  if (slices.size == 0) return absl::OkStatus();
  const T* src = x.data<T>();
  T* dst = context.Output("Out")->data<T>();
  for (size_t row = 0; row < slices.offsets.size(); ++row) {
    const T* from = src + slices.offsets[row];
    std::copy(from, from + slices.size, dst + row * slices.size);
  }
  return absl::OkStatus();
}

absl::Status InferGatherNdGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, GatherNdOutInfo(context));
  const VarInfo& grad = context.Input("Out@GRAD");
  SF_CHECK(grad.dtype == out.dtype,
           "%s has dtype %s: expected the dtype of input \"X\", %s",
           DescribeInputShape(context, "Out@GRAD"), DataTypeName(grad.dtype),
           DataTypeName(out.dtype));
  SF_CHECK(!out.has_dims || indexing::ShapesAgree(grad, out),
           "%s: expected gather_nd's output shape %s",
           DescribeInputShape(context, "Out@GRAD"), DimsToString(out.dims));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

// Each slice of Out@GRAD is added to the slice of X it was copied from, so
// that a slice gathered twice gets both.
template <typename T>
absl::Status GatherNdGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor* x_grad = context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(
      const Slices slices,
      SliceOffsets(context, "X", x_grad->dims(), BatchDims(context)));
  T* dst = x_grad->data<T>();
  std::fill(dst, dst + x_grad->numel(), T(0));
  if (slices.size == 0) return absl::OkStatus();
  const T* src = context.Input("Out@GRAD").data<T>();
  for (size_t row = 0; row < slices.offsets.size(); ++row) {
    T* to = dst + slices.offsets[row];
    const T* from = src + row * slices.size;
    for (int64_t i = 0; i < slices.size; ++i) to[i] += from[i];
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(gather_nd)
    .Input("X")
    .Input("Index")
    .Output("Out")
    .Attr("batch_dims", AttrType::kInt64, AttrValue(int64_t{0}), NonNegative())
    .Infer(InferGatherNd)
    .Grad(GradSpec("gather_nd_grad")
              .ReadInput("X")
              .ReadInput("Index")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &GatherNdKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GatherNdKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &GatherNdKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &GatherNdKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &GatherNdKernel<bool>);

// No gradient for "Index": it only says where the values come from.
SF_REGISTER_OP(gather_nd_grad)
    .Input("X")
    .Input("Index")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("batch_dims", AttrType::kInt64, AttrValue(int64_t{0}), NonNegative())
    .Infer(InferGatherNdGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &GatherNdGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GatherNdGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &GatherNdGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &GatherNdGradKernel<int64_t>);

}  // namespace scopeflow
