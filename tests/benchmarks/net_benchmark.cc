// Whole-net benchmarks: dispatch overhead, an MLP, a CNN, and the
// machine's own matrix-product limit through the same library.
//   OMP_NUM_THREADS=1 bazel run //tests/benchmarks:net_benchmark
//   OMP_NUM_THREADS=2 bazel run //tests/benchmarks:net_benchmark
//   bazel run //tests/benchmarks:net_benchmark -- --place=cuda:0
// On a device the parameters live there and each run copies its input from
// the host and waits for its kernels (Executor::Run), as a serving request
// does. The net shapes are those of the figures in docs/PERFORMANCE.md.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/substitute.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "operators/gemm.h"
#include "platform/host_memory.h"
#include "tests/benchmarks/net_text.h"

namespace scopeflow {
namespace {

// Where the nets run: --place, cpu by default.
Place& BenchmarkPlace() {
  static Place place;
  return place;
}

Tensor Filled(Dims dims, float value) {
  Tensor t;
  if (!t.Allocate(CPUPlace(), kFloat32, dims).ok()) std::abort();
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value;
  return t;
}

// Runs `net` with the parameters given, as the timed loop.
void RunNet(benchmark::State& state, const NetDef& net,
            const std::vector<std::pair<std::string, Tensor>>& parameters,
            const std::vector<Feed>& feeds, const std::string& fetch,
            ExecutorOptions options = {}) {
  Executor executor(options);
  const Place& place = BenchmarkPlace();
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, place);
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  Scope root;
  for (const auto& [name, tensor] : parameters) {
    absl::StatusOr<Tensor> placed = tensor.CopyTo(place);
    if (!placed.ok()) std::abort();
    **root.Var(name)->GetMutable<Tensor>() = *placed;
  }
  const std::vector<std::string> fetches = {fetch};
  for (int i = 0; i < 3; ++i) {  // Warm-up.
    if (!executor.Run(*prepared, root, feeds, fetches).ok()) std::abort();
  }
  for (auto _ : state) {
    auto out = executor.Run(*prepared, root, feeds, fetches);
    benchmark::DoNotOptimize(out);
  }
}

// A chain of `n` adds on one-element tensors: framework overhead per op.
void BM_AddChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  NetText text;
  text.Var("x", {1});
  for (int i = 0; i < n; ++i) {
    text.Op("add", {{"X", i == 0 ? "x" : absl::StrCat("t", i - 1)}, {"Y", "x"}},
            absl::StrCat("t", i));
  }
  RunNet(state, text.Build(), {}, {{"x", Filled({1}, 1.0f)}},
         absl::StrCat("t", n - 1));
  state.counters["us_per_op"] =
      benchmark::Counter(static_cast<double>(n) * 1e-6,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_AddChain)->Arg(1)->Arg(1000)->UseRealTime();

// MLP 784-1024-1024-10 with relu and softmax.
void BM_Mlp(benchmark::State& state) {
  const int64_t batch = state.range(0);
  NetText text;
  text.Var("x", {-1, 784});
  const int64_t sizes[] = {784, 1024, 1024, 10};
  std::vector<std::pair<std::string, Tensor>> parameters;
  std::string in = "x";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string w = absl::StrCat("w", layer),
                      b = absl::StrCat("b", layer);
    text.Var(w, {sizes[layer], sizes[layer + 1]}, true);
    text.Var(b, {sizes[layer + 1]}, true);
    parameters.push_back({w, Filled({sizes[layer], sizes[layer + 1]}, 0.001f)});
    parameters.push_back({b, Filled({sizes[layer + 1]}, 0.01f)});
    const std::string h = absl::StrCat("h", layer);
    text.Op("fc", {{"X", in}, {"W", w}, {"Bias", b}}, h);
    in = h;
    if (layer < 2) {
      text.Op("relu", {{"X", h}}, h + ".relu");
      in = h + ".relu";
    }
  }
  text.Op("softmax", {{"X", in}}, "probabilities");
  RunNet(state, text.Build(), parameters, {{"x", Filled({batch, 784}, 0.5f)}},
         "probabilities");
  const double flops = 2.0 * batch * (784 * 1024 + 1024 * 1024 + 1024 * 10);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Mlp)->Arg(1)->Arg(64)->UseRealTime()->Unit(
    benchmark::kMillisecond);

