// Training throughput: the MLP and the CNN of net_benchmark, forward,
// backward and optimizer update per step.
//   OMP_NUM_THREADS=1 bazel run //tests/benchmarks:train_benchmark
//   OMP_NUM_THREADS=2 bazel run //tests/benchmarks:train_benchmark
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/training/optimizer.h"
#include "platform/host_memory.h"
#include "tests/benchmarks/net_text.h"

namespace scopeflow {
namespace {

// A parameter `name` of `shape` in both nets, filled by the startup net from
// a normal distribution of deviation `std` (0: zeros).
void AddParameter(NetText& main, NetText& startup, const std::string& name,
                  const std::vector<int64_t>& shape, float std, int seed) {
  for (NetText* net : {&main, &startup}) net->Var(name, shape, true);
  const std::string dims =
      absl::StrCat("attrs { name: 'shape' i64s { values: [",
                   absl::StrJoin(shape, ", "), "] } }");
  if (std == 0) {
    startup.Op("fill_constant", {}, name, dims);
  } else {
    startup.Op("gaussian_random", {}, name,
               absl::StrCat(dims, " attrs { name: 'std' f: ", std,
                            " } attrs { name: 'seed' i: ", seed, " }"));
  }
}

// Times training steps of `main` (which ends in the scalar "loss" and reads
// the float "x" and int64 "label" of `batch` samples) after `startup` has
// filled the parameters. `flops`: a forward pass's multiplications and
// additions; a step counts three times that (backward computes two
// products per forward one). `layout`: the layout the executor's rewrite
// keeps activations in.
void TimeTrainingSteps(benchmark::State& state, NetText& main,
                       const NetText& startup, const Dims& x_dims, double flops,
                       const std::string& optimizer,
                       ActivationLayout layout = ActivationLayout::kAuto) {
  const int64_t batch = x_dims[0];
  main.Op("softmax_with_cross_entropy",
          {{"Logits", "logits"}, {"Label", "label"}}, "losses",
          "outputs { slot: 'Softmax' vars: 'probabilities' }", "Loss");
  main.Op("mean", {{"X", "losses"}}, "loss");
  NetDef train = main.Build();
  NetDef init = startup.Build();
  OptimizerConfig config;
  config.type = optimizer;
  config.learning_rate = 1e-4f;
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendTrainingOps(train, init, "loss", config);
  ExecutorOptions options;
  options.prepare.activation_layout = layout;
  Executor executor(options);
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
  if (!x.Allocate(CPUPlace(), kFloat32, x_dims).ok() ||
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
  state.counters["GFLOP/s"] = benchmark::Counter(
      3 * flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(batch),
                         benchmark::Counter::kIsIterationInvariantRate);
}

// The MLP 784-1024-1024-10 with relu.
void BM_TrainMlp(benchmark::State& state, const std::string& optimizer) {
  const int64_t batch = state.range(0);
  NetText main;
  NetText startup;
  main.Var("x", {-1, 784});
  main.Var("label", {-1, 1}, false, "DATA_TYPE_INT64");
  const int64_t sizes[] = {784, 1024, 1024, 10};
  std::string in = "x";
  double flops = 0;
  for (int layer = 0; layer < 3; ++layer) {
    const std::string w = absl::StrCat("w", layer);
    const std::string b = absl::StrCat("b", layer);
    AddParameter(main, startup, w, {sizes[layer], sizes[layer + 1]}, 0.03f,
                 layer + 1);
    AddParameter(main, startup, b, {sizes[layer + 1]}, 0, 0);
    const std::string h = layer < 2 ? absl::StrCat("h", layer) : "logits";
    main.Op("fc", {{"X", in}, {"W", w}, {"Bias", b}}, h);
    in = h;
    if (layer < 2) {
      main.Op("relu", {{"X", h}}, h + ".relu");
      in = h + ".relu";
    }
    flops += 2.0 * batch * sizes[layer] * sizes[layer + 1];
  }
  TimeTrainingSteps(state, main, startup, {batch, 784}, flops, optimizer);
}
BENCHMARK_CAPTURE(BM_TrainMlp, sgd, std::string("sgd"))
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TrainMlp, adam, std::string("adam"))
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The CNN of net_benchmark (AddBenchmarkCnn). The executor's layout
// rewrite runs its activations and their gradients in a layout, as at
// inference: the one this CPU prefers (layout 0), NHWC (1), NCHW8c (2) or
// NCHW16c (3).
void BM_TrainCnn(benchmark::State& state) {
  const int64_t batch = state.range(0);
  NetText main;
  NetText startup;
  main.Var("x", {-1, 3, 64, 64});
  main.Var("label", {-1, 1}, false, "DATA_TYPE_INT64");
  int seed = 0;
  const double flops =
      batch * AddBenchmarkCnn(main, [&](const std::string& name,
                                        const std::vector<int64_t>& shape) {
        // Filters and fc's weights random, biases zero.
        const bool bias = shape.size() == 1;
        AddParameter(main, startup, name, shape, bias ? 0 : 0.1f,
                     bias ? 0 : ++seed);
      });
  const ActivationLayout layouts[] = {
      ActivationLayout::kAuto, ActivationLayout::kNhwc,
      ActivationLayout::kNchw8c, ActivationLayout::kNchw16c};
  TimeTrainingSteps(state, main, startup, {batch, 3, 64, 64}, flops, "sgd",
                    layouts[state.range(1)]);
}
BENCHMARK(BM_TrainCnn)
    ->ArgNames({"batch", "layout"})
    ->ArgsProduct({{16}, {0, 1, 3}})
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
