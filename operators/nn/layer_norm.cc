// layer_norm: normalizes X over its trailing axes, from begin_norm_axis on,
// then optionally scales and shifts it elementwise.
// layer_norm_grad: the gradients of X, Scale and Bias.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Checks X, Scale and Bias against each other (for layer_norm and its
// gradient op alike).
absl::Status CheckInputs(const InferContext& context) {
  SF_RETURN_IF_ERROR(
      CheckRank(context, "X", 1, std::numeric_limits<int>::max()));
  const VarInfo& x = context.Input("X");
  // The number of elements each normalization covers; -1 if unknown.
  int64_t normalized = -1;
  if (x.has_dims) {
    const int rank = static_cast<int>(x.dims.size());
    absl::StatusOr<int> axis =
        NormalizeAxis(context.attrs().Get<int32_t>("begin_norm_axis"), rank,
                      "begin_norm_axis");
    SF_CHECK(axis.ok(), "input \"X\" (variable \"%s\") has shape %s: %s",
             context.InputName("X"), DimsToString(x.dims),
             axis.status().message());
    normalized = 1;
    for (int i = *axis; i < rank; ++i) {
      if (x.dims[i] < 0) {
        normalized = -1;
        break;
      }
      normalized *= x.dims[i];
    }
  }
  for (const char* slot : {"Scale", "Bias"}) {
    if (!context.HasInput(slot)) continue;
    SF_RETURN_IF_ERROR(CheckRank(context, slot, 1, 1));
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", slot));
    const VarInfo& info = context.Input(slot);
    if (!info.has_dims) continue;
    SF_CHECK(normalized < 0 || info.dims[0] < 0 || info.dims[0] == normalized,
             "input \"%s\" (variable \"%s\") has shape %s: expected [%d], "
             "the number of elements of \"X\" (variable \"%s\", shape %s) "
             "from begin_norm_axis = %d on",
             slot, context.InputName(slot), DimsToString(info.dims), normalized,
             context.InputName("X"), DimsToString(x.dims),
             context.attrs().Get<int32_t>("begin_norm_axis"));
  }
  return absl::OkStatus();
}

absl::Status InferLayerNorm(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckInputs(context));
  context.SetOutput("Y", context.Input("X"));
  return absl::OkStatus();
}

absl::Status InferLayerNormGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckInputs(context));
  SF_RETURN_IF_ERROR(
      nn::CheckGradInput(context, "Y@GRAD", context.Input("X"), "Y"));
  for (const char* slot : {"Scale", "Bias"}) {
    if (context.HasOutput(absl::StrCat(slot, "@GRAD"))) {
      SF_RETURN_IF_ERROR(nn::RequireInput(
          context, slot,
          absl::StrCat("output \"", slot, "@GRAD\" takes its shape")));
    }
  }
  return GradsLikeInputs({"X", "Scale", "Bias"})(context);
}

// Each row of `normalized` elements gets its mean and (biased) variance,
// both accumulated in double, then
// Y = (X - mean) / sqrt(variance + epsilon) * scale + bias.
template <typename T>
absl::Status LayerNormKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& y = *context.Output("Y");
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxis(context.attrs().Get<int32_t>("begin_norm_axis"), x.rank(),
                    "begin_norm_axis"));
  int64_t normalized = 1;
  for (int i = axis; i < x.rank(); ++i) normalized *= x.dim(i);
  if (normalized == 0) return absl::OkStatus();
  const int64_t rows = x.numel() / normalized;
  const double epsilon = context.attrs().Get<float>("epsilon");
  const T* scale =
      context.HasInput("Scale") ? context.Input("Scale").data<T>() : nullptr;
  const T* bias =
      context.HasInput("Bias") ? context.Input("Bias").data<T>() : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x.data<T>() + r * normalized;
    T* out = y.data<T>() + r * normalized;
    double sum = 0;
    for (int64_t i = 0; i < normalized; ++i) sum += in[i];
    const double mean = sum / normalized;
    double squares = 0;
    for (int64_t i = 0; i < normalized; ++i) {
      squares += (in[i] - mean) * (in[i] - mean);
    }
    const double inv_std = 1.0 / std::sqrt(squares / normalized + epsilon);
    for (int64_t i = 0; i < normalized; ++i) {
      double v = (in[i] - mean) * inv_std;
      if (scale != nullptr) v *= scale[i];
      if (bias != nullptr) v += bias[i];
      out[i] = static_cast<T>(v);
    }
  }
  return absl::OkStatus();
}

