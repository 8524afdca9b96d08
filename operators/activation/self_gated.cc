// Self-gated activations, x times a gate of x, and the gates themselves:
// softplus, hard_sigmoid, hard_swish, silu, mish. One input "X" and an
// output "Out" of its dtype and shape, for float32 and float64; float32
// runs operators/elementwise/vector_math.h's kernels on the widest vectors,
// float64 calls libm.
//
// Gradients (float32, float64): "<op>_grad" reads X and Out@GRAD and
// writes the optional X@GRAD.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <variant>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/activation/grad_util.h"
#include "operators/common.h"
#include "operators/elementwise/vector_loops.h"
#include "operators/elementwise/vector_math.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

absl::Status InferActivation(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

// log(1 + e^x), as max(x, 0) + log1p(e^-|x|): no overflow, and the tiny
// results of very negative x keep their digits.
struct SoftplusOp {
  SF_VECTOR_OP float operator()(float x) const { return vmath::Softplus(x); }
  SF_VECTOR_OP double operator()(double x) const {
    return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  }
};

// Inlined into the loops of the SF_WIDEST_VECTORS functions, whose clones
// would otherwise call the baseline's scalar code.
#define SF_ALWAYS_INLINE inline __attribute__((always_inline))

// 1 / (1 + e^-x), accurate where it is tiny (vector_math.h's Sigmoid).
SF_ALWAYS_INLINE float Sigmoid(float x) { return vmath::Sigmoid(x); }
SF_ALWAYS_INLINE double Sigmoid(double x) {
  const double e = std::exp(-std::fabs(x));
  return (x >= 0 ? 1.0 : e) / (1.0 + e);
}

// max(0, min(1, alpha x + beta)), as ONNX's HardSigmoid; NaN stays NaN.
template <typename T>
struct HardSigmoidOp {
  T alpha;
  T beta;
  SF_VECTOR_OP T operator()(T x) const {
    const T v = alpha * x + beta;
    return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
  }
};

// x min(max(x + 3, 0), 6) / 6, as PyTorch computes ONNX's HardSwish
// (x max(0, min(1, x / 6 + 1 / 2))); NaN stays NaN.
struct HardSwishOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T x) const {
    const T v = x + T(3);
    return x * (v < T(0) ? T(0) : (v > T(6) ? T(6) : v)) / T(6);
  }
};

// x sigmoid(x) (SiLU, Swish with beta 1).
struct SiluOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T x) const {
    return x * Sigmoid(x);
  }
};

// Beyond this tanh(softplus(x)) is 1 in float64 (and float32).
constexpr double kMishLinearFrom = 20;

// x tanh(softplus(x)) = x n / (n + 2) with n = e^x (e^x + 2), which is
// exact algebra (tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1)),
// free of tanh's and softplus's cancellations; x itself beyond 20, where
// n would overflow.
struct MishOp {
  SF_VECTOR_OP float operator()(float x) const {
    const float e = vmath::Exp(x > float(kMishLinearFrom) ? 0.0f : x);
    const float n = e * (e + 2.0f);
    return x > float(kMishLinearFrom) ? x : x * n / (n + 2.0f);
  }
  SF_VECTOR_OP double operator()(double x) const {
    const double e = std::exp(x > kMishLinearFrom ? 0.0 : x);
    const double n = e * (e + 2.0);
    return x > kMishLinearFrom ? x : x * n / (n + 2.0);
  }
};

// The activations of this file; all vectorize for float32.
template <typename T>
using GatedActivation =
    std::variant<SoftplusOp, HardSigmoidOp<T>, HardSwishOp, SiluOp, MishOp>;

// MapInto on the widest vectors the CPU has, for each float dtype
// (operators/elementwise/vector_loops.h says why these are not templates).
SF_WIDEST_VECTORS void MapWidest(const float* in, float* out, int64_t n,
                                 const GatedActivation<float>& f) {
  elementwise::MapInto(in, out, n, f);
}

SF_WIDEST_VECTORS void MapWidest(const double* in, double* out, int64_t n,
                                 const GatedActivation<double>& f) {
  elementwise::MapInto(in, out, n, f);
}

template <typename T, typename F>
absl::Status Map(KernelContext& context, F f) {
  return elementwise::MapKernel<T, GatedActivation<T>>(
      context, f, [](auto... args) { MapWidest(args...); });
}

template <typename T, typename Op>
absl::Status ActivationKernel(KernelContext& context) {
  return Map<T>(context, Op());
}

template <typename T>
absl::Status HardSigmoid(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  const T beta = static_cast<T>(context.attrs().Get<float>("beta"));
  return Map<T>(context, HardSigmoidOp<T>{alpha, beta});
}

// The derivatives, from X, times the gradient g flowing into Out.

// d softplus / dx = sigmoid(x).
struct SoftplusGradOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    return g * Sigmoid(x);
  }
};

// alpha inside (0, 1), where the clamp passes alpha x + beta; 0 where it
// clamps (and at its corners, as PyTorch).
template <typename T>
struct HardSigmoidGradOp {
  T alpha;
  T beta;
  SF_VECTOR_OP T operator()(T x, T g) const {
    const T v = alpha * x + beta;
    return v > T(0) && v < T(1) ? g * alpha : T(0);
  }
};

