#include "framework/serving/mlp_fixture.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

const float* Parameter(const Scope& parameters, const std::string& name) {
  return (*parameters.FindVar(name)->Get<Tensor>())->data<float>();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scope>> MlpParameters() {
  SF_ASSIGN_OR_RETURN(NetDef startup, LoadNet(kMlpStartup));
  const Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      executor.Prepare(startup, 0, CPUPlace()));
  auto root = std::make_unique<Scope>();
  SF_RETURN_IF_ERROR(executor.Run(prepared, *root, {}, {}).status());
  return root;
}

absl::StatusOr<Predictor> LoadMlp() {
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(kMlpNet));
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Scope> parameters, MlpParameters());
  return Predictor::Create(net, std::move(parameters));
}

Tensor MlpInput(int batch, int seed) {
  Tensor image;
  if (!image.Allocate(CPUPlace(), kFloat32, {batch, 64}).ok()) std::abort();
  uint32_t state = 2654435761u * static_cast<uint32_t>(seed + 1);
  for (int64_t i = 0; i < image.numel(); ++i) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG.
    image.data<float>()[i] = static_cast<float>(state >> 8) / (1 << 24);
  }
  return image;
}

std::vector<double> ReferenceMlp(const Scope& parameters, const Tensor& image) {
  const float* w1 = Parameter(parameters, "fc1.w");
  const float* b1 = Parameter(parameters, "fc1.b");
  const float* w2 = Parameter(parameters, "fc2.w");
  const float* b2 = Parameter(parameters, "fc2.b");
  const int64_t batch = image.dim(0);
  std::vector<double> out(batch * 10);
  for (int64_t r = 0; r < batch; ++r) {
    const float* x = image.data<float>() + r * 64;
    double hidden[32];
    for (int j = 0; j < 32; ++j) {
      double sum = b1[j];
      for (int i = 0; i < 64; ++i) sum += double{x[i]} * w1[i * 32 + j];
      hidden[j] = std::max(sum, 0.0);
    }
    double logits[10];
    double largest = -INFINITY;
    for (int j = 0; j < 10; ++j) {
      double sum = b2[j];
      for (int i = 0; i < 32; ++i) sum += hidden[i] * w2[i * 10 + j];
      logits[j] = sum;
      largest = std::max(largest, sum);
    }
    double total = 0;
    for (int j = 0; j < 10; ++j) total += std::exp(logits[j] - largest);
    for (int j = 0; j < 10; ++j) {
      out[r * 10 + j] = std::exp(logits[j] - largest) / total;
    }
  }
  return out;
}

}  // namespace scopeflow
