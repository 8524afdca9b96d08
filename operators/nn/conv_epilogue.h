// What conv2d does to each element of its convolution, the bias added,
// before writing it: adds the element of "Residual" at the same position,
// then applies an activation. Output = activation(conv(Input) + Bias +
// Residual), in one pass where three ops would make three: oneDNN applies
// both as post-ops (a sum, then eltwise ones) to each block of the output
// while it is still in cache. The op-fusion pass (framework/passes/
// conv_fusion.h) writes them for the Add and activation ops of imported
// nets; the reference kernels apply the same functions after the fact.
#ifndef SCOPEFLOW_OPERATORS_NN_CONV_EPILOGUE_H_
#define SCOPEFLOW_OPERATORS_NN_CONV_EPILOGUE_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "dnnl.hpp"

namespace scopeflow {

// The activations oneDNN applies as eltwise post-ops exactly as the ops of
// the same names compute them (conv2d's "activation" values).
enum class ConvActivation {
  kNone,
  kRelu,
  // max(x, 0) + alpha * min(x, 0).
  kLeakyRelu,
  // x, or alpha * (e^x - 1) below 0.
  kElu,
  // min(max(x, alpha), beta).
  kClip,
  kSigmoid,
  kTanh,
  // x * Phi(x), by erf; kGeluTanh: by tanh's approximation.
  kGelu,
  kGeluTanh,
  // clip(alpha * x + beta, 0, 1).
  kHardSigmoid,
  // x * clip(x / 6 + 1/2, 0, 1).
  kHardSwish,
  // x * sigmoid(x).
  kSilu,
  // x * tanh(softplus(x)).
  kMish,
};

// conv2d's "activation" names: "" (none) and the op types of the
// activations above, with "gelu_tanh" for gelu with approximate.
const std::vector<std::string>& ConvActivationNames();
std::optional<ConvActivation> ConvActivationNamed(absl::string_view name);

struct ConvEpilogue {
  // Output starts as a copy of Residual, which oneDNN's sum post-op adds
  // the convolution to.
  bool residual = false;
  ConvActivation activation = ConvActivation::kNone;
  // conv2d's activation_alpha and activation_beta, as each activation
  // above says.
  float alpha = 0.0f;
  float beta = 0.0f;

  bool empty() const {
    return !residual && activation == ConvActivation::kNone;
  }
  // Distinguishes epilogues in the keys of cached primitives.
  std::string Key() const;
};

// The post-ops oneDNN applies for `epilogue`: a sum (of what the
// destination holds before the convolution) where it has a residual, then
// the activation's eltwise post-ops.
dnnl::post_ops PostOpsOf(const ConvEpilogue& epilogue);

// The activation of `epilogue` at `x`, in double: the reference kernels'.
double ApplyConvActivation(const ConvEpilogue& epilogue, double x);

// Applies `epilogue` to the n values of `data`, the convolution with its
// bias: adds `residual` (n values, null without one), then the activation.
template <typename T>
void ApplyConvEpilogue(const ConvEpilogue& epilogue, const T* residual, T* data,
                       int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double x = data[i];
    if (residual != nullptr) x += residual[i];
    data[i] = static_cast<T>(ApplyConvActivation(epilogue, x));
  }
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_CONV_EPILOGUE_H_
