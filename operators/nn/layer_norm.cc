// layer_norm: normalizes X over its trailing axes, from begin_norm_axis on,
// then optionally scales and shifts it elementwise; optionally outputs each
// row's mean and inverse standard deviation too.
// layer_norm_grad: the gradients of X, Scale and Bias, from those of Y and,
// where they flow, of Mean and InvStdDev.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/kernel_util.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

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
    const std::optional<int64_t> count =
        CheckedNumElements(absl::MakeConstSpan(x.dims).subspan(*axis));
    SF_CHECK(count.has_value(),
             "input \"X\" (variable \"%s\") has shape %s: more elements "
             "from begin_norm_axis = %d on than int64 holds",
             context.InputName("X"), DimsToString(x.dims), *axis);
    normalized = *count;
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

// What layer_norm writes to Mean and InvStdDev: X's shape with the
// normalized axes, from begin_norm_axis on, reduced to 1 (CheckInputs has
// checked the axis).
VarInfo StatisticsInfo(const InferContext& context) {
  VarInfo info = context.Input("X");
  if (!info.has_dims) return info;
  const int rank = static_cast<int>(info.dims.size());
  const int axis = *NormalizeAxis(
      context.attrs().Get<int32_t>("begin_norm_axis"), rank, "begin_norm_axis");
  for (int i = axis; i < rank; ++i) info.dims[i] = 1;
  return info;
}

absl::Status InferLayerNorm(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckInputs(context));
  context.SetOutput("Y", context.Input("X"));
  for (const char* slot : {"Mean", "InvStdDev"}) {
    if (context.HasOutput(slot)) {
      context.SetOutput(slot, StatisticsInfo(context));
    }
  }
  return absl::OkStatus();
}

absl::Status InferLayerNormGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckInputs(context));
  SF_RETURN_IF_ERROR(
      nn::CheckGradInput(context, "Y@GRAD", context.Input("X"), "Y"));
  for (const char* slot : {"Mean", "InvStdDev"}) {
    const std::string grad = absl::StrCat(slot, "@GRAD");
    if (context.HasInput(grad)) {
      SF_RETURN_IF_ERROR(
          nn::CheckGradInput(context, grad, StatisticsInfo(context), slot));
    }
  }
  for (const char* slot : {"Scale", "Bias"}) {
    if (context.HasOutput(absl::StrCat(slot, "@GRAD"))) {
      SF_RETURN_IF_ERROR(nn::RequireInput(
          context, slot,
          absl::StrCat("output \"", slot, "@GRAD\" takes its shape")));
    }
  }
  return GradsLikeInputs({"X", "Scale", "Bias"})(context);
}

// The sum of a row's values and of their squares, in double.
struct RowSums {
  double sum = 0;
  double squares = 0;
};

// RowSums of in[0, n), over kLanes partial sums of each that the compiler
// keeps in vector registers (one chain of additions, which it may not
// reorder, would run one element at a time).
template <typename T>
inline __attribute__((always_inline)) RowSums SumsAndSquares(const T* in,
                                                             int64_t n) {
  constexpr int kLanes = 8;
  double sums[kLanes] = {};
  double squares[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double v = in[i + j];
      sums[j] += v;
      squares[j] += v * v;
    }
  }
  RowSums total;
  for (; i < n; ++i) {
    const double v = in[i];
    total.sum += v;
    total.squares += v * v;
  }
  for (int j = 0; j < kLanes; ++j) {
    total.sum += sums[j];
    total.squares += squares[j];
  }
  return total;
}

// What LayerNormRows reads and writes: rows of `normalized` values.
template <typename T>
struct LayerNormArgs {
  const T* x;
  T* y;
  int64_t normalized;
  double epsilon;
  const T* scale;  // null if absent
  const T* bias;   // null if absent
  T* mean_out;     // null if not wanted
  T* inv_std_out;  // null if not wanted
};

// Rows [begin, end): statistics in double, then the normalized row in T.
// One pass sums the values and their squares (each square of a float is
// exact in double, so the variance E[x^2] - mean^2 loses digits only where
// the mean is thousands of standard deviations from 0); the second writes
// (x - mean) * inv_std * scale + bias in T, as the decomposed form an
// exporter writes computes it (16 floats a vector rather than 8 doubles).
template <typename T>
inline __attribute__((always_inline)) void LayerNormRowsLoop(
    const LayerNormArgs<T>& a, int64_t begin, int64_t end) {
  const int64_t n = a.normalized;
  for (int64_t r = begin; r < end; ++r) {
    const T* in = a.x + r * n;
    T* out = a.y + r * n;
    const RowSums sums = SumsAndSquares(in, n);
    const double mean = sums.sum / n;
    const double variance = std::max(0.0, sums.squares / n - mean * mean);
    const double inv_std = 1.0 / std::sqrt(variance + a.epsilon);
    if (a.mean_out != nullptr) a.mean_out[r] = static_cast<T>(mean);
    if (a.inv_std_out != nullptr) a.inv_std_out[r] = static_cast<T>(inv_std);
    const T mean_t = static_cast<T>(mean);
    const T inv_std_t = static_cast<T>(inv_std);
    if (a.scale != nullptr && a.bias != nullptr) {
      for (int64_t i = 0; i < n; ++i) {
        out[i] = (in[i] - mean_t) * inv_std_t * a.scale[i] + a.bias[i];
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        T v = (in[i] - mean_t) * inv_std_t;
        if (a.scale != nullptr) v *= a.scale[i];
        if (a.bias != nullptr) v += a.bias[i];
        out[i] = v;
      }
    }
  }
}

