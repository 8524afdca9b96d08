// Elementwise activations of one input "X" with an output "Out" of its
// dtype and shape, for float32 and float64: relu, leaky_relu, elu, sigmoid,
// tanh, gelu. Float32 elu, sigmoid, tanh and gelu (and their gradients) run
// operators/elementwise/vector_math.h's kernels on the widest vectors;
// float64 calls libm.
//
// Gradients (float32, float64): "<op>_grad" reads Out@GRAD and Out (relu,
// sigmoid, tanh: the derivative is cheaper from the output, as in Paddle)
// or X (leaky_relu, elu, gelu: the output does not tell the branch, or
// does not give the derivative exactly), and writes the optional X@GRAD.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/string_view.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/activation/gelu_math.h"
#include "operators/activation/grad_util.h"
#include "operators/common.h"
#include "operators/elementwise/vector_loops.h"
#include "operators/elementwise/vector_math.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

using elementwise::MapInto;
using elementwise::MapPairsInto;

absl::Status InferActivation(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

// max(x, 0); NaN stays NaN.
struct ReluOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T v) const {
    return v < T(0) ? T(0) : v;
  }
};

// x for x >= 0, alpha * x below. Selects between v and 0 only, as relu
// does: selecting between v and alpha * v makes the compiler branch around
// the product, and then not vectorize. NaN stays NaN (from the first term).
template <typename T>
struct LeakyReluOp {
  T alpha;
  SF_VECTOR_OP T operator()(T v) const {
    return (v < T(0) ? T(0) : v) + alpha * (v < T(0) ? v : T(0));
  }
};

// x for x > 0, alpha * (exp(x) - 1) otherwise.
template <typename T>
struct EluOp {
  T alpha;
  SF_VECTOR_OP float operator()(float v) const {
    return v > 0.0f ? v : alpha * vmath::Expm1(v > 0.0f ? 0.0f : v);
  }
  SF_VECTOR_OP double operator()(double v) const {
    return v > 0.0 ? v : alpha * std::expm1(v);
  }
};

// 1 / (1 + exp(-x)): exp(-x) overflowing to inf gives 0, not NaN.
struct SigmoidOp {
  SF_VECTOR_OP float operator()(float v) const { return vmath::Sigmoid(v); }
  SF_VECTOR_OP double operator()(double v) const {
    return 1.0 / (1.0 + std::exp(-v));
  }
};

struct TanhOp {
  SF_VECTOR_OP float operator()(float v) const { return vmath::Tanh(v); }
  SF_VECTOR_OP double operator()(double v) const { return std::tanh(v); }
};

// gelu_math.h's two forms.
using GeluErfOp = GeluErf;
using GeluTanhOp = GeluTanh;

// The activations whose loops vectorize.
template <typename T>
using VectorActivation = std::variant<ReluOp, LeakyReluOp<T>, EluOp<T>,
                                      SigmoidOp, TanhOp, GeluErfOp, GeluTanhOp>;

// MapInto on the widest vectors the CPU has, for each float dtype
// (operators/elementwise/vector_loops.h says why these are not templates).
SF_WIDEST_VECTORS void MapWidest(const float* in, float* out, int64_t n,
                                 const VectorActivation<float>& f) {
  MapInto(in, out, n, f);
}

SF_WIDEST_VECTORS void MapWidest(const double* in, double* out, int64_t n,
                                 const VectorActivation<double>& f) {
  MapInto(in, out, n, f);
}

// Out[i] = f(X[i]); a VectorActivation on the widest vectors.
template <typename T, typename F>
absl::Status Map(KernelContext& context, F f) {
  return elementwise::MapKernel<T, VectorActivation<T>>(
      context, f, [](auto... args) { MapWidest(args...); });
}

template <typename T>
absl::Status Relu(KernelContext& context) {
  return Map<T>(context, ReluOp());
}

template <typename T>
absl::Status LeakyRelu(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  return Map<T>(context, LeakyReluOp<T>{alpha});
}

template <typename T>
absl::Status Elu(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  return Map<T>(context, EluOp<T>{alpha});
}

template <typename T>
absl::Status Sigmoid(KernelContext& context) {
  return Map<T>(context, SigmoidOp());
}

template <typename T>
absl::Status Tanh(KernelContext& context) {
  return Map<T>(context, TanhOp());
}

