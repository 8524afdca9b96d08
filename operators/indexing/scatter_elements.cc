// scatter_elements (ONNX ScatterElements and Scatter, torch.scatter): Out
// is a copy of X in which each element of Updates lands where Index says
// along the axis, at its own position along the others:
//   Out[i_0, ..., Index[i_0, ..., i_{r-1}], ...] (reduction)= Updates[i_0,
//   ..., i_{r-1}].
// "reduction" combines an update with the element it lands on: "none"
// replaces it (of updates landing on one element the last, in row-major
// order, wins), "add", "mul", "max" and "min" combine them all.
// Gradients exist for "none" and "add".
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/indexing/index_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using indexing::CheckElementsIndex;
using indexing::Combine;
using indexing::ForEachOffset;
using indexing::ReadIndices;
using indexing::Reduction;
using indexing::ReductionOf;

absl::Status InferScatterElements(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckElementsIndex(context, "X").status());
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Updates", "X"));
  SF_CHECK(
      indexing::ShapesAgree(context.Input("Updates"), context.Input("Index")),
      "%s: expected the shape of %s", DescribeInputShape(context, "Updates"),
      DescribeInputShape(context, "Index"));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

int KernelAxis(const KernelContext& context, int rank) {
  const int64_t axis = context.attrs().Get<int64_t>("axis");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

template <typename T>
absl::Status ScatterElementsKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& index = context.Input("Index");
  const Tensor& updates = context.Input("Updates");
  const int axis = KernelAxis(context, x.rank());
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> indices,
                      ReadIndices(context, "Index", "X", x.dims(), {axis}));
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  T* dst = out->data<T>();
  if (dst != x.data<T>()) std::copy(x.data<T>(), x.data<T>() + x.numel(), dst);
  const Dims strides = StridesOf(x.dims());
  const T* src = updates.data<T>();
  const int64_t step = strides[axis];
  const Reduction reduction = ReductionOf(context.attrs());
  ForEachOffset(index.dims(), strides, axis, [&](int64_t j, int64_t offset) {
    Combine(reduction, dst[offset + indices[j] * step], src[j]);
  });
  return absl::OkStatus();
}

absl::Status InferScatterElementsGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(indexing::CheckDifferentiableReduction(context.attrs()));
  SF_RETURN_IF_ERROR(CheckElementsIndex(context, "Out@GRAD").status());
  const VarInfo& grad = context.Input("Out@GRAD");
  const VarInfo& index = context.Input("Index");
  if (context.HasOutput("X@GRAD")) context.SetOutput("X@GRAD", grad);
  if (context.HasOutput("Updates@GRAD")) {
    context.SetOutput("Updates@GRAD",
                      VarInfo{grad.dtype, index.dims, index.has_dims});
  }
  return absl::OkStatus();
}

// With "add", X@GRAD is Out@GRAD and each update's gradient is the element
// of Out@GRAD it landed on. With "none", an element of X that an update
// replaced gets no gradient, and of the updates landing on one element only
// the last, which the forward kept, gets that element's.
template <typename T>
absl::Status ScatterElementsGradKernel(KernelContext& context) {
  const Tensor& index = context.Input("Index");
  const Tensor& grad = context.Input("Out@GRAD");
  const int axis = KernelAxis(context, grad.rank());
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> indices,
      ReadIndices(context, "Index", "Out@GRAD", grad.dims(), {axis}));
  const Dims strides = StridesOf(grad.dims());
  const int64_t step = strides[axis];
  const bool replaced = ReductionOf(context.attrs()) == Reduction::kNone;
  // Where each update landed, and which update last landed on each element
  // of Out (-1: none).
  std::vector<int64_t> target(indices.size());
  std::vector<int64_t> last(replaced ? grad.numel() : 0, -1);
  ForEachOffset(index.dims(), strides, axis, [&](int64_t j, int64_t offset) {
    target[j] = offset + indices[j] * step;
    if (replaced) last[target[j]] = j;
  });
  const T* g = grad.data<T>();
  if (context.HasOutput("X@GRAD")) {
    T* dx = context.Output("X@GRAD")->data<T>();
    std::copy(g, g + grad.numel(), dx);
    for (int64_t t = 0; replaced && t < grad.numel(); ++t) {
      if (last[t] >= 0) dx[t] = T(0);
    }
  }
  if (context.HasOutput("Updates@GRAD")) {
    T* du = context.Output("Updates@GRAD")->data<T>();
    for (size_t j = 0; j < target.size(); ++j) {
      const bool kept = !replaced || last[target[j]] == static_cast<int64_t>(j);
      du[j] = kept ? g[target[j]] : T(0);
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(scatter_elements)
    .Input("X")
    .Input("Index")
    .Input("Updates")
    .Output("Out")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{0}))
    .Attr("reduction", AttrType::kString, AttrValue(std::string("none")),
          OneOf(indexing::ReductionNames()))
    .Infer(InferScatterElements)
    .Grad(GradSpec("scatter_elements_grad")
              .ReadInput("Index")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Updates"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &ScatterElementsKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ScatterElementsKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ScatterElementsKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ScatterElementsKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &ScatterElementsKernel<bool>);

// Reads no X: Out@GRAD has its shape. Inference rejects the reductions
// without a gradient here ("mul", "max", "min").
SF_REGISTER_OP(scatter_elements_grad)
    .Input("Index")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Updates@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{0}))
    .Attr("reduction", AttrType::kString, AttrValue(std::string("none")),
          OneOf(indexing::ReductionNames()))
    .Infer(InferScatterElementsGrad)
    .KernelDtypeFromInput("Out@GRAD")
    .Kernel(DeviceType::kCPU, kFloat32, &ScatterElementsGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ScatterElementsGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ScatterElementsGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ScatterElementsGradKernel<int64_t>);

}  // namespace scopeflow
