// quantize_linear, dequantize_linear and dynamic_quantize_linear: ONNX's
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear on uint8, int8,
// uint16, int16, the float8 types, int4, uint4, int2, uint2 and float4e2m1
// (dynamic: uint8), with a scale and zero
// point per tensor, per index of an axis or per block of an axis
// (quant_params.h).
//
//   quantize:   Y = saturate(round_half_even(X / Scale) + ZeroPoint)
//   dequantize: Y = (X - ZeroPoint) * Scale
//
// To a float8 type, quantize rounds X / Scale + ZeroPoint to the nearest
// float8 value; attribute "saturate" (default true) says what becomes of
// values beyond its range, as in cast (framework/float8.h). To float4e2m1
// likewise, always saturating at +-6 (framework/small_types.h); to int4,
// uint4, int2 and uint2 as to the wider integers, saturating at the type's
// own range ([-8, 7], [0, 15], [-2, 1], [0, 3]).
//
// Gradients: quantize_linear and dynamic_quantize_linear have none. Their
// outputs are integers; rounding is piecewise constant, so its derivative
// is zero wherever it exists, and quantization-aware training replaces it
// with an estimator of its own (straight-through), which is a choice of the
// training recipe, not a derivative. dequantize_linear's input is an
// integer tensor, which backward does not differentiate; its output is
// linear in Scale, and dequantize_linear_grad gives Scale@GRAD =
// sum of (X - ZeroPoint) * Y@GRAD over the elements each scale serves.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_format.h"
#include "framework/float16.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/quantization/quant_params.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The layout of input "Scale" for the kernel's input `data_slot`, after
// checking that "ZeroPoint" has Scale's shape (Prepare may not have known).
absl::StatusOr<ParamLayout> KernelLayout(const KernelContext& context,
                                         absl::string_view data_slot) {
  const Tensor& scale = context.Input("Scale");
  if (context.HasInput("ZeroPoint")) {
    const Tensor& zero_point = context.Input("ZeroPoint");
    SF_CHECK(
        zero_point.dims() == scale.dims() ||
            (IsOneElement(zero_point.dims()) && IsOneElement(scale.dims())),
        "input \"ZeroPoint\" (variable \"%s\") has shape %s: expected "
        "the shape of input \"Scale\" (variable \"%s\"), %s",
        context.InputName("ZeroPoint"), DimsToString(zero_point.dims()),
        context.InputName("Scale"), DimsToString(scale.dims()));
  }
  return ParamLayoutOf(
      context.Input(data_slot).dims(), scale.dims(),
      context.attrs().Get<int32_t>("axis"),
      context.attrs().Get<int32_t>("block_size"),
      absl::StrFormat("input \"Scale\" (variable \"%s\", shape %s)",
                      context.InputName("Scale"), DimsToString(scale.dims())));
}

// Calls body(index, param) for every element of a tensor of `layout`, in
// order, with the index of its scale and zero point.
template <typename Body>
void ForEachElement(const ParamLayout& layout, Body body) {
  int64_t index = 0;
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t a = 0; a < layout.size; ++a) {
      for (int64_t i = 0; i < layout.inner; ++i) {
        body(index++, layout.Index(o, a, i));
      }
    }
  }
}

// The zero points of the kernel's input "ZeroPoint", or `count` zeros; a
// double holds each integer and float8 value exactly.
std::vector<double> ZeroPoints(const KernelContext& context, int64_t count) {
  if (!context.HasInput("ZeroPoint")) return std::vector<double>(count, 0.0);
  const Tensor& zero_point = context.Input("ZeroPoint");
  std::vector<double> values(zero_point.numel());
  const auto decode = [&](auto type) {
    using F = typename decltype(type)::type;
    const F* data = zero_point.data<F>();
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = Float8ToFloat(data[i]);
    }
  };
  switch (zero_point.dtype()) {
    case kFloat8E4M3FN:
      decode(TypeTag<float8_e4m3fn>());
      break;
    case kFloat8E4M3FNUZ:
      decode(TypeTag<float8_e4m3fnuz>());
      break;
    case kFloat8E5M2:
      decode(TypeTag<float8_e5m2>());
      break;
    case kFloat8E5M2FNUZ:
      decode(TypeTag<float8_e5m2fnuz>());
      break;
    case kFloat4E2M1: {
      const float4_e2m1* data = zero_point.data<float4_e2m1>();
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = Float4E2M1BitsToFloat(data[i].bits);
      }
      break;
    }
    default: {
      const std::vector<int32_t> ints = IntsOf(zero_point);
      values.assign(ints.begin(), ints.end());
    }
  }
  return values;
}