// The MLP's three matrix products alone, straight through oneDNN, on
// weights in tensors as the net's (so Gemm keeps its copies of them as it
// does for fc): the floor BM_Mlp approaches. The rest of BM_Mlp's time is
// the bias, relu and softmax passes and the executor.
void BM_MlpProducts(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const int64_t sizes[] = {784, 1024, 1024, 10};
  std::vector<Tensor> weights, activations;
  activations.push_back(Filled({batch, sizes[0]}, 0.5f));
  for (int layer = 0; layer < 3; ++layer) {
    weights.push_back(Filled({sizes[layer], sizes[layer + 1]}, 0.001f));
    activations.push_back(Filled({batch, sizes[layer + 1]}, 0.0f));
  }
  for (auto _ : state) {
    for (int layer = 0; layer < 3; ++layer) {
      const int64_t k = sizes[layer], n = sizes[layer + 1];
      // Read through const tensors: a write access would mark the weights
      // changed and drop Gemm's kept copy of them.
      const Tensor& x = activations[layer];
      const Tensor& w = weights[layer];
      if (!Gemm(false, false, batch, n, k, 1.0f, x.data<float>(), k,
                w.data<float>(), n, 0.0f, activations[layer + 1].data<float>(),
                n, w.buffer())
               .ok()) {
        std::abort();
      }
    }
    benchmark::DoNotOptimize(activations.back().data<float>());
  }
  const double flops = 2.0 * batch * (784 * 1024 + 1024 * 1024 + 1024 * 10);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MlpProducts)
    ->Arg(1)
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// CNN (AddBenchmarkCnn): 3x64x64 input; conv 3->32, 32->32, max pool
// 2x2, conv 32->64, 64->64 (3x3, pad 1, relu after each), global average
// pool, fc 64->10. Arguments: the batch, and the layout the executor runs the
// convolutions on: as the net is written, NCHW (0), or rewritten to NHWC (1),
// to NCHW8c (2), to the one the executor picks for this CPU by default (3),
// or to NCHW16c (4).
void BM_Cnn(benchmark::State& state) {
  const int64_t batch = state.range(0);
  ExecutorOptions options;
  options.channels_last = state.range(1) != 0;
  const ActivationLayout layouts[] = {
      ActivationLayout::kNhwc, ActivationLayout::kNhwc,
      ActivationLayout::kNchw8c, ActivationLayout::kAuto,
      ActivationLayout::kNchw16c};
  options.activation_layout = layouts[state.range(1)];
  NetText text;
  text.Var("x", {-1, 3, 64, 64});
  std::vector<std::pair<std::string, Tensor>> parameters;
  const double flops =
      batch * AddBenchmarkCnn(text, [&](const std::string& name,
                                        const std::vector<int64_t>& shape) {
        text.Var(name, shape, true);
        parameters.push_back({name, Filled(Dims(shape.begin(), shape.end()),
                                           name == "fc.b" ? 0.0f : 0.01f)});
      });
  RunNet(state, text.Build(), parameters,
         {{"x", Filled({batch, 3, 64, 64}, 0.5f)}}, "logits", options);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Cnn)
    ->ArgNames({"batch", "layout"})
    ->ArgsProduct({{1, 16}, {2, 1, 0}})
    ->Args({1, 3})
    ->Args({16, 3})
    ->Args({1, 4})
    ->Args({16, 4})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One 1024x1024x1024 product straight through oneDNN: the machine's limit.
void BM_Sgemm1024(benchmark::State& state) {
  constexpr int64_t n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (auto _ : state) {
    if (!Gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
              c.data(), n)
             .ok()) {
      std::abort();
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Sgemm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// One 1024x1024x1024 matmul op in a net, its inputs already on the place:
// the product through the executor (on a device, cuBLAS), with the run's
// overhead.
void BM_MatmulNet1024(benchmark::State& state) {
  constexpr int64_t n = 1024;
  NetText text;
  text.Var("a", {n, n}, true);
  text.Var("b", {n, n}, true);
  text.Op("matmul", {{"X", "a"}, {"Y", "b"}}, "c");
  RunNet(state, text.Build(),
         {{"a", Filled({n, n}, 0.5f)}, {"b", Filled({n, n}, 0.25f)}}, {}, "c");
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatmulNet1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// Memory-bound elementwise work on 4096x4096 float32 tensors, 8 ops in a
// chain: kind 0 adds two tensors of that shape, kind 1 adds a row of 4096
// (broadcast), kind 2 is mul_grad's gradient of that row, a reduction over
// the rows. GB/s counts the bytes each op must read and write once, so on a
// device it compares with the memory's bandwidth.
void BM_Elementwise(benchmark::State& state) {
  constexpr int64_t rows = 4096, cols = 4096, chain = 8;
  constexpr double tensor_bytes = rows * cols * sizeof(float);
  const int64_t kind = state.range(0);
  NetText text;
  text.Var("x", {rows, cols}, true);
  text.Var("g", {rows, cols}, true);
  text.Var("row", {cols}, true);
  std::vector<std::pair<std::string, Tensor>> parameters = {
      {"x", Filled({rows, cols}, 0.5f)},
      {"g", Filled({rows, cols}, 0.25f)},
      {"row", Filled({cols}, 1.0f)}};
  double bytes = 0;
  std::string in = "x";
  for (int64_t i = 0; i < chain; ++i) {
    const std::string out = absl::StrCat("t", i);
    if (kind == 0) {
      text.Op("add", {{"X", in}, {"Y", "g"}}, out);
      bytes += 3 * tensor_bytes;
    } else if (kind == 1) {
      text.Op("add", {{"X", in}, {"Y", "row"}}, out);
      bytes += 2 * tensor_bytes;
    } else {
      // Only Y@GRAD is asked for; Y's value is not read for it, so the
      // chain runs through Y to order the ops.
      text.Op("mul_grad",
              {{"X", "x"}, {"Y", i == 0 ? "row" : in}, {"Out@GRAD", "g"}}, out,
              "", "Y@GRAD");
      bytes += 2 * tensor_bytes;
    }
    in = out;
  }
  std::string fetch = in;
  if (kind != 2) {  // Fetch a row, not 64 MiB.
    text.Op("reduce_sum", {{"X", in}}, "sum",
            "attrs { name: 'axes' ints { values: [0] } }");
    bytes += tensor_bytes;
    fetch = "sum";
  }
  RunNet(state, text.Build(), parameters, {}, fetch);
  state.counters["GB/s"] = benchmark::Counter(
      bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Elementwise)
    ->ArgName("kind")
    ->DenseRange(0, 2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  scopeflow::KeepFreedHostMemoryForReuse();
  // --place=P is ours; the rest are Google Benchmark's flags.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (absl::StartsWith(arg, "--place=")) {
      absl::StatusOr<scopeflow::Place> place =
          scopeflow::ParsePlace(arg.substr(std::strlen("--place=")));
      if (!place.ok()) {
        std::fprintf(stderr, "%s\n",
                     std::string(place.status().message()).c_str());
        return 2;
      }
      scopeflow::BenchmarkPlace() = *place;
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
