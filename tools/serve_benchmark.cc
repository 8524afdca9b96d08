// The work of one predict request of `scopeflow serve` on the MLP of
// examples/mlp (one 8x8 image), without the HTTP around it, piece by piece:
// JSON decode, Predictor::Run, JSON encode, and all three (serve_predict).
// What the load test's figures leave for HTTP is the rest (docs/
// PERFORMANCE.md, "Serving").
//   OMP_NUM_THREADS=1 bazel run //tools:serve_benchmark
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "framework/serving/mlp_fixture.h"
#include "platform/host_memory.h"
#include "tools/serve_json.h"
#include "tools/serve_predict.h"

namespace scopeflow {
namespace {

const ServedModel& Model() {
  static const ServedModel* const model = [] {
    absl::StatusOr<Predictor> predictor = LoadMlp();
    if (!predictor.ok()) std::abort();
    static ServedModel kept{"mlp", 1, *std::move(predictor)};
    return &kept;
  }();
  return *model;
}

std::string RequestBody() {
  std::string body =
      PredictResponseJson({TensorInfo{"image"}}, {MlpInput(1, 0)});
  return body.replace(body.find("outputs"), 7, "inputs");
}

void BM_DecodeJson(benchmark::State& state) {
  const std::string body = RequestBody();
  for (auto _ : state) {
    auto feeds = ParsePredictJson(body, Model().predictor.inputs());
    if (!feeds.ok()) std::abort();
    benchmark::DoNotOptimize(feeds);
  }
}
BENCHMARK(BM_DecodeJson);

void BM_Run(benchmark::State& state) {
  const std::vector<Feed> feeds = {{"image", MlpInput(1, 0)}};
  for (auto _ : state) {
    auto out = Model().predictor.Run(feeds);
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_Run);

void BM_EncodeJson(benchmark::State& state) {
  const std::vector<Tensor> out =
      *Model().predictor.Run({Feed{"image", MlpInput(1, 0)}});
  for (auto _ : state) {
    std::string body = PredictResponseJson(Model().predictor.outputs(), out);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_EncodeJson);

void BM_PredictJson(benchmark::State& state) {
  const std::string body = RequestBody();
  for (auto _ : state) {
    HttpReply reply = Predict(Model(), kJsonContentType, body);
    if (reply.status != 200) std::abort();
    benchmark::DoNotOptimize(reply);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PredictJson)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  scopeflow::KeepFreedHostMemoryForReuse();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