// An element of a quantized tensor as a number of type C.
template <typename C, typename Q>
C ValueAs(Q q) {
  if constexpr (kIsFloat8<Q>) {
    return static_cast<C>(Float8ToFloat(q));
  } else if constexpr (std::is_same_v<Q, float4_e2m1>) {
    return static_cast<C>(Float4E2M1BitsToFloat(q.bits));
  } else if constexpr (kIsSmallInt<Q>) {
    return static_cast<C>(q.value);
  } else {
    return static_cast<C>(q);
  }
}

DataType QuantizedDtype(const InferContext& context) {
  if (context.HasInput("ZeroPoint")) return context.Input("ZeroPoint").dtype;
  return static_cast<DataType>(context.attrs().Get<int32_t>("out_dtype"));
}

absl::Status InferQuantize(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kScaleDtypes));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Scale"));
  const DataType out = QuantizedDtype(context);
  if (context.HasInput("ZeroPoint")) {
    SF_RETURN_IF_ERROR(
        CheckDtypeIn(context, "ZeroPoint", kLinearQuantizedDtypes));
  } else {
    SF_CHECK(absl::c_linear_search(kLinearQuantizedDtypes, out),
             "attribute \"out_dtype\" is %s: expected uint8, int8, uint16, "
             "int16, a float8 dtype, int4, uint4, int2, uint2 or float4e2m1",
             DataTypeName(out));
  }
  SF_RETURN_IF_ERROR(CheckScaleAndZeroPoint(
      context, "X", "Scale", "ZeroPoint", context.attrs().Get<int32_t>("axis"),
      context.attrs().Get<int32_t>("block_size")));
  const VarInfo& x = context.Input("X");
  context.SetOutput("Y", VarInfo{out, x.dims, x.has_dims});
  return absl::OkStatus();
}

