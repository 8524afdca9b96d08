// conv_integer and qlinear_conv: ONNX's ConvInteger and QLinearConv over
// uint8 and int8, any number of spatial axes, accumulated exactly in int32
// (integer_conv.h).
//
//   conv_integer: Y = conv(X - XZeroPoint, W - WZeroPoint), int32
//   qlinear_conv: Y = saturate(round_half_even((acc + B) * XScale *
//                 WScale / YScale) + YZeroPoint), of YZeroPoint's dtype
//
// X's zero point and scale are per tensor; W's per tensor or per output
// channel (1-D of M); B is int32 of M. The window attributes are
// scopeflow's (integer_conv.h); the ONNX converter resolves auto_pad. No
// gradients, as for the quantized matmuls (qlinear_matmul.cc): the outputs
// are integers.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/quantization/integer_conv.h"
#include "operators/quantization/quant_params.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Checks the inputs common to both ops and infers the output dims.
absl::StatusOr<VarInfo> InferConvolution(InferContext& context,
                                         const char* w_scale) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kQuantizedDtypes));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "W", kQuantizedDtypes));
  SF_RETURN_IF_ERROR(CheckZeroPointDtype(context, "XZeroPoint", "X"));
  SF_RETURN_IF_ERROR(CheckZeroPointDtype(context, "WZeroPoint", "W"));
  SF_RETURN_IF_ERROR(CheckPerTensor(context, "XZeroPoint"));
  const VarInfo& x = context.Input("X");
  const VarInfo& w = context.Input("W");
  const int64_t filters = w.has_dims && !w.dims.empty() ? w.dims[0] : -1;
  SF_RETURN_IF_ERROR(
      CheckOneOrVector(context, "WZeroPoint", filters, "output channel"));
  if (w_scale != nullptr) {
    SF_RETURN_IF_ERROR(
        CheckOneOrVector(context, w_scale, filters, "output channel"));
  }
  if (!x.has_dims && !w.has_dims) return VarInfo{kInt32, {}, false};
  const int rank = static_cast<int>(x.has_dims ? x.dims.size() : w.dims.size());
  SF_CHECK(rank >= 3, "%s: expected [N, C, spatial...], of rank 3 or more",
           DescribeInputShape(context, x.has_dims ? "X" : "W"));
  SF_ASSIGN_OR_RETURN(const ConvWindow window,
                      ConvWindowOf(context.attrs(), rank - 2));
  if (!x.has_dims || !w.has_dims) return VarInfo{kInt32, {}, false};
  SF_ASSIGN_OR_RETURN(
      Dims out,
      IntegerConvDims(x.dims, w.dims, window, DescribeInputShape(context, "X"),
                      DescribeInputShape(context, "W")));
  return VarInfo{kInt32, std::move(out), true};
}

absl::Status InferConvInteger(InferContext& context) {
  SF_ASSIGN_OR_RETURN(VarInfo out, InferConvolution(context, nullptr));
  context.SetOutput("Y", out);
  return absl::OkStatus();
}

// The int32 accumulators of the kernel's X and W for output dims `out`.
absl::StatusOr<std::vector<int32_t>> Accumulate(const KernelContext& context,
                                                const Dims& out) {
  const Tensor& x = context.Input("X");
  const Tensor& w = context.Input("W");
  SF_ASSIGN_OR_RETURN(const ConvWindow window,
                      ConvWindowOf(context.attrs(), x.rank() - 2));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> x_zero,
                      IntsPer(context, "XZeroPoint", 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> w_zero,
                      IntsPer(context, "WZeroPoint", w.dims()[0]));
  int64_t count = 1;
  for (int64_t d : out) count *= d;
  std::vector<int32_t> acc(count);
  IntegerConv(x, w, x_zero[0], w_zero, window, out, acc.data());
  return acc;
}

absl::Status ConvIntegerKernel(KernelContext& context) {
  Tensor* y = context.Output("Y");
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> acc,
                      Accumulate(context, y->dims()));
  std::copy(acc.begin(), acc.end(), y->data<int32_t>());
  return absl::OkStatus();
}

