#include "operators/nn/conv_epilogue.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace scopeflow {
namespace {

const std::vector<std::pair<std::string, ConvActivation>>& Named() {
  static const auto* named =
      new std::vector<std::pair<std::string, ConvActivation>>{
          {"", ConvActivation::kNone},
          {"relu", ConvActivation::kRelu},
          {"leaky_relu", ConvActivation::kLeakyRelu},
          {"elu", ConvActivation::kElu},
          {"clip", ConvActivation::kClip},
          {"sigmoid", ConvActivation::kSigmoid},
          {"tanh", ConvActivation::kTanh},
          {"gelu", ConvActivation::kGelu},
          {"gelu_tanh", ConvActivation::kGeluTanh},
          {"hard_sigmoid", ConvActivation::kHardSigmoid},
          {"hard_swish", ConvActivation::kHardSwish},
          {"silu", ConvActivation::kSilu},
          {"mish", ConvActivation::kMish},
      };
  return *named;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

const std::vector<std::string>& ConvActivationNames() {
  static const auto* names = [] {
    auto* list = new std::vector<std::string>;
    for (const auto& [name, activation] : Named()) list->push_back(name);
    return list;
  }();
  return *names;
}

std::optional<ConvActivation> ConvActivationNamed(absl::string_view name) {
  for (const auto& [known, activation] : Named()) {
    if (known == name) return activation;
  }
  return std::nullopt;
}

std::string ConvEpilogue::Key() const {
  return absl::StrCat(residual, ",", static_cast<int>(activation), ",", alpha,
                      ",", beta);
}

dnnl::post_ops PostOpsOf(const ConvEpilogue& epilogue) {
  using dnnl::algorithm;
  dnnl::post_ops ops;
  if (epilogue.residual) ops.append_sum(1.0f);
  const float alpha = epilogue.alpha;
  const float beta = epilogue.beta;
  auto eltwise = [&ops](algorithm kind, float a, float b) {
    ops.append_eltwise(1.0f, kind, a, b);
  };
  switch (epilogue.activation) {
    case ConvActivation::kNone:
      break;
    case ConvActivation::kRelu:
      eltwise(algorithm::eltwise_relu, 0.0f, 0.0f);
      break;
    case ConvActivation::kLeakyRelu:
      eltwise(algorithm::eltwise_relu, alpha, 0.0f);
      break;
    case ConvActivation::kElu:
      eltwise(algorithm::eltwise_elu, alpha, 0.0f);
      break;
    case ConvActivation::kClip:
      eltwise(algorithm::eltwise_clip, alpha, beta);
      break;
    case ConvActivation::kSigmoid:
      eltwise(algorithm::eltwise_logistic, 0.0f, 0.0f);
      break;
    case ConvActivation::kTanh:
      eltwise(algorithm::eltwise_tanh, 0.0f, 0.0f);
      break;
    case ConvActivation::kGelu:
      eltwise(algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
      break;
    case ConvActivation::kGeluTanh:
      eltwise(algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
      break;
    case ConvActivation::kHardSigmoid:
      // oneDNN 2.6 has no hardsigmoid: alpha * x + beta, then clipped.
      eltwise(algorithm::eltwise_linear, alpha, beta);
      eltwise(algorithm::eltwise_clip, 0.0f, 1.0f);
      break;
    case ConvActivation::kHardSwish:
      eltwise(algorithm::eltwise_hardswish, 0.0f, 0.0f);
      break;
    case ConvActivation::kSilu:
      eltwise(algorithm::eltwise_swish, 1.0f, 0.0f);
      break;
    case ConvActivation::kMish:
      eltwise(algorithm::eltwise_mish, 0.0f, 0.0f);
      break;
  }
  return ops;
}

double ApplyConvActivation(const ConvEpilogue& epilogue, double x) {
  const double alpha = epilogue.alpha;
  const double beta = epilogue.beta;
  switch (epilogue.activation) {
    case ConvActivation::kNone:
      return x;
    case ConvActivation::kRelu:
      return x > 0 ? x : 0.0;
    case ConvActivation::kLeakyRelu:
      return x > 0 ? x : alpha * x;
    case ConvActivation::kElu:
      return x > 0 ? x : alpha * std::expm1(x);
    case ConvActivation::kClip:
      return std::min(std::max(x, alpha), beta);
    case ConvActivation::kSigmoid:
      return Sigmoid(x);
    case ConvActivation::kTanh:
      return std::tanh(x);
    case ConvActivation::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ConvActivation::kGeluTanh: {
      const double k = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case ConvActivation::kHardSigmoid:
      return std::min(std::max(alpha * x + beta, 0.0), 1.0);
    case ConvActivation::kHardSwish:
      return x * std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0);
    case ConvActivation::kSilu:
      return x * Sigmoid(x);
    case ConvActivation::kMish:
      return x *
             std::tanh(std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))));
  }
  return x;
}

}  // namespace scopeflow
