// Whole-net benchmarks: dispatch overhead, an MLP, a CNN, and the
// machine's own matrix-product limit through the same library.
//   OMP_NUM_THREADS=1 bazel run //tests/benchmarks:net_benchmark
//   OMP_NUM_THREADS=2 bazel run //tests/benchmarks:net_benchmark
//   bazel run //tests/benchmarks:net_benchmark -- --place=cuda:0
// On a device the parameters live there and each run copies its input from
// the host and waits for its kernels (Executor::Run), as a serving request
// does. The net shapes are those of the figures in docs/PERFORMANCE.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/substitute.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "operators/gemm.h"
#include "platform/cpu_allocator.h"
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

// A net prepared once on BenchmarkPlace(), its parameters placed in a root
// scope, run on the feeds given.
class PreparedBenchmarkNet {
 public:
  explicit PreparedBenchmarkNet(ExecutorOptions options) : executor_(options) {}

  // Prepares `net` and places the parameters, then runs it three times to
  // warm up.
  absl::Status Init(
      const NetDef& net,
      const std::vector<std::pair<std::string, Tensor>>& parameters,
      std::vector<Feed> feeds, const std::string& fetch) {
    const Place& place = BenchmarkPlace();
    absl::StatusOr<PreparedNet> prepared = executor_.Prepare(net, 0, place);
    if (!prepared.ok()) return prepared.status();
    prepared_.emplace(*std::move(prepared));
    for (const auto& [name, tensor] : parameters) {
      absl::StatusOr<Tensor> placed = tensor.CopyTo(place);
      if (!placed.ok()) return placed.status();
      **root_.Var(name)->GetMutable<Tensor>() = *placed;
    }
    feeds_ = std::move(feeds);
    fetches_ = {fetch};
    for (int i = 0; i < 3; ++i) Run();
    return absl::OkStatus();
  }

  void Run() {
    auto out = executor_.Run(*prepared_, root_, feeds_, fetches_);
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out);
  }

 private:
  Executor executor_;
  std::optional<PreparedNet> prepared_;
  Scope root_;
  std::vector<Feed> feeds_;
  std::vector<std::string> fetches_;
};

