// Ops of one input "X" with an output "Out" of its dtype and shape: the
// math functions exp, log, sqrt, erf, sin, cos (float32, float64); abs and
// neg (also int32, int64, wrapping around at the lowest value); scale and
// clip (float32, float64, int32, int64).
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <utility>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/arithmetic.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using elementwise::Add;
using elementwise::Mul;
using elementwise::Neg;

struct Exp {
  template <typename T>
  T operator()(T a) const {
    return std::exp(a);
  }
};

struct Log {
  template <typename T>
  T operator()(T a) const {
    return std::log(a);
  }
};

struct Sqrt {
  template <typename T>
  T operator()(T a) const {
    return std::sqrt(a);
  }
};

struct Erf {
  template <typename T>
  T operator()(T a) const {
    return std::erf(a);
  }
};

struct Sin {
  template <typename T>
  T operator()(T a) const {
    return std::sin(a);
  }
};

struct Cos {
  template <typename T>
  T operator()(T a) const {
    return std::cos(a);
  }
};

struct Abs {
  template <typename T>
  T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) {
      return a < 0 ? Neg()(a) : a;
    } else {
      return std::abs(a);
    }
  }
};

template <typename T, typename Op>
absl::Status UnaryKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const T* in = x.data<T>();
  T* result = out->data<T>();
  const int64_t n = x.numel();
  const Op op;
  for (int64_t i = 0; i < n; ++i) result[i] = op(in[i]);
  return absl::OkStatus();
}

// Whether `value` is a whole number that T holds.
template <typename T>
bool IsWhole(double value) {
  // Both limits are exact in double (the upper one is 2^31 or 2^63).
  constexpr double kLowest = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double kBeyond = -2 * kLowest;
  return std::trunc(value) == value && value >= kLowest && value < kBeyond;
}

// For integer X, the float attributes `names` must be whole numbers that
// X's dtype holds, so that the kernel computes exactly.
absl::Status CheckWholeAttrs(const InferContext& context,
                             std::initializer_list<const char*> names) {
  const VarInfo& x = context.Input("X");
  if (x.dtype != kInt32 && x.dtype != kInt64) return absl::OkStatus();
  for (const char* name : names) {
    const float value = context.attrs().Get<float>(name);
    SF_CHECK(
        x.dtype == kInt32 ? IsWhole<int32_t>(value) : IsWhole<int64_t>(value),
        "attribute \"%s\" = %g must be a whole number in the range of "
        "%s, the dtype of input \"X\" (variable \"%s\")",
        name, value, DataTypeName(x.dtype), context.InputName("X"));
  }
  return absl::OkStatus();
}

absl::Status InferScale(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckWholeAttrs(context, {"scale", "bias"}));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

// Out = scale * X + bias, or scale * (X + bias) if "bias_after_scale" is
// false.
template <typename T>
absl::Status ScaleKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const T scale = static_cast<T>(context.attrs().Get<float>("scale"));
  const T bias = static_cast<T>(context.attrs().Get<float>("bias"));
  const T* in = x.data<T>();
  T* result = out->data<T>();
  const int64_t n = x.numel();
  const Add add;
  const Mul mul;
  if (context.attrs().Get<bool>("bias_after_scale")) {
    for (int64_t i = 0; i < n; ++i) result[i] = add(mul(scale, in[i]), bias);
  } else {
    for (int64_t i = 0; i < n; ++i) result[i] = mul(scale, add(in[i], bias));
  }
  return absl::OkStatus();
}

