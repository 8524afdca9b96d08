// Predictor::Run on the MLP of examples/mlp, batch 1, as `scopeflow serve`
// runs it for one request but without HTTP or JSON: the in-process side of
// the serving figures in docs/PERFORMANCE.md.
//   OMP_NUM_THREADS=1 bazel run //framework/serving:predictor_benchmark
// Threads(2) runs two threads on one Predictor at once; items_per_second is
// the rate of both together.
#include <cstdlib>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "framework/serving/mlp_fixture.h"
#include "framework/serving/predictor.h"
#include "platform/host_memory.h"

namespace scopeflow {
namespace {

const Predictor& SharedMlp() {
  static const Predictor* const predictor = [] {
    absl::StatusOr<Predictor> loaded = LoadMlp();
    if (!loaded.ok()) std::abort();
    // Lives for the whole process, like a server's model.
    static Predictor kept = *std::move(loaded);
    return &kept;
  }();
  return *predictor;
}

void BM_PredictorRun(benchmark::State& state) {
  const Predictor& predictor = SharedMlp();
  const std::vector<Feed> feeds = {
      {"image",
       MlpInput(static_cast<int>(state.range(0)), state.thread_index())}};
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out = predictor.Run(feeds);
    if (!out.ok()) {
      state.SkipWithError("Run failed");
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PredictorRun)->Arg(1)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_PredictorRun)->Arg(64)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  scopeflow::KeepFreedHostMemoryForReuse();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
