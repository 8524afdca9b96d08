// scatter_nd (ONNX ScatterND): Out is a copy of X in which each row of
// Index (its last axis, K long) names a slice X[row[0], ..., row[K - 1],
// :, ...] that the matching slice of Updates lands on:
//   Out[row[0], ..., row[K - 1], ...] (reduction)= Updates[m..., ...]
// for the row Index[m..., :]; Updates has Index's shape without its last
// axis, then X's axes after K. "reduction" combines as scatter_elements'
// does ("none": the last update of a slice wins). Gradients exist for
// "none" and "add".
#include <algorithm>
#include <cstdint>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/indexing/index_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using indexing::Combine;
using indexing::Reduction;
using indexing::ReductionOf;
using indexing::SliceOffsets;
using indexing::Slices;

// OK if Index fits `data` (input `data_slot`: X, or the gradient of Out)
// and, where `updates` is given, Updates has the shape Index and the data
// make.
absl::Status CheckScatterNd(const InferContext& context,
                            absl::string_view data_slot,
                            const VarInfo* updates) {
  SF_RETURN_IF_ERROR(indexing::CheckIndexDtype(context, "Index"));
  const VarInfo& data = context.Input(data_slot);
  const VarInfo& index = context.Input("Index");
  if (!index.has_dims) return absl::OkStatus();
  SF_CHECK(!index.dims.empty(), "%s is a scalar: expected rank 1 or more",
           DescribeInputShape(context, "Index"));
  const int64_t k = index.dims.back();
  if (!data.has_dims || k < 0) return absl::OkStatus();
  const int64_t r = static_cast<int64_t>(data.dims.size());
  SF_CHECK(k <= r,
           "%s has rows of %d indices: expected at most %d, the rank "
           "of %s",
           DescribeInputShape(context, "Index"), k, r,
           DescribeInputShape(context, data_slot));
  if (updates == nullptr) return absl::OkStatus();
  VarInfo expected{data.dtype, Dims(index.dims.begin(), index.dims.end() - 1),
                   true};
  expected.dims.insert(expected.dims.end(), data.dims.begin() + k,
                       data.dims.end());
  SF_CHECK(indexing::ShapesAgree(*updates, expected),
           "%s: expected shape %s (Index's shape without its last axis, then "
           "%s's after axis %d)",
           DescribeInputShape(context, "Updates"), DimsToString(expected.dims),
           data_slot, k - 1);
  return absl::OkStatus();
}

absl::Status InferScatterNd(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Updates", "X"));
  SF_RETURN_IF_ERROR(CheckScatterNd(context, "X", &context.Input("Updates")));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

template <typename T>
absl::Status ScatterNdKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const Slices slices,
                      SliceOffsets(context, "X", x.dims(), /*batch_dims=*/0));
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  T* dst = out->data<T>();
  if (dst != x.data<T>()) std::copy(x.data<T>(), x.data<T>() + x.numel(), dst);
  if (slices.size == 0) return absl::OkStatus();
  const T* src = context.Input("Updates").data<T>();
  const Reduction reduction = ReductionOf(context.attrs());
  for (size_t row = 0; row < slices.offsets.size(); ++row) {
    T* to = dst + slices.offsets[row];
    const T* from = src + row * slices.size;
    for (int64_t i = 0; i < slices.size; ++i) {
      Combine(reduction, to[i], from[i]);
    }
  }
  return absl::OkStatus();
}

absl::Status InferScatterNdGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(indexing::CheckDifferentiableReduction(context.attrs()));
  SF_RETURN_IF_ERROR(CheckScatterNd(context, "Out@GRAD", nullptr));
  const VarInfo& grad = context.Input("Out@GRAD");
  const VarInfo& index = context.Input("Index");
  if (context.HasOutput("X@GRAD")) context.SetOutput("X@GRAD", grad);
  if (!context.HasOutput("Updates@GRAD")) return absl::OkStatus();
  VarInfo updates{grad.dtype, {}, false};
  if (grad.has_dims && index.has_dims && index.dims.back() >= 0) {
    updates.has_dims = true;
    updates.dims.assign(index.dims.begin(), index.dims.end() - 1);
    updates.dims.insert(updates.dims.end(),
                        grad.dims.begin() + index.dims.back(), grad.dims.end());
  }
  context.SetOutput("Updates@GRAD", updates);
  return absl::OkStatus();
}

// As scatter_elements_grad, slice by slice: with "add" X@GRAD is Out@GRAD
// and each update gets the slice of Out@GRAD it landed on; with "none" a
// replaced slice of X gets no gradient, and of the updates landing on one
// slice only the last, which the forward kept, gets it.
template <typename T>
absl::Status ScatterNdGradKernel(KernelContext& context) {
  const Tensor& grad = context.Input("Out@GRAD");
  SF_ASSIGN_OR_RETURN(
      const Slices slices,
      SliceOffsets(context, "Out@GRAD", grad.dims(), /*batch_dims=*/0));
  const bool replaced = ReductionOf(context.attrs()) == Reduction::kNone;
  // Slices start at multiples of their size: slot offset / size holds the
  // last row landing there (-1: none).
  const int64_t size = slices.size;
  std::vector<int64_t> last;
  if (replaced && size > 0) {
    last.assign(static_cast<size_t>(grad.numel() / size), -1);
    for (size_t row = 0; row < slices.offsets.size(); ++row) {
      last[slices.offsets[row] / size] = static_cast<int64_t>(row);
    }
  }
  const T* g = grad.data<T>();
  if (context.HasOutput("X@GRAD")) {
    T* dx = context.Output("X@GRAD")->data<T>();
    std::copy(g, g + grad.numel(), dx);
    for (size_t slot = 0; slot < last.size(); ++slot) {
      if (last[slot] >= 0) std::fill_n(dx + slot * size, size, T(0));
    }
  }
  if (context.HasOutput("Updates@GRAD")) {
    T* du = context.Output("Updates@GRAD")->data<T>();
    for (size_t row = 0; size > 0 && row < slices.offsets.size(); ++row) {
      const int64_t offset = slices.offsets[row];
      const bool kept =
          !replaced || last[offset / size] == static_cast<int64_t>(row);
      T* to = du + row * size;
      if (kept) {
        std::copy(g + offset, g + offset + size, to);
      } else {
        std::fill_n(to, size, T(0));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(scatter_nd)
    .Input("X")
    .Input("Index")
    .Input("Updates")
    .Output("Out")
    .Attr("reduction", AttrType::kString, AttrValue(std::string("none")),
          OneOf(indexing::ReductionNames()))
    .Infer(InferScatterNd)
    .Grad(GradSpec("scatter_nd_grad")
              .ReadInput("Index")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Updates"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &ScatterNdKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ScatterNdKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ScatterNdKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ScatterNdKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &ScatterNdKernel<bool>);

// Reads no X: Out@GRAD has its shape. Inference rejects the reductions
// without a gradient here ("mul", "max", "min").
SF_REGISTER_OP(scatter_nd_grad)
    .Input("Index")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Updates@GRAD", /*optional=*/true)
    .Attr("reduction", AttrType::kString, AttrValue(std::string("none")),
          OneOf(indexing::ReductionNames()))
    .Infer(InferScatterNdGrad)
    .KernelDtypeFromInput("Out@GRAD")
    .Kernel(DeviceType::kCPU, kFloat32, &ScatterNdGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ScatterNdGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ScatterNdGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ScatterNdGradKernel<int64_t>);

}  // namespace scopeflow