template <typename T>
absl::Status Gelu(KernelContext& context) {
  if (context.attrs().Get<bool>("approximate")) {
    return Map<T>(context, GeluTanhOp());
  }
  return Map<T>(context, GeluErfOp());
}

// From Out: g where relu passed X (Out > 0), 0 where it gave 0; at X = 0,
// where relu has no derivative, 0, as in Paddle.
struct ReluGradOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T out, T g) const {
    return out > T(0) ? g : T(0);
  }
};

// From X: g for x >= 0 (the forward's linear branch, so at 0 too), alpha g
// below. The factor is selected and then multiplied, which vectorizes.
template <typename T>
struct LeakyReluGradOp {
  T alpha;
  SF_VECTOR_OP T operator()(T x, T g) const {
    return g * (x < T(0) ? alpha : T(1));
  }
};

// From Out: g out (1 - out).
struct SigmoidGradOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T out, T g) const {
    return g * out * (T(1) - out);
  }
};

// From Out: g (1 - out^2).
struct TanhGradOp {
  template <typename T>
  SF_VECTOR_OP T operator()(T out, T g) const {
    return g * (T(1) - out * out);
  }
};

// From X: g for x > 0, g alpha exp(x) otherwise (the derivative of the
// forward's alpha (exp(x) - 1) branch, exact where Out + alpha would cancel).
// exp's argument is clamped to 0 so that the unused branch never overflows.
template <typename T>
struct EluGradOp {
  T alpha;
  SF_VECTOR_OP float operator()(float x, float g) const {
    const float below = g * alpha * vmath::Exp(x < 0.0f ? x : 0.0f);
    return x > 0.0f ? g : below;
  }
  SF_VECTOR_OP double operator()(double x, double g) const {
    const double below = g * alpha * std::exp(x < 0.0 ? x : 0.0);
    return x > 0.0 ? g : below;
  }
};

// From X: Phi(x) + x phi(x), Phi computed as in the forward and
// phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
struct GeluErfGradOp {
  static constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  SF_VECTOR_OP float operator()(float x, float g) const {
    const float pdf = float(kInvSqrt2Pi) * vmath::Exp(-0.5f * x * x);
    return g * (vmath::NormalCdf(x) + x * pdf);
  }
  SF_VECTOR_OP double operator()(double x, double g) const {
    const double cdf = 0.5 * std::erfc(-x * 0.70710678118654752440);
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    return g * (cdf + x * pdf);
  }
};

// From X: the forward is x s with s = sigmoid(2 z) and
// z = sqrt(2 / pi) (x + 0.044715 x^3), so the derivative is
// s + 2 x s (1 - s) dz/dx, dz/dx = sqrt(2 / pi) (1 + 3 * 0.044715 x^2).
// That is the tanh form's 0.5 (1 + tanh z) + 0.5 x (1 - tanh^2 z) dz/dx
// without its cancellations; exp(-2 z) overflowing to inf gives s = 0 and a
// derivative of 0, not NaN.
struct GeluTanhGradOp {
  template <typename T>
  static T Derivative(T x, T s) {
    constexpr T kSqrt2OverPi = T(0.79788456080286535588);
    const T dz = kSqrt2OverPi * (T(1) + T(3) * T(0.044715) * x * x);
    return s + T(2) * x * s * (T(1) - s) * dz;
  }
  SF_VECTOR_OP float operator()(float x, float g) const {
    return g * Derivative(x, vmath::Sigmoid(GeluTanhOp::TwiceZ(x)));
  }
  SF_VECTOR_OP double operator()(double x, double g) const {
    const double s = 1.0 / (1.0 + std::exp(-GeluTanhOp::TwiceZ(x)));
    return g * Derivative(x, s);
  }
};

// The gradients whose loops vectorize.
template <typename T>
using VectorActivationGrad =
    std::variant<ReluGradOp, LeakyReluGradOp<T>, EluGradOp<T>, SigmoidGradOp,
                 TanhGradOp, GeluErfGradOp, GeluTanhGradOp>;

// MapPairsInto on the widest vectors the CPU has, for each float dtype.
SF_WIDEST_VECTORS void MapGradWidest(const float* v, const float* g, float* out,
                                     int64_t n,
                                     const VectorActivationGrad<float>& f) {
  MapPairsInto(v, g, out, n, f);
}

SF_WIDEST_VECTORS void MapGradWidest(const double* v, const double* g,
                                     double* out, int64_t n,
                                     const VectorActivationGrad<double>& f) {
  MapPairsInto(v, g, out, n, f);
}