// 0 below -3, 1 above 3, x / 3 + 1 / 2 between (at -3 too, as PyTorch).
struct HardSwishGradOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    const T inside = g * (x / T(3) + T(0.5));
    return x < T(-3) ? T(0) : (x > T(3) ? g : inside);
  }
};

// s (1 + x (1 - s)) with s = sigmoid(x).
struct SiluGradOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    const T s = Sigmoid(x);
    return g * (s * (T(1) + x * (T(1) - s)));
  }
};

// t + x (1 - t^2) sigmoid(x) with t = tanh(softplus(x)) = n / (n + 2) and
// n = e^x (e^x + 2) as in the forward; 1 - t^2 = 4 (n + 1) / (n + 2)^2
// without the cancellation. 1 beyond 20, as the forward is x there.
struct MishGradOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    const T e = Exp(x > T(kMishLinearFrom) ? T(0) : x);
    const T n = e * (e + T(2));
    const T n2 = n + T(2);
    const T t = n / n2;
    const T one_minus_t2 = T(4) * (n + T(1)) / n2 / n2;
    const T s = e / (T(1) + e);
    const T d = t + x * one_minus_t2 * s;
    return g * (x > T(kMishLinearFrom) ? T(1) : d);
  }
  static SF_ALWAYS_INLINE float Exp(float x) { return vmath::Exp(x); }
  static SF_ALWAYS_INLINE double Exp(double x) { return std::exp(x); }
};

template <typename T>
using GatedActivationGrad =
    std::variant<SoftplusGradOp, HardSigmoidGradOp<T>, HardSwishGradOp,
                 SiluGradOp, MishGradOp>;

SF_WIDEST_VECTORS void MapGradWidest(const float* x, const float* g, float* out,
                                     int64_t n,
                                     const GatedActivationGrad<float>& f) {
  elementwise::MapPairsInto(x, g, out, n, f);
}

SF_WIDEST_VECTORS void MapGradWidest(const double* x, const double* g,
                                     double* out, int64_t n,
                                     const GatedActivationGrad<double>& f) {
  elementwise::MapPairsInto(x, g, out, n, f);
}

template <typename T, typename F>
absl::Status MapGrad(KernelContext& context, F f) {
  return elementwise::MapGradKernel<T, GatedActivationGrad<T>>(
      context, "X", f, [](auto... args) { MapGradWidest(args...); });
}

template <typename T, typename Op>
absl::Status GradKernel(KernelContext& context) {
  return MapGrad<T>(context, Op());
}

template <typename T>
absl::Status HardSigmoidGrad(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  const T beta = static_cast<T>(context.attrs().Get<float>("beta"));
  return MapGrad<T>(context, HardSigmoidGradOp<T>{alpha, beta});
}

// Every gradient op here reads X and Out@GRAD and writes X@GRAD.
GradSpec GatedGradSpec(std::string grad_type) {
  return GradSpec(std::move(grad_type))
      .ReadInput("X")
      .ReadOutputGrad("Out")
      .WriteInputGrad("X");
}

#undef SF_ALWAYS_INLINE

}  // namespace

SF_REGISTER_OP(softplus)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(InferActivation)
    .Grad(GatedGradSpec("softplus_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ActivationKernel<float, SoftplusOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &ActivationKernel<double, SoftplusOp>);

// ONNX's defaults: alpha 0.2, beta 0.5.
SF_REGISTER_OP(hard_sigmoid)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Attr("alpha", AttrType::kFloat, AttrValue(0.2f))
    .Attr("beta", AttrType::kFloat, AttrValue(0.5f))
    .Infer(InferActivation)
    .Grad(GatedGradSpec("hard_sigmoid_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &HardSigmoid<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &HardSigmoid<double>);

SF_REGISTER_OP(hard_swish)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(InferActivation)
    .Grad(GatedGradSpec("hard_swish_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ActivationKernel<float, HardSwishOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &ActivationKernel<double, HardSwishOp>);

SF_REGISTER_OP(silu)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(InferActivation)
    .Grad(GatedGradSpec("silu_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ActivationKernel<float, SiluOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &ActivationKernel<double, SiluOp>);

SF_REGISTER_OP(mish)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(InferActivation)
    .Grad(GatedGradSpec("mish_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ActivationKernel<float, MishOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &ActivationKernel<double, MishOp>);

SF_REGISTER_OP(softplus_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &GradKernel<float, SoftplusGradOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &GradKernel<double, SoftplusGradOp>);

// Gets hard_sigmoid's "alpha" and "beta" (the gradient maker copies them).
SF_REGISTER_OP(hard_sigmoid_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("alpha", AttrType::kFloat, AttrValue(0.2f))
    .Attr("beta", AttrType::kFloat, AttrValue(0.5f))
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &HardSigmoidGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &HardSigmoidGrad<double>);

SF_REGISTER_OP(hard_swish_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &GradKernel<float, HardSwishGradOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &GradKernel<double, HardSwishGradOp>);

SF_REGISTER_OP(silu_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &GradKernel<float, SiluGradOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &GradKernel<double, SiluGradOp>);

SF_REGISTER_OP(mish_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &GradKernel<float, MishGradOp>)
    .Kernel(DeviceType::kCPU, kFloat64, &GradKernel<double, MishGradOp>);

}  // namespace scopeflow