// Runs `net` with the parameters given, as the timed loop.
void RunNet(benchmark::State& state, const NetDef& net,
            const std::vector<std::pair<std::string, Tensor>>& parameters,
            const std::vector<Feed>& feeds, const std::string& fetch,
            ExecutorOptions options = {}) {
  PreparedBenchmarkNet prepared(options);
  if (absl::Status status = prepared.Init(net, parameters, feeds, fetch);
      !status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return;
  }
  for (auto _ : state) prepared.Run();
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

// A benchmark's net with its parameters, feeds and fetch, and the
// floating-point operations of a run.
struct BenchmarkNet {
  NetDef net;
  std::vector<std::pair<std::string, Tensor>> parameters;
  std::vector<Feed> feeds;
  std::string fetch;
  ExecutorOptions options;
  double flops = 0;
};

void RunNet(benchmark::State& state, const BenchmarkNet& net) {
  RunNet(state, net.net, net.parameters, net.feeds, net.fetch, net.options);
  state.counters["GFLOP/s"] = benchmark::Counter(
      net.flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The floating-point operations of the MLP's products at `batch`.
double MlpFlops(int64_t batch) {
  return 2.0 * batch * (784 * 1024 + 1024 * 1024 + 1024 * 10);
}

// MLP 784-1024-1024-10 with relu and softmax; each layer an fc op, or, as
// an ONNX import writes it (`as_onnx`), a matmul and an add of the bias.
BenchmarkNet MlpNet(int64_t batch, bool as_onnx = false) {
  BenchmarkNet mlp;
  NetText text;
  text.Var("x", {-1, 784});
  const int64_t sizes[] = {784, 1024, 1024, 10};
  std::string in = "x";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string w = absl::StrCat("w", layer),
                      b = absl::StrCat("b", layer);
    text.Var(w, {sizes[layer], sizes[layer + 1]}, true);
    text.Var(b, {sizes[layer + 1]}, true);
    mlp.parameters.push_back(
        {w, Filled({sizes[layer], sizes[layer + 1]}, 0.001f)});
    mlp.parameters.push_back({b, Filled({sizes[layer + 1]}, 0.01f)});
    const std::string h = absl::StrCat("h", layer);
    if (as_onnx) {
      text.Op("matmul", {{"X", in}, {"Y", w}}, h + ".product");
      text.Op("add", {{"X", h + ".product"}, {"Y", b}}, h);
    } else {
      text.Op("fc", {{"X", in}, {"W", w}, {"Bias", b}}, h);
    }
    in = h;
    if (layer < 2) {
      text.Op("relu", {{"X", h}}, h + ".relu");
      in = h + ".relu";
    }
  }
  text.Op("softmax", {{"X", in}}, "probabilities");
  mlp.net = text.Build();
  mlp.feeds = {{"x", Filled({batch, 784}, 0.5f)}};
  mlp.fetch = "probabilities";
  mlp.flops = MlpFlops(batch);
  return mlp;
}

void BM_Mlp(benchmark::State& state) { RunNet(state, MlpNet(state.range(0))); }
BENCHMARK(BM_Mlp)->Arg(1)->Arg(64)->UseRealTime()->Unit(
    benchmark::kMillisecond);

// The MLP's three matrix products alone, straight through oneDNN, on
// weights in tensors as the net's (so Gemm keeps its copies of them as it
// does for fc): the floor BM_Mlp approaches. The rest of BM_Mlp's time is
// the bias, relu and softmax passes and the executor.
class MlpProducts {
 public:
  explicit MlpProducts(int64_t batch) : batch_(batch) {
    activations_.push_back(Filled({batch, kSizes[0]}, 0.5f));
    for (int layer = 0; layer < 3; ++layer) {
      weights_.push_back(Filled({kSizes[layer], kSizes[layer + 1]}, 0.001f));
      activations_.push_back(Filled({batch, kSizes[layer + 1]}, 0.0f));
    }
  }

  void Run() {
    for (int layer = 0; layer < 3; ++layer) {
      const int64_t k = kSizes[layer], n = kSizes[layer + 1];
      // Read through const tensors: a write access would mark the weights
      // changed and drop Gemm's kept copy of them.
      const Tensor& x = activations_[layer];
      const Tensor& w = weights_[layer];
      if (!Gemm(false, false, batch_, n, k, 1.0f, x.data<float>(), k,
                w.data<float>(), n, 0.0f, activations_[layer + 1].data<float>(),
                n, w.buffer())
               .ok()) {
        std::abort();
      }
    }
    benchmark::DoNotOptimize(activations_.back().data<float>());
  }

 private:
  static constexpr int64_t kSizes[] = {784, 1024, 1024, 10};
  const int64_t batch_;
  std::vector<Tensor> weights_, activations_;
};

void BM_MlpProducts(benchmark::State& state) {
  MlpProducts products(state.range(0));
  for (auto _ : state) products.Run();
  state.counters["GFLOP/s"] =
      benchmark::Counter(MlpFlops(state.range(0)) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MlpProducts)
    ->Arg(1)
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// CNN (AddBenchmarkCnn): 3x64x64 input; conv 3->32, 32->32, max pool
// 2x2, conv 32->64, 64->64 (3x3, pad 1, relu after each), global average
// pool, fc 64->10. `layout` is the layout the executor runs the
// convolutions on: as the net is written, NCHW (0), or rewritten to NHWC
// (1), to NCHW8c (2), to the one the executor picks for this CPU by default
// (3), or to NCHW16c (4).
BenchmarkNet CnnNet(int64_t batch, int64_t layout) {
  BenchmarkNet cnn;
  cnn.options.prepare.channels_last = layout != 0;
  const ActivationLayout layouts[] = {
      ActivationLayout::kNhwc, ActivationLayout::kNhwc,
      ActivationLayout::kNchw8c, ActivationLayout::kAuto,
      ActivationLayout::kNchw16c};
  cnn.options.prepare.activation_layout = layouts[layout];
  NetText text;
  text.Var("x", {-1, 3, 64, 64});
  cnn.flops =
      batch * AddBenchmarkCnn(text, [&](const std::string& name,
                                        const std::vector<int64_t>& shape) {
        text.Var(name, shape, true);
        cnn.parameters.push_back({name, Filled(Dims(shape.begin(), shape.end()),
                                               name == "fc.b" ? 0.0f : 0.01f)});
      });
  cnn.net = text.Build();
  cnn.feeds = {{"x", Filled({batch, 3, 64, 64}, 0.5f)}};
  cnn.fetch = "logits";
  return cnn;
}

// Arguments: the batch and the layout (CnnNet).
void BM_Cnn(benchmark::State& state) {
  RunNet(state, CnnNet(state.range(0), state.range(1)));
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
// Its matrices come from the allocator the nets' tensors come from, on the
// same (huge) pages.
class Sgemm1024 {
 public:
  static constexpr int64_t kSize = 1024;
  static constexpr double kFlops = 2.0 * kSize * kSize * kSize;

  void Run() {
    if (!Gemm(false, false, kSize, kSize, kSize, 1.0f, a_.data<float>(), kSize,
              b_.data<float>(), kSize, 0.0f, c_.data<float>(), kSize)
             .ok()) {
      std::abort();
    }
    benchmark::DoNotOptimize(c_.data<float>());
  }

 private:
  Tensor a_ = Filled({kSize, kSize}, 0.5f);
  Tensor b_ = Filled({kSize, kSize}, 0.25f);
  Tensor c_ = Filled({kSize, kSize}, 0.0f);
};

void BM_Sgemm1024(benchmark::State& state) {
  Sgemm1024 sgemm;
  for (auto _ : state) sgemm.Run();
  state.counters["GFLOP/s"] = benchmark::Counter(
      Sgemm1024::kFlops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Sgemm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

template <typename F>
double SecondsOf(F f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// The value below which a `fraction` of `values` lie (nearest rank).
double Quantile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(fraction * (values.size() - 1) + 0.5)];
}

// Counters `name`, `name`_p10 and `name`_p90: the median and the 10th and
// 90th percentiles of `values`.
void SetQuantileCounters(benchmark::State& state, const std::string& name,
                         const std::vector<double>& values) {
  state.counters[name + "_p10"] = Quantile(values, 0.1);
  state.counters[name] = Quantile(values, 0.5);
  state.counters[name + "_p90"] = Quantile(values, 0.9);
}

// A net's rate of floating-point operations as a share of the 1024^3
// product's, the measure of the goals in docs/PERFORMANCE.md. This
// machine's speed changes over stretches of 30-200 ms, so two benchmarks
// run one after the other can see two different machines. Here each
// iteration times the work, repeated for about as long as one product
// takes, then the product, and takes the ratio of the two rates; the
// counters give its median and 10th and 90th percentiles over the
// iterations, and each side's median rate. Argument: the MLP at batch 64
// (0), the CNN at batch 16 on the layout the executor picks (1), the MLP's
// three products alone at batch 64 (2). On the CPU only: the product is the
// CPU's.
void BM_ShareOfSgemm(benchmark::State& state) {
  if (BenchmarkPlace().type() != DeviceType::kCPU) {
    state.SkipWithError("the share of sgemm is measured on the CPU");
    return;
  }
  const int64_t work = state.range(0);
  std::optional<MlpProducts> products;
  std::optional<PreparedBenchmarkNet> net;
  double flops = MlpFlops(64);
  if (work == 2) {
    products.emplace(64);
  } else {
    const BenchmarkNet spec = work == 0 ? MlpNet(64) : CnnNet(16, 3);
    flops = spec.flops;
    net.emplace(spec.options);
    if (absl::Status status =
            net->Init(spec.net, spec.parameters, spec.feeds, spec.fetch);
        !status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
  }
  auto run = [&] {
    if (products) {
      products->Run();
    } else {
      net->Run();
    }
  };
  Sgemm1024 sgemm;
  sgemm.Run();
  run();
  const double product_seconds = SecondsOf([&] { sgemm.Run(); });
  const double work_seconds = SecondsOf(run);
  const int repeats = std::max(
      1, static_cast<int>(std::lround(product_seconds / work_seconds)));
  std::vector<double> shares, work_rates, product_rates;
  for (auto _ : state) {
    const double work_time = SecondsOf([&] {
                               for (int i = 0; i < repeats; ++i) run();
                             }) /
                             repeats;
    const double product_time = SecondsOf([&] { sgemm.Run(); });
    work_rates.push_back(flops / work_time * 1e-9);
    product_rates.push_back(Sgemm1024::kFlops / product_time * 1e-9);
    shares.push_back(work_rates.back() / product_rates.back());
  }
  SetQuantileCounters(state, "share", shares);
  state.counters["GFLOP/s"] = Quantile(work_rates, 0.5);
  state.counters["sgemm_GFLOP/s"] = Quantile(product_rates, 0.5);
}
BENCHMARK(BM_ShareOfSgemm)
    ->ArgName("work")
    ->DenseRange(0, 2)
    ->Iterations(40)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The executor's op fusion (framework/passes/op_fusion.h) on the MLP, written with
// fc ops (onnx:0) or as ONNX writes it (onnx:1), at batch 1 or 64: each
// iteration times one run of the net fused and one as written, so that the
// machine's slow stretches fall on both; the counters give the speed-up
// (time as written over time fused), its median and 10th and 90th
// percentiles over the iterations.
void BM_FusionSpeedup(benchmark::State& state) {
  const BenchmarkNet spec = MlpNet(state.range(1), state.range(0) == 1);
  ExecutorOptions unfused_options = spec.options;
  unfused_options.prepare.fuse_ops = false;
  PreparedBenchmarkNet fused(spec.options), unfused(unfused_options);
  for (PreparedBenchmarkNet* net : {&fused, &unfused}) {
    if (absl::Status status =
            net->Init(spec.net, spec.parameters, spec.feeds, spec.fetch);
        !status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
  }
  std::vector<double> speedups;
  for (auto _ : state) {
    const double fused_time = SecondsOf([&] { fused.Run(); });
    const double unfused_time = SecondsOf([&] { unfused.Run(); });
    speedups.push_back(unfused_time / fused_time);
  }
  SetQuantileCounters(state, "speedup", speedups);
}
BENCHMARK(BM_FusionSpeedup)
    ->ArgNames({"onnx", "batch"})
    ->ArgsProduct({{0, 1}, {1, 64}})
    ->Iterations(400)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The MLP at batch 1 or 64 with its weights (and the copies Gemm keeps of
// them) on transparent huge pages or not (platform/cpu_allocator.h): each
// iteration times one run of each, so that the machine's slow stretches fall
// on both; the counters give the speed-up (time on small pages over time on
// huge pages), its median and 10th and 90th percentiles. Each net reads its
// own weights, so neither finds the other's in the caches.
void BM_HugePageSpeedup(benchmark::State& state) {
  if (BenchmarkPlace().type() != DeviceType::kCPU) {
    state.SkipWithError("huge pages are the host's");
    return;
  }
  const bool was_on = HugePagesForLargeHostBlocks();
  std::optional<PreparedBenchmarkNet> on_small_pages, on_huge_pages;
  for (const bool huge : {false, true}) {
    // Init's warm-up runs make the kept copies under the same setting.
    SetHugePagesForLargeHostBlocks(huge);
    const BenchmarkNet spec = MlpNet(state.range(0));
    std::optional<PreparedBenchmarkNet>& net =
        huge ? on_huge_pages : on_small_pages;
    net.emplace(spec.options);
    if (absl::Status status =
            net->Init(spec.net, spec.parameters, spec.feeds, spec.fetch);
        !status.ok()) {
      SetHugePagesForLargeHostBlocks(was_on);
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
  }
  SetHugePagesForLargeHostBlocks(was_on);
  std::vector<double> speedups;
  bool huge_first = true;
  for (auto _ : state) {
    // Each goes first every other iteration: the one after the other finds
    // the caches as the other left them.
    double huge_time = 0, small_time = 0;
    if (huge_first) huge_time = SecondsOf([&] { on_huge_pages->Run(); });
    small_time = SecondsOf([&] { on_small_pages->Run(); });
    if (!huge_first) huge_time = SecondsOf([&] { on_huge_pages->Run(); });
    huge_first = !huge_first;
    speedups.push_back(small_time / huge_time);
  }
  SetQuantileCounters(state, "speedup", speedups);
}
BENCHMARK(BM_HugePageSpeedup)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(64)
    ->Iterations(1000)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

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
