// cast: Out = X converted to the dtype of attribute "out_dtype" (a DataType
// number, as fill_constant's "dtype"), between float32, float64, float16,
// int32, int64, uint8, int8 and bool.
//
// Conversions are defined for every input value:
// - float to integer truncates toward zero and saturates at the integer
//   type's limits; NaN gives 0;
// - integer to narrower integer wraps around (keeps the low bits);
// - anything to bool is "not zero" (NaN gives true); bool gives 0 or 1;
// - float16 converts through float32 (to float16: rounds to nearest even).
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

template <typename To, typename From>
To Convert(From v) {
  return elementwise::ConvertValue<To, From, HostHalf>(v);
}

template <typename From, typename To>
absl::Status CastLoop(const Tensor& x, Tensor* out) {
  const From* in = x.data<From>();
  To* result = out->data<To>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) result[i] = Convert<To>(in[i]);
  return absl::OkStatus();
}

// Converts `in` into `out`, which has its shape and the dtype to convert
// to; `out_slot` names `out` in errors.
template <typename From>
absl::Status CastInto(const Tensor& in, Tensor* out,
                      absl::string_view out_slot) {
  switch (out->dtype()) {
    case kFloat32:
      return CastLoop<From, float>(in, out);
    case kFloat64:
      return CastLoop<From, double>(in, out);
    case kFloat16:
      return CastLoop<From, float16>(in, out);
    case kInt32:
      return CastLoop<From, int32_t>(in, out);
    case kInt64:
      return CastLoop<From, int64_t>(in, out);
    case kUInt8:
      return CastLoop<From, uint8_t>(in, out);
    case kInt8:
      return CastLoop<From, int8_t>(in, out);
    case kBool:
      return CastLoop<From, bool>(in, out);
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("cannot cast to dtype %s (output \"%s\")",
                          DataTypeName(out->dtype()), out_slot));
  }
}

template <typename From>
absl::Status CastKernel(KernelContext& context) {
  return CastInto<From>(context.Input("X"), context.Output("Out"), "Out");
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
  for (DataType dtype :
       {kFloat32, kFloat64, kFloat16, kInt32, kInt64, kUInt8, kBool, kInt8}) {
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
    .Infer(InferCast)
    .Grad(GradSpec("cast_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &CastKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &CastKernel<double>)
    .Kernel(DeviceType::kCPU, kFloat16, &CastKernel<float16>)
    .Kernel(DeviceType::kCPU, kInt32, &CastKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &CastKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kUInt8, &CastKernel<uint8_t>)
    .Kernel(DeviceType::kCPU, kInt8, &CastKernel<int8_t>)
    .Kernel(DeviceType::kCPU, kBool, &CastKernel<bool>);

// A gradient op rather than a cast: the cast back needs X's dtype, which
// only the variable's declaration knows, not the forward op a gradient
// maker sees. The kernel is chosen by Out@GRAD's dtype; X@GRAD gets X's.
// "out_dtype" is the forward cast's (the gradient maker copies it).
SF_REGISTER_OP(cast_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("out_dtype", AttrType::kInt, CheckIsDtype)
    .Infer(elementwise::CheckThenGradsLike(CheckCastGrad, {"X"}))
    .KernelDtypeFromInput("Out@GRAD")
    .Kernel(DeviceType::kCPU, kFloat32, &CastGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &CastGradKernel<double>)
    .Kernel(DeviceType::kCPU, kFloat16, &CastGradKernel<float16>);

}  // namespace scopeflow
