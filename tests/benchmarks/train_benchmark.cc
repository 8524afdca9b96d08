// Training throughput: the MLP 784-1024-1024-10 of net_benchmark, forward,
// backward and optimizer update per step.
//   OMP_NUM_THREADS=1 bazel run //tests/benchmarks:train_benchmark
//   OMP_NUM_THREADS=2 bazel run //tests/benchmarks:train_benchmark
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/training/optimizer.h"
#include "platform/host_memory.h"
#include "tests/benchmarks/net_text.h"

namespace scopeflow {
namespace {

void BM_TrainMlp(benchmark::State& state, const std::string& optimizer) {
  const int64_t batch = state.range(0);
  NetText main;
  NetText startup;
  main.Var("x", {-1, 784});
  main.Var("label", {-1, 1}, false, "DATA_TYPE_INT64");
  const int64_t sizes[] = {784, 1024, 1024, 10};
  std::string in = "x";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string w = absl::StrCat("w", layer);
    const std::string b = absl::StrCat("b", layer);
    for (NetText* net : {&main, &startup}) {
      net->Var(w, {sizes[layer], sizes[layer + 1]}, true);
      net->Var(b, {sizes[layer + 1]}, true);
    }
    startup.Op("gaussian_random", {}, w,
               absl::StrCat("attrs { name: 'shape' i64s { values: [",
                            sizes[layer], ", ", sizes[layer + 1],
                            "] } } attrs { name: 'std' f: 0.03 } attrs { "
                            "name: 'seed' i: ",
                            layer + 1, " }"));
    startup.Op("fill_constant", {}, b,
               absl::StrCat("attrs { name: 'shape' i64s { values: [",
                            sizes[layer + 1], "] } }"));
    const std::string h = absl::StrCat("h", layer);
    main.Op("fc", {{"X", in}, {"W", w}, {"Bias", b}}, h);
    in = h;
    if (layer < 2) {
      main.Op("relu", {{"X", h}}, h + ".relu");
      in = h + ".relu";
    }
  }
  main.Op("softmax_with_cross_entropy", {{"Logits", in}, {"Label", "label"}},
          "losses", "outputs { slot: 'Softmax' vars: 'probabilities' }",
          "Loss");
  main.Op("mean", {{"X", "losses"}}, "loss");

  NetDef train = main.Build();
  NetDef init = startup.Build();
  OptimizerConfig config;
  config.type = optimizer;
  config.learning_rate = 1e-4f;
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendTrainingOps(train, init, "loss", config);
  Executor executor;
  absl::StatusOr<PreparedNet> prepared_train =
      executor.Prepare(train, 0, CPUPlace());
  absl::StatusOr<PreparedNet> prepared_init =
      executor.Prepare(init, 0, CPUPlace());
  for (const absl::Status& status :
       {grads.status(), prepared_train.status(), prepared_init.status()}) {
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
  }
  Scope root;
  if (!executor.Run(*prepared_init, root, {}, {}).ok()) std::abort();
  Tensor x;
  Tensor label;
  if (!x.Allocate(CPUPlace(), kFloat32, {batch, 784}).ok() ||
      !label.Allocate(CPUPlace(), kInt64, {batch, 1}).ok()) {
    std::abort();
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.data<float>()[i] = static_cast<float>(i % 17) / 17.0f;
  }
  for (int64_t i = 0; i < batch; ++i) label.data<int64_t>()[i] = i % 10;
  const std::vector<Feed> feeds = {{"x", x}, {"label", label}};
  const std::vector<std::string> fetches = {"loss"};
  for (int i = 0; i < 2; ++i) {  // Warm-up.
    if (!executor.Run(*prepared_train, root, feeds, fetches).ok()) std::abort();
  }
  for (auto _ : state) {
    auto out = executor.Run(*prepared_train, root, feeds, fetches);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out);
  }
  // Forward 2 flops per multiply-add, backward twice that.
  const double flops = 3 * 2.0 * batch * (784 * 1024 + 1024 * 1024 + 1024 * 10);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(batch),
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_TrainMlp, sgd, std::string("sgd"))
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TrainMlp, adam, std::string("adam"))
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  scopeflow::KeepFreedHostMemoryForReuse();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
