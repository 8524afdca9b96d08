// cast: Out = X converted to the dtype of attribute "out_dtype" (a DataType
// number, as fill_constant's "dtype"), between float32, float64, float16,
// int32, int64, uint8 and bool.
//
// Conversions are defined for every input value:
// - float to integer truncates toward zero and saturates at the integer
//   type's limits; NaN gives 0;
// - integer to narrower integer wraps around (keeps the low bits);
// - anything to bool is "not zero" (NaN gives true); bool gives 0 or 1;
// - float16 converts through float32 (to float16: rounds to nearest even).
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

template <typename To, typename From>
To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, float16>) {
    return Convert<To>(HalfToFloat(v));
  } else if constexpr (std::is_same_v<To, float16>) {
    return FloatToHalf(Convert<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_floating_point_v<From> &&
                       std::is_integral_v<To>) {
    // Both limits are exact in double: 0 or -2^k, and 2^k.
    constexpr double kLowest =
        static_cast<double>(std::numeric_limits<To>::min());
    constexpr double kBeyond =
        static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2;
    if (v != v) return To{0};
    if (v <= kLowest) return std::numeric_limits<To>::min();
    if (v >= kBeyond) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <typename From, typename To>
absl::Status CastLoop(const Tensor& x, Tensor* out) {
  const From* in = x.data<From>();
  To* result = out->data<To>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) result[i] = Convert<To>(in[i]);
  return absl::OkStatus();
}

template <typename From>
absl::Status CastKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  switch (out->dtype()) {
    case kFloat32:
      return CastLoop<From, float>(x, out);
    case kFloat64:
      return CastLoop<From, double>(x, out);
    case kFloat16:
      return CastLoop<From, float16>(x, out);
    case kInt32:
      return CastLoop<From, int32_t>(x, out);
    case kInt64:
      return CastLoop<From, int64_t>(x, out);
    case kUInt8:
      return CastLoop<From, uint8_t>(x, out);
    case kBool:
      return CastLoop<From, bool>(x, out);
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("cannot cast to dtype %s (output \"Out\")",
                          DataTypeName(out->dtype())));
  }
}

absl::Status CheckIsDtype(const AttrValue& value) {
  const int32_t number = std::get<int32_t>(value);
  if (IsValidDataType(static_cast<DataType>(number))) return absl::OkStatus();
  std::vector<std::string> choices;
  for (DataType dtype :
       {kFloat32, kFloat64, kFloat16, kInt32, kInt64, kUInt8, kBool}) {
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

}  // namespace

SF_REGISTER_OP(cast)
    .Input("X")
    .Output("Out")
    .Attr("out_dtype", AttrType::kInt, CheckIsDtype)
    .Infer(InferCast)
    .Kernel(DeviceType::kCPU, kFloat32, &CastKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &CastKernel<double>)
    .Kernel(DeviceType::kCPU, kFloat16, &CastKernel<float16>)
    .Kernel(DeviceType::kCPU, kInt32, &CastKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &CastKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kUInt8, &CastKernel<uint8_t>)
    .Kernel(DeviceType::kCPU, kBool, &CastKernel<bool>);

}  // namespace scopeflow