// The bounds clip applies to T: "min" and "max", for integers rounded
// inward to whole numbers and saturated to T's range.
template <typename T>
std::pair<T, T> ClipBounds(float min, float max) {
  if constexpr (std::is_integral_v<T>) {
    constexpr double kLowest =
        static_cast<double>(std::numeric_limits<T>::min());
    constexpr double kBeyond = -2 * kLowest;  // 2^31 or 2^63.
    auto saturate = [&](double v) {
      if (v <= kLowest) return std::numeric_limits<T>::min();
      if (v >= kBeyond) return std::numeric_limits<T>::max();
      return static_cast<T>(v);
    };
    return {saturate(std::ceil(min)), saturate(std::floor(max))};
  } else {
    return {static_cast<T>(min), static_cast<T>(max)};
  }
}

template <typename T>
bool ClipIsEmpty(float min, float max) {
  const auto [lo, hi] = ClipBounds<T>(min, max);
  return lo > hi;
}

absl::Status InferClip(InferContext& context) {
  const float min = context.attrs().Get<float>("min");
  const float max = context.attrs().Get<float>("max");
  SF_CHECK(min <= max, "attribute \"min\" (%g) must not exceed \"max\" (%g)",
           min, max);
  const VarInfo& x = context.Input("X");
  if (x.dtype == kInt32 || x.dtype == kInt64) {
    const bool empty = x.dtype == kInt32 ? ClipIsEmpty<int32_t>(min, max)
                                         : ClipIsEmpty<int64_t>(min, max);
    SF_CHECK(!empty,
             "attributes \"min\" (%g) and \"max\" (%g) enclose no %s value, "
             "the dtype of input \"X\" (variable \"%s\")",
             min, max, DataTypeName(x.dtype), context.InputName("X"));
  }
  context.SetOutput("Out", x);
  return absl::OkStatus();
}

// NaN stays NaN.
template <typename T>
absl::Status ClipKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const auto [lo, hi] = ClipBounds<T>(context.attrs().Get<float>("min"),
                                      context.attrs().Get<float>("max"));
  const T* in = x.data<T>();
  T* result = out->data<T>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const T v = in[i];
    result[i] = v < lo ? lo : (hi < v ? hi : v);
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(exp)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Exp>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Exp>);

SF_REGISTER_OP(log)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Log>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Log>);

SF_REGISTER_OP(sqrt)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Sqrt>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Sqrt>);

SF_REGISTER_OP(erf)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Erf>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Erf>);

SF_REGISTER_OP(sin)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Sin>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Sin>);

SF_REGISTER_OP(cos)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Cos>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Cos>);

SF_REGISTER_OP(abs)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Abs>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Abs>)
    .Kernel(DeviceType::kCPU, kInt32, &UnaryKernel<int32_t, Abs>)
    .Kernel(DeviceType::kCPU, kInt64, &UnaryKernel<int64_t, Abs>);

SF_REGISTER_OP(neg)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Neg>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Neg>)
    .Kernel(DeviceType::kCPU, kInt32, &UnaryKernel<int32_t, Neg>)
    .Kernel(DeviceType::kCPU, kInt64, &UnaryKernel<int64_t, Neg>);

// For integer X, "scale" and "bias" must be whole numbers in X's range, and
// the arithmetic wraps around.
SF_REGISTER_OP(scale)
    .Input("X")
    .Output("Out")
    .Attr("scale", AttrType::kFloat, AttrValue(1.0f))
    .Attr("bias", AttrType::kFloat, AttrValue(0.0f))
    .Attr("bias_after_scale", AttrType::kBool, AttrValue(true))
    .Infer(InferScale)
    .Kernel(DeviceType::kCPU, kFloat32, &ScaleKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ScaleKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ScaleKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ScaleKernel<int64_t>);

// Out = min(max(X, min), max). For integer X the bounds are rounded inward
// to whole numbers, which must leave at least one.
SF_REGISTER_OP(clip)
    .Input("X")
    .Output("Out")
    .Attr("min", AttrType::kFloat)
    .Attr("max", AttrType::kFloat)
    .Infer(InferClip)
    .Kernel(DeviceType::kCPU, kFloat32, &ClipKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ClipKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ClipKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ClipKernel<int64_t>);

}  // namespace scopeflow