// LayerNormRowsLoop on the widest vectors the CPU has
// (platform/vector_clones.h; GCC clones non-template functions only).
SF_WIDEST_VECTORS void LayerNormRows(const LayerNormArgs<float>& a,
                                     int64_t begin, int64_t end) {
  LayerNormRowsLoop(a, begin, end);
}
SF_WIDEST_VECTORS void LayerNormRows(const LayerNormArgs<double>& a,
                                     int64_t begin, int64_t end) {
  LayerNormRowsLoop(a, begin, end);
}

// Each row of `normalized` elements gets its mean and (biased) variance,
// both accumulated in double, then
// Y = (X - mean) / sqrt(variance + epsilon) * scale + bias. Mean and
// InvStdDev, if bound, get mean and 1 / sqrt(variance + epsilon); NaN for
// rows of no elements.
// Rows run over threads, each normalized on its own (ConvNeXt's layer
// norms over channels are thousands of rows of 96 to 768 values).
template <typename T>
absl::Status LayerNormKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& y = *context.Output("Y");
  SF_ASSIGN_OR_RETURN(const nn::Rows shape, nn::RowsOf(context, x));
  const int64_t rows = shape.rows, normalized = shape.normalized;
  T* mean_out = nn::OptionalOutputData<T>(context, "Mean");
  T* inv_std_out = nn::OptionalOutputData<T>(context, "InvStdDev");
  if (normalized == 0) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    if (mean_out != nullptr) std::fill(mean_out, mean_out + rows, nan);
    if (inv_std_out != nullptr) std::fill(inv_std_out, inv_std_out + rows, nan);
    return absl::OkStatus();
  }
  const LayerNormArgs<T> args{
      x.data<T>(),
      y.data<T>(),
      normalized,
      context.attrs().Get<float>("epsilon"),
      context.HasInput("Scale") ? context.Input("Scale").data<T>() : nullptr,
      context.HasInput("Bias") ? context.Input("Bias").data<T>() : nullptr,
      mean_out,
      inv_std_out};
  ParallelFor(
      rows, (kElementsWorthAThread + normalized - 1) / normalized,
      [&](int64_t begin, int64_t end) { LayerNormRows(args, begin, end); });
  return absl::OkStatus();
}

// Per row, with xhat = (x - mean) * inv_std and g = Y@GRAD * scale:
// X@GRAD = inv_std * (g - mean(g) - xhat * mean(g * xhat)),
// Scale@GRAD = sum over rows of Y@GRAD * xhat, Bias@GRAD = sum of Y@GRAD.
// The row's Mean@GRAD adds Mean@GRAD / n to each X@GRAD of the row, and
// its InvStdDev@GRAD adds InvStdDev@GRAD * -inv_std^2 * xhat / n (the
// derivative of (variance + epsilon)^(-1/2)). The statistics are
// recomputed from X, in double.
template <typename T>
absl::Status LayerNormGradKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& d_y = context.Input("Y@GRAD");
  SF_ASSIGN_OR_RETURN(const nn::Rows shape, nn::RowsOf(context, x));
  const int64_t normalized = shape.normalized;
  const int64_t rows = normalized == 0 ? 0 : shape.rows;
  const double epsilon = context.attrs().Get<float>("epsilon");
  const T* d_mean = nn::OptionalInputData<T>(context, "Mean@GRAD");
  const T* d_inv_std = nn::OptionalInputData<T>(context, "InvStdDev@GRAD");
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
    const double mean_share =
        d_mean == nullptr ? 0.0 : static_cast<double>(d_mean[r]) / normalized;
    const double xhat_factor =
        d_inv_std == nullptr ? 0.0
                             : -d_inv_std[r] * inv_std * inv_std / normalized;
    T* dx = d_x + r * normalized;
    for (int64_t i = 0; i < normalized; ++i) {
      dx[i] = static_cast<T>(inv_std * (g[i] - g_sum / normalized -
                                        xhat[i] * gx_sum / normalized) +
                             mean_share + xhat_factor * xhat[i]);
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

// Mean and InvStdDev have X's shape with the normalized axes reduced to 1
// (ONNX LayerNormalization's statistics outputs).
SF_REGISTER_OP(layer_norm)
    .Input("X")
    .Input("Scale", /*optional=*/true)
    .Input("Bias", /*optional=*/true)
    .Output("Y")
    .Output("Mean", /*optional=*/true)
    .Output("InvStdDev", /*optional=*/true)
    .Attr("begin_norm_axis", AttrType::kInt, AttrValue(1))
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferLayerNorm)
    .Grad(GradSpec("layer_norm_grad")
              .ReadInput("X")
              .ReadInput("Scale")
              .ReadInput("Bias")
              .ReadOutputGrad("Y")
              .ReadOutputGrad("Mean")
              .ReadOutputGrad("InvStdDev")
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
    .Input("Mean@GRAD", /*optional=*/true)
    .Input("InvStdDev@GRAD", /*optional=*/true)
    .Output("X@GRAD", /*optional=*/true)
    .Output("Scale@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("begin_norm_axis", AttrType::kInt, AttrValue(1))
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferLayerNormGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &LayerNormGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &LayerNormGradKernel<double>);

}  // namespace scopeflow