absl::Status InferQLinearConv(InferContext& context) {
  SF_ASSIGN_OR_RETURN(VarInfo out, InferConvolution(context, "WScale"));
  for (const char* scale : {"XScale", "WScale", "YScale"}) {
    SF_RETURN_IF_ERROR(CheckDtypeIn(context, scale, kScaleDtypes));
  }
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "XScale", "WScale"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "XScale", "YScale"));
  SF_RETURN_IF_ERROR(CheckPerTensor(context, "XScale"));
  SF_RETURN_IF_ERROR(CheckPerTensor(context, "YScale"));
  SF_RETURN_IF_ERROR(CheckPerTensor(context, "YZeroPoint"));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "YZeroPoint", kQuantizedDtypes));
  if (context.HasInput("B")) {
    SF_RETURN_IF_ERROR(CheckDtype(context, "B", kInt32));
    const VarInfo& w = context.Input("W");
    const VarInfo& b = context.Input("B");
    const int64_t filters = w.has_dims && !w.dims.empty() ? w.dims[0] : -1;
    SF_CHECK(
        !b.has_dims || (b.dims.size() == 1 &&
                        (filters < 0 || b.dims[0] < 0 || b.dims[0] == filters)),
        "%s: expected [%d], one bias per output channel",
        DescribeInputShape(context, "B"), filters);
  }
  out.dtype = context.Input("YZeroPoint").dtype;
  context.SetOutput("Y", out);
  return absl::OkStatus();
}

template <typename Q>
void Requantize(const std::vector<int32_t>& acc, const Dims& out,
                const std::vector<int32_t>& bias,
                const std::vector<float>& multipliers, int32_t y_zero, Q* y) {
  const int64_t filters = out[1];
  const int64_t plane = filters == 0 ? 0 : acc.size() / (out[0] * filters);
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t m = (static_cast<int64_t>(i) / plane) % filters;
    // acc + bias in int64: both may be near int32's range.
    const double sum = static_cast<double>(int64_t{acc[i]} + bias[m]);
    // Rounded before the zero point is added, as QuantizeLinear does (and
    // ONNX Runtime's requantization).
    y[i] = RoundAndSaturate<Q>(std::nearbyint(sum * multipliers[m]) + y_zero,
                               y_zero);
  }
}

absl::Status QLinearConvKernel(KernelContext& context) {
  Tensor* y = context.Output("Y");
  if (y->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> acc,
                      Accumulate(context, y->dims()));
  const int64_t filters = y->dims()[1];
  SF_ASSIGN_OR_RETURN(const std::vector<float> x_scale,
                      FloatsPer(context, "XScale", 1));
  SF_ASSIGN_OR_RETURN(const std::vector<float> w_scale,
                      FloatsPer(context, "WScale", filters));
  SF_ASSIGN_OR_RETURN(const std::vector<float> y_scale,
                      FloatsPer(context, "YScale", 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> y_zero,
                      IntsPer(context, "YZeroPoint", 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> bias,
                      IntsPer(context, "B", filters));
  const DataType scale_dtype = context.Input("XScale").dtype();
  std::vector<float> multipliers(filters);
  for (int64_t m = 0; m < filters; ++m) {
    multipliers[m] =
        Multiplier(scale_dtype, x_scale[0], w_scale[m], y_scale[0]);
  }
  if (y->dtype() == kInt8) {
    Requantize(acc, y->dims(), bias, multipliers, y_zero[0], y->data<int8_t>());
  } else {
    Requantize(acc, y->dims(), bias, multipliers, y_zero[0],
               y->data<uint8_t>());
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(conv_integer)
    .Input("X")
    .Input("W")
    .Input("XZeroPoint", /*optional=*/true)
    .Input("WZeroPoint", /*optional=*/true)
    .Output("Y")
    .Infer(InferConvInteger)
    .KernelDtypeFromOutput("Y")
    .Kernel(DeviceType::kCPU, kInt32, &ConvIntegerKernel)
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive());

SF_REGISTER_OP(qlinear_conv)
    .Input("X")
    .Input("XScale")
    .Input("XZeroPoint", /*optional=*/true)
    .Input("W")
    .Input("WScale")
    .Input("WZeroPoint", /*optional=*/true)
    .Input("YScale")
    .Input("YZeroPoint")
    .Input("B", /*optional=*/true)
    .Output("Y")
    .Infer(InferQLinearConv)
    .KernelDtypeFromOutput("Y")
    .Kernel(DeviceType::kCPU, kUInt8, &QLinearConvKernel)
    .Kernel(DeviceType::kCPU, kInt8, &QLinearConvKernel)
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive());

}  // namespace scopeflow
