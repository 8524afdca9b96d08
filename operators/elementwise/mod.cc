// mod: Out = X mod Y with numpy-style broadcasting, as ONNX Mod. With
// attribute "fmod" 0 (integers only) the remainder takes the divisor's sign
// (Python's %, numpy's mod); with "fmod" 1 it takes the dividend's (C's
// fmod and %). Dtypes float32, float64 and float16 (fmod 1 only, as ONNX
// requires; float16 computes in float32) and every integer type (int8 to
// int64, uint8 to uint64); an integer divisor of zero is an error.
//
// Gradient (float32, float64): Out = X - trunc(X / Y) * Y, piecewise
// linear, so X@GRAD = Out@GRAD and Y@GRAD = -Out@GRAD * trunc(X / Y),
// each summed over its input's broadcast (at the jumps, where X / Y is a
// whole number, no derivative exists).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/broadcast.h"
#include "operators/elementwise/grad_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The remainder with the dividend's sign. INT_MIN % -1 overflows in C, so
// a divisor of -1 gives 0 directly.
struct TruncatedMod {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float16>) {
      return FloatToHalf(std::fmod(HalfToFloat(a), HalfToFloat(b)));
    } else if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b == T{-1}) return T{0};
      }
      return static_cast<T>(a % b);
    }
  }
};

// The remainder with the divisor's sign (integers).
struct FlooredMod {
  template <typename T>
  T operator()(T a, T b) const {
    const T r = TruncatedMod()(a, b);
    if (r == T{0} || (r < T{0}) == (b < T{0})) return r;
    return static_cast<T>(r + b);
  }
};

absl::Status InferMod(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  const int32_t fmod = context.attrs().Get<int32_t>("fmod");
  SF_CHECK(fmod == 0 || fmod == 1, "attribute \"fmod\" must be 0 or 1, got %d",
           fmod);
  const DataType dtype = context.Input("X").dtype;
  SF_CHECK(fmod == 1 || !IsFloatDataType(dtype),
           "floating-point inputs (%s) need attribute \"fmod\" = 1 (the "
           "C fmod); fmod = 0 is for integers",
           DataTypeName(dtype));
  return elementwise::InferBroadcast(context, {"X", "Y"}, dtype);
}

template <typename T>
absl::Status ModKernel(KernelContext& context) {
  const Tensor& y = context.Input("Y");
  if constexpr (std::is_integral_v<T>) {
    const T* ys = y.data<T>();
    for (int64_t i = 0; i < y.numel(); ++i) {
      SF_CHECK(ys[i] != T{0}, "input Y (%s) holds a zero divisor at element %d",
               context.InputName("Y"), i);
    }
  }
  if constexpr (std::is_integral_v<T>) {
    if (context.attrs().Get<int32_t>("fmod") == 0) {
      elementwise::BroadcastBinary<T, T, FlooredMod>(context.Input("X"), y,
                                                     context.Output("Out"));
      return absl::OkStatus();
    }
  }
  // Floats have fmod = 1 (InferMod checks).
  elementwise::BroadcastBinary<T, T, TruncatedMod>(context.Input("X"), y,
                                                   context.Output("Out"));
  return absl::OkStatus();
}

struct ModGrad {
  template <typename T>
  T dx(T, T, T g) const {
    return g;
  }
  template <typename T>
  T dy(T x, T y, T g) const {
    return -g * std::trunc(x / y);
  }
};

absl::Status CheckModGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::CheckBroadcastGrad(context, {"X", "Y"});
}

template <typename T>
absl::Status ModGradKernel(KernelContext& context) {
  elementwise::BroadcastBinaryGrad<T, ModGrad>(
      context.Input("X"), context.Input("Y"), context.Input("Out@GRAD"),
      context.HasOutput("X@GRAD") ? context.Output("X@GRAD") : nullptr,
      context.HasOutput("Y@GRAD") ? context.Output("Y@GRAD") : nullptr);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(mod)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Attr("fmod", AttrType::kInt, AttrValue(int32_t{0}))
    .Infer(InferMod)
    .Grad(GradSpec("mod_grad")
              .ReadInput("X")
              .ReadInput("Y")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Y"))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) { return &ModKernel<typename decltype(t)::type>; })
    .Kernel(DeviceType::kCPU, kFloat16, &ModKernel<float16>);

SF_REGISTER_OP(mod_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Attr("fmod", AttrType::kInt, AttrValue(int32_t{1}))
    .Infer(elementwise::CheckThenGradsLike(CheckModGrad, {"X", "Y"}))
    .Kernel(DeviceType::kCPU, kFloat32, &ModGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ModGradKernel<double>);

}  // namespace scopeflow
