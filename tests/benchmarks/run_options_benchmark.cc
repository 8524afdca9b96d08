// What RunOptions::check_numerics and RunOptions::trace cost a run, against
// the same net run with both off: each iteration times one run of each
// variant in turn, so that the machine's slow stretches fall on all of
// them; the counters give each variant's time over the plain run's (median,
// 10th and 90th percentiles) and the plain run's time per op.
//   OMP_NUM_THREADS=1 bazel run --config=cpu_only
//   //tests/benchmarks:run_options_benchmark
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/run_trace.h"
#include "tests/benchmarks/net_text.h"

namespace scopeflow {
namespace {

double Quantile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(fraction * (values.size() - 1) + 0.5)];
}

void SetQuantileCounters(benchmark::State& state, const std::string& name,
                         const std::vector<double>& values) {
  state.counters[name + "_p10"] = Quantile(values, 0.1);
  state.counters[name] = Quantile(values, 0.5);
  state.counters[name + "_p90"] = Quantile(values, 0.9);
}

// A chain of `n` adds of [size] tensors, prepared under `options`.
class AddChain {
 public:
  AddChain(int n, int64_t size, ExecutorOptions options)
      : executor_(options), fetch_({absl::StrCat("t", n - 1)}) {
    NetText text;
    text.Var("x", {size});
    for (int i = 0; i < n; ++i) {
      text.Op("add",
              {{"X", i == 0 ? "x" : absl::StrCat("t", i - 1)}, {"Y", "x"}},
              absl::StrCat("t", i));
    }
    absl::StatusOr<PreparedNet> prepared =
        executor_.Prepare(text.Build(), 0, CPUPlace());
    if (!prepared.ok()) std::abort();
    prepared_.emplace(*std::move(prepared));
    Tensor x;
    if (!x.Allocate(CPUPlace(), kFloat32, {size}).ok()) std::abort();
    std::fill_n(x.data<float>(), size, 1e-3f);
    feeds_ = {{"x", x}};
  }

  // Seconds one run takes.
  double Run() {
    const auto start = std::chrono::steady_clock::now();
    auto out = executor_.Run(*prepared_, root_, feeds_, fetch_);
    const auto end = std::chrono::steady_clock::now();
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out);
    return std::chrono::duration<double>(end - start).count();
  }

 private:
  Executor executor_;
  std::optional<PreparedNet> prepared_;
  Scope root_;
  std::vector<Feed> feeds_;
  std::vector<std::string> fetch_;
};

// Arguments: ops in the chain, elements per tensor.
void BM_RunOptionsCost(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int64_t size = state.range(1);
  ExecutorOptions plain;
  ExecutorOptions numerics;
  numerics.run.check_numerics = true;
  // One trace for every run: it grows by each (vector appends).
  RunTrace trace;
  ExecutorOptions traced;
  traced.run.trace = &trace;
  AddChain plain_net(n, size, plain), numerics_net(n, size, numerics),
      traced_net(n, size, traced);
  std::vector<double> numerics_ratio, trace_ratio, plain_us_per_op;
  for (int i = 0; i < 3; ++i) {
    plain_net.Run();
    numerics_net.Run();
    traced_net.Run();
  }
  for (auto _ : state) {
    const double plain_seconds = plain_net.Run();
    const double numerics_seconds = numerics_net.Run();
    const double trace_seconds = traced_net.Run();
    numerics_ratio.push_back(numerics_seconds / plain_seconds);
    trace_ratio.push_back(trace_seconds / plain_seconds);
    plain_us_per_op.push_back(1e6 * plain_seconds / n);
  }
  SetQuantileCounters(state, "numerics_x", numerics_ratio);
  SetQuantileCounters(state, "trace_x", trace_ratio);
  state.counters["plain_us_per_op"] = Quantile(plain_us_per_op, 0.5);
}
BENCHMARK(BM_RunOptionsCost)
    ->ArgNames({"ops", "elements"})
    ->Args({1000, 1})
    ->Args({100, 1 << 16})
    ->Iterations(200)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace scopeflow

BENCHMARK_MAIN();