// X@GRAD[i] = f(V[i], Out@GRAD[i]) with V the input `reads` ("X" or
// "Out"); a VectorActivationGrad on the widest vectors.
template <typename T, typename F>
absl::Status MapGrad(KernelContext& context, absl::string_view reads, F f) {
  return elementwise::MapGradKernel<T, VectorActivationGrad<T>>(
      context, reads, f, [](auto... args) { MapGradWidest(args...); });
}

template <typename T>
absl::Status ReluGrad(KernelContext& context) {
  return MapGrad<T>(context, "Out", ReluGradOp());
}

template <typename T>
absl::Status LeakyReluGrad(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  return MapGrad<T>(context, "X", LeakyReluGradOp<T>{alpha});
}

template <typename T>
absl::Status EluGrad(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  return MapGrad<T>(context, "X", EluGradOp<T>{alpha});
}

template <typename T>
absl::Status SigmoidGrad(KernelContext& context) {
  return MapGrad<T>(context, "Out", SigmoidGradOp());
}

template <typename T>
absl::Status TanhGrad(KernelContext& context) {
  return MapGrad<T>(context, "Out", TanhGradOp());
}

// From X, the derivative of the formula the forward's "approximate" picks.
template <typename T>
absl::Status GeluGrad(KernelContext& context) {
  if (context.attrs().Get<bool>("approximate")) {
    return MapGrad<T>(context, "X", GeluTanhGradOp());
  }
  return MapGrad<T>(context, "X", GeluErfGradOp());
}

// The gradient op of an activation: reads `reads` ("X" or "Out") and
// Out@GRAD, writes X@GRAD.
GradSpec ActivationGradSpec(std::string grad_type, absl::string_view reads) {
  GradSpec spec(std::move(grad_type));
  if (reads == "X") {
    spec.ReadInput("X");
  } else {
    spec.ReadOutput("Out");
  }
  return spec.ReadOutputGrad("Out").WriteInputGrad("X");
}

}  // namespace

SF_REGISTER_OP(relu)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(InferActivation)
    .Grad(ActivationGradSpec("relu_grad", "Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &Relu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Relu<double>);

SF_REGISTER_OP(leaky_relu)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Attr("alpha", AttrType::kFloat, AttrValue(0.02f))
    .Infer(InferActivation)
    .Grad(ActivationGradSpec("leaky_relu_grad", "X"))
    .Kernel(DeviceType::kCPU, kFloat32, &LeakyRelu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &LeakyRelu<double>);

SF_REGISTER_OP(elu)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Attr("alpha", AttrType::kFloat, AttrValue(1.0f))
    .Infer(InferActivation)
    .Grad(ActivationGradSpec("elu_grad", "X"))
    .Kernel(DeviceType::kCPU, kFloat32, &Elu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Elu<double>);

SF_REGISTER_OP(sigmoid)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(InferActivation)
    .Grad(ActivationGradSpec("sigmoid_grad", "Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &Sigmoid<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Sigmoid<double>);

SF_REGISTER_OP(tanh)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(InferActivation)
    .Grad(ActivationGradSpec("tanh_grad", "Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &Tanh<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Tanh<double>);

SF_REGISTER_OP(gelu)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Attr("approximate", AttrType::kBool, AttrValue(false))
    .Infer(InferActivation)
    .Grad(ActivationGradSpec("gelu_grad", "X"))
    .Kernel(DeviceType::kCPU, kFloat32, &Gelu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Gelu<double>);

SF_REGISTER_OP(relu_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(activation::GradLike("Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &ReluGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReluGrad<double>);

// Gets leaky_relu's "alpha" (the gradient maker copies the attributes).
SF_REGISTER_OP(leaky_relu_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("alpha", AttrType::kFloat, AttrValue(0.02f))
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &LeakyReluGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &LeakyReluGrad<double>);

SF_REGISTER_OP(elu_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("alpha", AttrType::kFloat, AttrValue(1.0f))
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &EluGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &EluGrad<double>);

SF_REGISTER_OP(sigmoid_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(activation::GradLike("Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &SigmoidGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &SigmoidGrad<double>);

SF_REGISTER_OP(tanh_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(activation::GradLike("Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &TanhGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &TanhGrad<double>);

SF_REGISTER_OP(gelu_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("approximate", AttrType::kBool, AttrValue(false))
    .Infer(activation::GradLike("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &GeluGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GeluGrad<double>);

}  // namespace scopeflow