template <typename T, typename Q>
absl::Status Quantize(const KernelContext& context, const ParamLayout& layout) {
  const Tensor& x = context.Input("X");
  const std::vector<float> scale = FloatsOf(context.Input("Scale"));
  const std::vector<double> zero_point = ZeroPoints(context, scale.size());
  const bool saturate = context.attrs().Get<bool>("saturate");
  const T* in = x.data<T>();
  Q* out = context.Output("Y")->data<Q>();
  ForEachElement(layout, [&](int64_t index, int64_t param) {
    float value;
    if constexpr (std::is_same_v<T, float16>) {
      value = HalfToFloat(in[index]);
    } else {
      value = in[index];
    }
    if constexpr (kIsFloat8<Q>) {
      // In float32, as ONNX's reference computes it.
      out[index] = FloatToFloat8<Q::kFormat>(
          value / scale[param] + static_cast<float>(zero_point[param]),
          saturate);
    } else if constexpr (std::is_same_v<Q, float4_e2m1>) {
      out[index] = {FloatToFloat4E2M1Bits(
          value / scale[param] + static_cast<float>(zero_point[param]))};
    } else if constexpr (kIsSmallInt<Q>) {
      // As below, within the type's own range rather than its storage's.
      const double scaled =
          std::nearbyint(value / scale[param]) + zero_point[param];
      const double saturated =
          std::isnan(scaled)
              ? zero_point[param]
              : std::min<double>(Q::kMax, std::max<double>(Q::kMin, scaled));
      out[index] = {static_cast<typename Q::Storage>(saturated)};
    } else {
      // Rounded before the zero point is added, as ONNX's reference does;
      // the zero point is whole, so this is the same as after.
      const double scaled = std::nearbyint(value / scale[param]);
      out[index] = RoundAndSaturate<Q>(scaled + zero_point[param],
                                       static_cast<int32_t>(zero_point[param]));
    }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status QuantizeKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const ParamLayout layout, KernelLayout(context, "X"));
  switch (context.Output("Y")->dtype()) {
    case kInt8:
      return Quantize<T, int8_t>(context, layout);
    case kUInt16:
      return Quantize<T, uint16_t>(context, layout);
    case kInt16:
      return Quantize<T, int16_t>(context, layout);
    case kFloat8E4M3FN:
      return Quantize<T, float8_e4m3fn>(context, layout);
    case kFloat8E4M3FNUZ:
      return Quantize<T, float8_e4m3fnuz>(context, layout);
    case kFloat8E5M2:
      return Quantize<T, float8_e5m2>(context, layout);
    case kFloat8E5M2FNUZ:
      return Quantize<T, float8_e5m2fnuz>(context, layout);
    case kInt4:
      return Quantize<T, qint4>(context, layout);
    case kUInt4:
      return Quantize<T, quint4>(context, layout);
    case kInt2:
      return Quantize<T, qint2>(context, layout);
    case kUInt2:
      return Quantize<T, quint2>(context, layout);
    case kFloat4E2M1:
      return Quantize<T, float4_e2m1>(context, layout);
    default:
      return Quantize<T, uint8_t>(context, layout);
  }
}

// Dequantize's scales: float32 and float16 as ONNX has them, and float64
// so that numeric gradient checks (framework/grad_check.h) reach Scale.
constexpr DataType kDequantizeScaleDtypes[] = {kFloat32, kFloat16, kFloat64};

absl::Status InferDequantize(InferContext& context) {
  SF_RETURN_IF_ERROR(
      CheckDtypeIn(context, "X",
                   {kUInt8, kInt8, kUInt16, kInt16, kInt32, kFloat8E4M3FN,
                    kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ, kInt4,
                    kUInt4, kInt2, kUInt2, kFloat4E2M1}));
  if (context.HasInput("ZeroPoint")) {
    const DataType x = context.Input("X").dtype;
    const DataType zero_point = context.Input("ZeroPoint").dtype;
    SF_CHECK(zero_point == x,
             "%s has dtype %s: the zero point must have the dtype of input "
             "\"X\" (variable \"%s\"), %s",
             DescribeInputShape(context, "ZeroPoint"), DataTypeName(zero_point),
             context.InputName("X"), DataTypeName(x));
  }
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Scale", kDequantizeScaleDtypes));
  SF_RETURN_IF_ERROR(CheckScaleAndZeroPoint(
      context, "X", "Scale", "ZeroPoint", context.attrs().Get<int32_t>("axis"),
      context.attrs().Get<int32_t>("block_size")));
  const VarInfo& x = context.Input("X");
  context.SetOutput("Y",
                    VarInfo{context.Input("Scale").dtype, x.dims, x.has_dims});
  return absl::OkStatus();
}

// The float type a tensor of T computes in: float for float16.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, double>, double, float>;

// Scale's elements in T's compute type.
template <typename T>
std::vector<ComputeType<T>> ScalesAs(const Tensor& scale) {
  if constexpr (std::is_same_v<T, double>) {
    const double* data = scale.data<double>();
    return std::vector<double>(data, data + scale.numel());
  } else {
    return FloatsOf(scale);
  }
}

template <typename Q, typename T>
absl::Status Dequantize(const KernelContext& context,
                        const ParamLayout& layout) {
  using C = ComputeType<T>;
  const std::vector<C> scale = ScalesAs<T>(context.Input("Scale"));
  const std::vector<double> zero_point = ZeroPoints(context, scale.size());
  const Q* in = context.Input("X").data<Q>();
  T* out = context.Output("Y")->data<T>();
  ForEachElement(layout, [&](int64_t index, int64_t param) {
    // Each side converted to float first, as ONNX's reference does (it
    // matters for int32 inputs beyond 2^24).
    const C value =
        (ValueAs<C>(in[index]) - static_cast<C>(zero_point[param])) *
        scale[param];
    if constexpr (std::is_same_v<T, float16>) {
      out[index] = FloatToHalf(value);
    } else {
      out[index] = value;
    }
  });
  return absl::OkStatus();
}

template <typename Q>
absl::Status DequantizeKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const ParamLayout layout, KernelLayout(context, "X"));
  switch (context.Output("Y")->dtype()) {
    case kFloat16:
      return Dequantize<Q, float16>(context, layout);
    case kFloat64:
      return Dequantize<Q, double>(context, layout);
    default:
      return Dequantize<Q, float>(context, layout);
  }
}

absl::Status InferDequantizeGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Y@GRAD", {kFloat32, kFloat64}));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Y@GRAD", "Scale"));
  if (context.HasOutput("Scale@GRAD")) {
    context.SetOutput("Scale@GRAD", context.Input("Scale"));
  }
  return absl::OkStatus();
}

// Scale@GRAD[p] = sum of (X - ZeroPoint) * Y@GRAD over the elements of
// scale p.
template <typename Q, typename T>
absl::Status DequantizeGrad(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const ParamLayout layout, KernelLayout(context, "X"));
  const Tensor& scale = context.Input("Scale");
  const std::vector<double> zero_point = ZeroPoints(context, scale.numel());
  const Q* x = context.Input("X").data<Q>();
  const T* grad = context.Input("Y@GRAD").data<T>();
  std::vector<double> sums(scale.numel(), 0.0);
  ForEachElement(layout, [&](int64_t index, int64_t param) {
    sums[param] += (ValueAs<double>(x[index]) - zero_point[param]) *
                   static_cast<double>(grad[index]);
  });
  T* out = context.Output("Scale@GRAD")->data<T>();
  for (size_t p = 0; p < sums.size(); ++p) out[p] = static_cast<T>(sums[p]);
  return absl::OkStatus();
}

