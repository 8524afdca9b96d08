// cast: Out = X converted to the dtype of attribute "out_dtype" (a DataType
// number, as fill_constant's "dtype"), between any two dtypes: float32,
// float64, float16, bfloat16, the float8 types, the integers (int8 to
// int64, uint8 to uint64), bool, and the types of framework/small_types.h
// (int4, uint4, int2, uint2, float4e2m1, float8e8m0).
//
// Conversions are defined for every input value:
// - float to integer truncates toward zero and saturates at the integer
//   type's limits; NaN gives 0;
// - integer to narrower integer wraps around (keeps the low bits);
// - anything to bool is "not zero" (NaN gives true); bool gives 0 or 1;
// - float16, bfloat16 and the float8 types convert through float32 (to
//   them: rounds to nearest even); to a float8 type, a value beyond its
//   range (or an infinity) becomes its largest finite value of that sign
//   with attribute "saturate" true (the default), else infinity
//   (float8e5m2) or NaN (the others), as ONNX Cast says;
// - to int4, uint4, int2, uint2 from anything keeps the low bits (a float
//   truncated toward zero first; NaN gives 0), as ONNX's cases show;
// - to float4e2m1 rounds to nearest even and saturates at +-6 (NaN gives
//   -0: the format has no NaN);
// - to float8e8m0 keeps the float32's exponent and rounds its mantissa
//   away as attribute "e8m0_rounding" says ("up", the default; "down";
//   "nearest", ties up), as ONNX's "round_mode"; with "saturate" 2^127
//   never rounds up into NaN (framework/small_types.cc has the details);
// - int4 and the others of small_types.h convert from their value.
//
// cast_grad casts Out@GRAD back to X's dtype.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/convert.h"
#include "operators/elementwise/grad_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// float16 on the host, for ConvertValue.
struct HostHalf {
  using Type = float16;
  static float ToFloat(float16 v) { return HalfToFloat(v); }
  static float16 FromFloat(float v) { return FloatToHalf(v); }
};

// The attributes that choose among conversions of one pair of dtypes.
struct CastOptions {
  // To the float8 types (float8.h, small_types.h).
  bool saturate = true;
  // To float8e8m0.
  E8M0Rounding e8m0_rounding = E8M0Rounding::kUp;
};

// bfloat16, the float8 types and float4e2m1 convert through float32 here,
// the small integers through int32 (ConvertValue, shared with the device,
// knows one 16-bit float type).
template <typename To, typename From>
To Convert(From v, const CastOptions& options) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, bfloat16>) {
    return Convert<To>(BFloat16ToFloat(v), options);
  } else if constexpr (kIsFloat8<From>) {
    return Convert<To>(Float8ToFloat(v), options);
  } else if constexpr (std::is_same_v<From, float4_e2m1>) {
    return Convert<To>(Float4E2M1BitsToFloat(v.bits), options);
  } else if constexpr (std::is_same_v<From, float8_e8m0>) {
    return Convert<To>(Float8E8M0BitsToFloat(v.bits), options);
  } else if constexpr (kIsSmallInt<From>) {
    return Convert<To>(static_cast<int32_t>(v.value), options);
  } else if constexpr (std::is_same_v<To, bfloat16>) {
    return FloatToBFloat16(Convert<float>(v, options));
  } else if constexpr (kIsFloat8<To>) {
    return FloatToFloat8<To::kFormat>(Convert<float>(v, options),
                                      options.saturate);
  } else if constexpr (std::is_same_v<To, float4_e2m1>) {
    return {FloatToFloat4E2M1Bits(Convert<float>(v, options))};
  } else if constexpr (std::is_same_v<To, float8_e8m0>) {
    return {FloatToFloat8E8M0Bits(Convert<float>(v, options),
                                  options.e8m0_rounding, options.saturate)};
  } else if constexpr (kIsSmallInt<To> && std::is_integral_v<From>) {
    return ToSmallIntFromInteger<To>(static_cast<int64_t>(v));
  } else if constexpr (kIsSmallInt<To>) {
    return ToSmallInt<To>(Convert<double>(v, options));
  } else {
    return elementwise::ConvertValue<To, From, HostHalf>(v);
  }
}

template <typename From, typename To>
absl::Status CastLoop(const Tensor& x, Tensor* out,
                      const CastOptions& options) {
  const From* in = x.data<From>();
  To* result = out->data<To>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) result[i] = Convert<To>(in[i], options);
  return absl::OkStatus();
}