// Per row, with xhat = (x - mean) * inv_std and g = Y@GRAD * scale:
// X@GRAD = inv_std * (g - mean(g) - xhat * mean(g * xhat)),
// Scale@GRAD = sum over rows of Y@GRAD * xhat, Bias@GRAD = sum of Y@GRAD.
// The statistics are recomputed from X (the forward keeps none), in double.
template <typename T>
absl::Status LayerNormGradKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& d_y = context.Input("Y@GRAD");
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxis(context.attrs().Get<int32_t>("begin_norm_axis"), x.rank(),
                    "begin_norm_axis"));
  int64_t normalized = 1;
  for (int i = axis; i < x.rank(); ++i) normalized *= x.dim(i);
  const int64_t rows = normalized == 0 ? 0 : x.numel() / normalized;
  const double epsilon = context.attrs().Get<float>("epsilon");
  const T* scale =
      context.HasInput("Scale") ? context.Input("Scale").data<T>() : nullptr;
  T* d_x = context.HasOutput("X@GRAD") ? context.Output("X@GRAD")->data<T>()
                                       : nullptr;
  std::vector<double> d_scale(context.HasOutput("Scale@GRAD") ? normalized : 0);
  std::vector<double> d_bias(context.HasOutput("Bias@GRAD") ? normalized : 0);
  std::vector<double> xhat(normalized), g(normalized);
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x.data<T>() + r * normalized;
    const T* dy = d_y.data<T>() + r * normalized;
    double sum = 0;
    for (int64_t i = 0; i < normalized; ++i) sum += in[i];
    const double mean = sum / normalized;
    double squares = 0;
    for (int64_t i = 0; i < normalized; ++i) {
      squares += (in[i] - mean) * (in[i] - mean);
    }
    const double inv_std = 1.0 / std::sqrt(squares / normalized + epsilon);
    double g_sum = 0, gx_sum = 0;
    for (int64_t i = 0; i < normalized; ++i) {
      xhat[i] = (in[i] - mean) * inv_std;
      g[i] = scale == nullptr ? dy[i] : dy[i] * static_cast<double>(scale[i]);
      g_sum += g[i];
      gx_sum += g[i] * xhat[i];
      if (!d_scale.empty()) d_scale[i] += dy[i] * xhat[i];
      if (!d_bias.empty()) d_bias[i] += dy[i];
    }
    if (d_x == nullptr) continue;
    T* dx = d_x + r * normalized;
    for (int64_t i = 0; i < normalized; ++i) {
      dx[i] = static_cast<T>(inv_std * (g[i] - g_sum / normalized -
                                        xhat[i] * gx_sum / normalized));
    }
  }
  if (!d_scale.empty()) {
    T* out = context.Output("Scale@GRAD")->data<T>();
    for (int64_t i = 0; i < normalized; ++i)
      out[i] = static_cast<T>(d_scale[i]);
  }
  if (!d_bias.empty()) {
    T* out = context.Output("Bias@GRAD")->data<T>();
    for (int64_t i = 0; i < normalized; ++i) out[i] = static_cast<T>(d_bias[i]);
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(layer_norm)
    .Input("X")
    .Input("Scale", /*optional=*/true)
    .Input("Bias", /*optional=*/true)
    .Output("Y")
    .Attr("begin_norm_axis", AttrType::kInt, AttrValue(1))
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferLayerNorm)
    .Grad(GradSpec("layer_norm_grad")
              .ReadInput("X")
              .ReadInput("Scale")
              .ReadInput("Bias")
              .ReadOutputGrad("Y")
              .WriteInputGrad("X")
              .WriteInputGrad("Scale")
              .WriteInputGrad("Bias"))
    .Kernel(DeviceType::kCPU, kFloat32, &LayerNormKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &LayerNormKernel<double>);

// Reads Bias only for the shape of Bias@GRAD.
SF_REGISTER_OP(layer_norm_grad)
    .Input("X")
    .Input("Scale", /*optional=*/true)
    .Input("Bias", /*optional=*/true)
    .Input("Y@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Scale@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("begin_norm_axis", AttrType::kInt, AttrValue(1))
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferLayerNormGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &LayerNormGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &LayerNormGradKernel<double>);

}  // namespace scopeflow
