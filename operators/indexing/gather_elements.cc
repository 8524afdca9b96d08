// gather_elements (ONNX GatherElements, torch.gather): Out has Index's
// shape, and each element of Out is the element of X at its own position
// but for the axis, where Index says:
//   Out[i_0, ..., i_{r-1}] = X[i_0, ..., Index[i_0, ..., i_{r-1}], ...].
// Its gradient scatter-adds Out@GRAD into zeros of X's shape.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/indexing/index_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using indexing::CheckElementsIndex;
using indexing::ForEachOffset;
using indexing::ReadIndices;

absl::Status InferGatherElements(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckElementsIndex(context, "X").status());
  const VarInfo& index = context.Input("Index");
  context.SetOutput(
      "Out", VarInfo{context.Input("X").dtype, index.dims, index.has_dims});
  return absl::OkStatus();
}

int KernelAxis(const KernelContext& context, int rank) {
  const int64_t axis = context.attrs().Get<int64_t>("axis");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

template <typename T>
absl::Status GatherElementsKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& index = context.Input("Index");
  const int axis = KernelAxis(context, x.rank());
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> indices,
                      ReadIndices(context, "Index", "X", x.dims(), {axis}));
  const Dims strides = StridesOf(x.dims());
  const T* src = x.data<T>();
  T* dst = context.Output("Out")->data<T>();
  const int64_t step = strides[axis];
  ForEachOffset(index.dims(), strides, axis, [&](int64_t j, int64_t offset) {
    dst[j] = src[offset + indices[j] * step];
  });
  return absl::OkStatus();
}

absl::Status InferGatherElementsGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckElementsIndex(context, "X").status());
  const VarInfo& x = context.Input("X");
  const VarInfo& index = context.Input("Index");
  const VarInfo& grad = context.Input("Out@GRAD");
  SF_CHECK(grad.dtype == x.dtype,
           "%s has dtype %s: expected the dtype of input \"X\", %s",
           DescribeInputShape(context, "Out@GRAD"), DataTypeName(grad.dtype),
           DataTypeName(x.dtype));
  SF_CHECK(indexing::ShapesAgree(grad, index), "%s: expected the shape of %s",
           DescribeInputShape(context, "Out@GRAD"),
           DescribeInputShape(context, "Index"));
  if (context.HasOutput("X@GRAD")) context.SetOutput("X@GRAD", x);
  return absl::OkStatus();
}

// Each element of Out@GRAD is added to the element of X it was copied
// from, so that an element gathered twice gets both.
template <typename T>
absl::Status GatherElementsGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& index = context.Input("Index");
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  const int axis = KernelAxis(context, x_grad->rank());
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> indices,
      ReadIndices(context, "Index", "X", x_grad->dims(), {axis}));
  T* dst = x_grad->data<T>();
  std::fill(dst, dst + x_grad->numel(), T(0));
  const Dims strides = StridesOf(x_grad->dims());
  const T* src = grad.data<T>();
  const int64_t step = strides[axis];
  ForEachOffset(index.dims(), strides, axis, [&](int64_t j, int64_t offset) {
    dst[offset + indices[j] * step] += src[j];
  });
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(gather_elements)
    .Input("X")
    .Input("Index")
    .Output("Out")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{0}))
    .Infer(InferGatherElements)
    .Grad(GradSpec("gather_elements_grad")
              .ReadInput("X")
              .ReadInput("Index")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &GatherElementsKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GatherElementsKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &GatherElementsKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &GatherElementsKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &GatherElementsKernel<bool>);

// No gradient for "Index": it only says where the values come from. top_k's
// gradient is this op too, with top_k's output "Indices" as Index.
SF_REGISTER_OP(gather_elements_grad)
    .Input("X")
    .Input("Index")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{0}))
    .Infer(InferGatherElementsGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &GatherElementsGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GatherElementsGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &GatherElementsGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &GatherElementsGradKernel<int64_t>);

}  // namespace scopeflow