// Converts `in` into `out`, which has its shape and the dtype to convert
// to; `out_slot` names `out` in errors.
template <typename From>
absl::Status CastInto(const Tensor& in, Tensor* out, absl::string_view out_slot,
                      const CastOptions& options = {}) {
  switch (out->dtype()) {
    case kFloat32:
      return CastLoop<From, float>(in, out, options);
    case kFloat64:
      return CastLoop<From, double>(in, out, options);
    case kFloat16:
      return CastLoop<From, float16>(in, out, options);
    case kInt32:
      return CastLoop<From, int32_t>(in, out, options);
    case kInt64:
      return CastLoop<From, int64_t>(in, out, options);
    case kUInt8:
      return CastLoop<From, uint8_t>(in, out, options);
    case kInt8:
      return CastLoop<From, int8_t>(in, out, options);
    case kInt16:
      return CastLoop<From, int16_t>(in, out, options);
    case kUInt16:
      return CastLoop<From, uint16_t>(in, out, options);
    case kUInt32:
      return CastLoop<From, uint32_t>(in, out, options);
    case kUInt64:
      return CastLoop<From, uint64_t>(in, out, options);
    case kBFloat16:
      return CastLoop<From, bfloat16>(in, out, options);
    case kFloat8E4M3FN:
      return CastLoop<From, float8_e4m3fn>(in, out, options);
    case kFloat8E4M3FNUZ:
      return CastLoop<From, float8_e4m3fnuz>(in, out, options);
    case kFloat8E5M2:
      return CastLoop<From, float8_e5m2>(in, out, options);
    case kFloat8E5M2FNUZ:
      return CastLoop<From, float8_e5m2fnuz>(in, out, options);
    case kBool:
      return CastLoop<From, bool>(in, out, options);
    case kInt4:
      return CastLoop<From, qint4>(in, out, options);
    case kUInt4:
      return CastLoop<From, quint4>(in, out, options);
    case kInt2:
      return CastLoop<From, qint2>(in, out, options);
    case kUInt2:
      return CastLoop<From, quint2>(in, out, options);
    case kFloat4E2M1:
      return CastLoop<From, float4_e2m1>(in, out, options);
    case kFloat8E8M0:
      return CastLoop<From, float8_e8m0>(in, out, options);
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("cannot cast to dtype %s (output \"%s\")",
                          DataTypeName(out->dtype()), out_slot));
  }
}

E8M0Rounding ParseE8M0Rounding(const std::string& mode) {
  if (mode == "down") return E8M0Rounding::kDown;
  if (mode == "nearest") return E8M0Rounding::kNearest;
  return E8M0Rounding::kUp;
}

template <typename From>
absl::Status CastKernel(KernelContext& context) {
  CastOptions options;
  options.saturate = context.attrs().Get<bool>("saturate");
  options.e8m0_rounding =
      ParseE8M0Rounding(context.attrs().Get<std::string>("e8m0_rounding"));
  return CastInto<From>(context.Input("X"), context.Output("Out"), "Out",
                        options);
}

// The gradient of a cast is the output's gradient cast back to X's dtype.
// Only floating-point X carries a gradient, so the conversion is between
// float dtypes, where it is the identity up to rounding.
template <typename From>
absl::Status CastGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  return CastInto<From>(context.Input("Out@GRAD"), context.Output("X@GRAD"),
                        "X@GRAD");
}

absl::Status CheckIsDtype(const AttrValue& value) {
  const int32_t number = std::get<int32_t>(value);
  if (IsValidDataType(static_cast<DataType>(number))) return absl::OkStatus();
  std::vector<std::string> choices;
  for (DataType dtype : AllDataTypes()) {
    choices.push_back(absl::StrFormat("%d (%s)", static_cast<int>(dtype),
                                      DataTypeName(dtype)));
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("must be a dtype number, one of %s; got %d",
                      absl::StrJoin(choices, ", "), number));
}

absl::Status InferCast(InferContext& context) {
  VarInfo info = context.Input("X");
  info.dtype = static_cast<DataType>(context.attrs().Get<int32_t>("out_dtype"));
  context.SetOutput("Out", info);
  return absl::OkStatus();
}

// Out@GRAD has the dtype the forward cast produced and X's shape.
absl::Status CheckCastGrad(InferContext& context) {
  const DataType out_dtype =
      static_cast<DataType>(context.attrs().Get<int32_t>("out_dtype"));
  const VarInfo& g = context.Input("Out@GRAD");
  SF_CHECK(g.dtype == out_dtype,
           "input \"Out@GRAD\" (variable \"%s\") has dtype %s: expected %s, "
           "the attribute \"out_dtype\" of the cast",
           context.InputName("Out@GRAD"), DataTypeName(g.dtype),
           DataTypeName(out_dtype));
  return elementwise::CheckSameShape(context, "X", "Out@GRAD");
}

}  // namespace

SF_REGISTER_OP(cast)
    .Input("X")
    .Output("Out")
    .Attr("out_dtype", AttrType::kInt, CheckIsDtype)
    .Attr("saturate", AttrType::kBool, AttrValue(true))
    .Attr("e8m0_rounding", AttrType::kString, AttrValue(std::string("up")),
          OneOf({"up", "down", "nearest"}))
    .Infer(InferCast)
    .Grad(GradSpec("cast_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernels(DeviceType::kCPU, AllTypes(),
             [](auto t) { return &CastKernel<typename decltype(t)::type>; })
    .Kernels(DeviceType::kCPU, SmallTypes(),
             [](auto t) { return &CastKernel<typename decltype(t)::type>; });

// A gradient op rather than a cast: the cast back needs X's dtype, which
// only the variable's declaration knows, not the forward op a gradient
// maker sees. The kernel is chosen by Out@GRAD's dtype; X@GRAD gets X's.
// "out_dtype", "saturate" and "e8m0_rounding" are the forward cast's (the
// gradient maker copies them); the cast back is between float dtypes, where
// saturating and rounding to float8e8m0 do not apply.
SF_REGISTER_OP(cast_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("out_dtype", AttrType::kInt, CheckIsDtype)
    .Attr("saturate", AttrType::kBool, AttrValue(true))
    .Attr("e8m0_rounding", AttrType::kString, AttrValue(std::string("up")),
          OneOf({"up", "down", "nearest"}))
    .Infer(elementwise::CheckThenGradsLike(CheckCastGrad, {"X"}))
    .KernelDtypeFromInput("Out@GRAD")
    .Kernel(DeviceType::kCPU, kFloat32, &CastGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &CastGradKernel<double>)
    .Kernel(DeviceType::kCPU, kFloat16, &CastGradKernel<float16>)
    .Kernel(DeviceType::kCPU, kBFloat16, &CastGradKernel<bfloat16>);

}  // namespace scopeflow
