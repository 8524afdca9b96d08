// Elementwise activations of one input "X" with an output "Out" of its
// dtype and shape, for float32 and float64: relu, leaky_relu, elu, sigmoid,
// tanh, gelu.
#include <cmath>
#include <cstdint>

#include "framework/op_spec.h"
#include "operators/activation/softmax_math.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferActivation(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

// Out[i] = f(X[i]). Blocks of kBlock elements are copied to a local array
// first: the compiler then knows that the stores cannot change the loads,
// and vectorizes f when it is arithmetic (relu, leaky_relu) without a
// run-time overlap check of X and Out, under any cost model.
template <typename T, typename F>
absl::Status Map(KernelContext& context, F f) {
  constexpr int kBlock = softmax_math::kBlock;
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  T* out = context.Output("Out")->data<T>();
  const int64_t n = x.numel();
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T block[kBlock];
    for (int j = 0; j < kBlock; ++j) block[j] = in[i + j];
    for (int j = 0; j < kBlock; ++j) out[i + j] = f(block[j]);
  }
  for (; i < n; ++i) out[i] = f(in[i]);
  return absl::OkStatus();
}

// max(x, 0); NaN stays NaN.
template <typename T>
absl::Status Relu(KernelContext& context) {
  return Map<T>(context, [](T v) { return v < T(0) ? T(0) : v; });
}

// x for x >= 0, alpha * x below.
template <typename T>
absl::Status LeakyRelu(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  // Selects between v and 0 only, as relu does: selecting between v and
  // alpha * v makes the compiler branch around the product, and then not
  // vectorize. NaN stays NaN (from the first term).
  return Map<T>(context, [alpha](T v) {
    return (v < T(0) ? T(0) : v) + alpha * (v < T(0) ? v : T(0));
  });
}

// x for x > 0, alpha * (exp(x) - 1) otherwise.
template <typename T>
absl::Status Elu(KernelContext& context) {
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  return Map<T>(context,
                [alpha](T v) { return v > T(0) ? v : alpha * std::expm1(v); });
}

// 1 / (1 + exp(-x)): exp(-x) overflowing to inf gives 0, not NaN.
template <typename T>
absl::Status Sigmoid(KernelContext& context) {
  return Map<T>(context, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
}

template <typename T>
absl::Status Tanh(KernelContext& context) {
  return Map<T>(context, [](T v) { return std::tanh(v); });
}

// Exact: x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))), computed as
// 0.5 x erfc(-x / sqrt(2)), which keeps its precision for negative x where
// 1 + erf(...) would cancel.
// Approximate: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), computed
// as x / (1 + exp(-2 z)) with z the tanh's argument (the same function,
// without the cancellation).
template <typename T>
absl::Status Gelu(KernelContext& context) {
  if (context.attrs().Get<bool>("approximate")) {
    constexpr T kSqrt2OverPi = T(0.79788456080286535588);
    return Map<T>(context, [](T v) {
      const T z = kSqrt2OverPi * (v + T(0.044715) * v * v * v);
      return v / (T(1) + std::exp(T(-2) * z));
    });
  }
  constexpr T kSqrtHalf = T(0.70710678118654752440);
  return Map<T>(context,
                [](T v) { return T(0.5) * v * std::erfc(-v * kSqrtHalf); });
}

}  // namespace

SF_REGISTER_OP(relu)
    .Input("X")
    .Output("Out")
    .Infer(InferActivation)
    .Kernel(DeviceType::kCPU, kFloat32, &Relu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Relu<double>);

SF_REGISTER_OP(leaky_relu)
    .Input("X")
    .Output("Out")
    .Attr("alpha", AttrType::kFloat, AttrValue(0.02f))
    .Infer(InferActivation)
    .Kernel(DeviceType::kCPU, kFloat32, &LeakyRelu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &LeakyRelu<double>);

SF_REGISTER_OP(elu)
    .Input("X")
    .Output("Out")
    .Attr("alpha", AttrType::kFloat, AttrValue(1.0f))
    .Infer(InferActivation)
    .Kernel(DeviceType::kCPU, kFloat32, &Elu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Elu<double>);

SF_REGISTER_OP(sigmoid)
    .Input("X")
    .Output("Out")
    .Infer(InferActivation)
    .Kernel(DeviceType::kCPU, kFloat32, &Sigmoid<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Sigmoid<double>);

SF_REGISTER_OP(tanh)
    .Input("X")
    .Output("Out")
    .Infer(InferActivation)
    .Kernel(DeviceType::kCPU, kFloat32, &Tanh<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Tanh<double>);

SF_REGISTER_OP(gelu)
    .Input("X")
    .Output("Out")
    .Attr("approximate", AttrType::kBool, AttrValue(false))
    .Infer(InferActivation)
    .Kernel(DeviceType::kCPU, kFloat32, &Gelu<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Gelu<double>);

}  // namespace scopeflow