template <typename Q>
absl::Status DequantizeGradKernel(KernelContext& context) {
  if (!context.HasOutput("Scale@GRAD")) return absl::OkStatus();
  if (context.Input("Y@GRAD").dtype() == kFloat64) {
    return DequantizeGrad<Q, double>(context);
  }
  return DequantizeGrad<Q, float>(context);
}

absl::Status InferDynamicQuantize(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "X", kFloat32));
  const VarInfo& x = context.Input("X");
  context.SetOutput("Y", VarInfo{kUInt8, x.dims, x.has_dims});
  context.SetOutput("YScale", 0, kFloat32, {});
  context.SetOutput("YZeroPoint", 0, kUInt8, {});
  return absl::OkStatus();
}

// The scale and zero point that map [min(X, 0), max(X, 0)] onto [0, 255],
// all in float32 as ONNX's reference computes them.
absl::Status DynamicQuantizeKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const float* in = x.data<float>();
  float low = 0, high = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    // std::min/max keep the bound when in[i] is NaN.
    low = std::min(low, in[i]);
    high = std::max(high, in[i]);
  }
  const float scale = (high == low ? 1.0f : high - low) / 255.0f;
  const float initial_zero_point = 0.0f - low / scale;
  const float zero_point =
      std::nearbyint(std::max(0.0f, std::min(255.0f, initial_zero_point)));
  uint8_t* out = context.Output("Y")->data<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    out[i] =
        RoundAndSaturate<uint8_t>(std::nearbyint(in[i] / scale) + zero_point,
                                  static_cast<int32_t>(zero_point));
  }
  context.Output("YScale")->data<float>()[0] = scale;
  context.Output("YZeroPoint")->data<uint8_t>()[0] =
      static_cast<uint8_t>(zero_point);
  return absl::OkStatus();
}

// The types dequantize_linear reads.
using DequantizeTypes =
    TypeList<uint8_t, int8_t, uint16_t, int16_t, int32_t, float8_e4m3fn,
             float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, qint4, quint4,
             qint2, quint2, float4_e2m1>;

}  // namespace

SF_REGISTER_OP(quantize_linear)
    .Input("X")
    .Input("Scale")
    .Input("ZeroPoint", /*optional=*/true)
    .Output("Y")
    .Attr("axis", AttrType::kInt, AttrValue(1))
    .Attr("block_size", AttrType::kInt, AttrValue(0), NonNegative())
    .Attr("out_dtype", AttrType::kInt,
          AttrValue(static_cast<int32_t>(DATA_TYPE_UINT8)))
    .Attr("saturate", AttrType::kBool, AttrValue(true))
    .Infer(InferQuantize)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &QuantizeKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat16, &QuantizeKernel<float16>);

SF_REGISTER_OP(dequantize_linear)
    .Input("X")
    .Input("Scale")
    .Input("ZeroPoint", /*optional=*/true)
    .Output("Y")
    .Attr("axis", AttrType::kInt, AttrValue(1))
    .Attr("block_size", AttrType::kInt, AttrValue(0), NonNegative())
    .Infer(InferDequantize)
    .Grad(GradSpec("dequantize_linear_grad")
              .ReadInput("X")
              .ReadInput("Scale")
              .ReadInput("ZeroPoint")
              .ReadOutputGrad("Y")
              .WriteInputGrad("Scale"))
    .KernelDtypeFromInput("X")
    .Kernels(DeviceType::kCPU, DequantizeTypes(), [](auto t) {
      return &DequantizeKernel<typename decltype(t)::type>;
    });

SF_REGISTER_OP(dequantize_linear_grad)
    .Input("X")
    .Input("Scale")
    .Input("ZeroPoint", /*optional=*/true)
    .Input("Y@GRAD")
    .Output("Scale@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt, AttrValue(1))
    .Attr("block_size", AttrType::kInt, AttrValue(0), NonNegative())
    .Infer(InferDequantizeGrad)
    .KernelDtypeFromInput("X")
    .Kernels(DeviceType::kCPU, DequantizeTypes(), [](auto t) {
      return &DequantizeGradKernel<typename decltype(t)::type>;
    });

SF_REGISTER_OP(dynamic_quantize_linear)
    .Input("X")
    .Output("Y")
    .Output("YScale")
    .Output("YZeroPoint")
    .Infer(InferDynamicQuantize)
    .Kernel(DeviceType::kCPU, kFloat32, &DynamicQuantizeKernel);

}  // namespace scopeflow
