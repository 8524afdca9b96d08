// Times pool2d through the executor as the CNN of the net benchmarks runs
// it: `bazel run //operators/nn:pool2d_benchmark`. Pooling reads its input
// once and does little per element, so it is reported in GB/s of input
// read and output written.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "google/protobuf/text_format.h"

namespace scopeflow {
namespace {

// Values in [-1, 1) in no order a window could exploit (max pooling's
// loop has no branches on them anyway).
Tensor Scattered(Dims dims) {
  std::vector<float> values(NumElements(dims));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i * 7919 % 2000) / 1000.0f - 1.0f;
  }
  return MakeTensor<float>(dims, values);
}

// Input [N, H, W, C] (args 0-3; the layout the executor runs a CNN's
// activations in on AVX-512), pooled by kind (arg 4): 0, max over 2x2
// windows with stride 2; 1, global average.
void BM_Pool2dNhwc(benchmark::State& state) {
  const Dims input = {state.range(0), state.range(1), state.range(2),
                      state.range(3)};
  const bool global = state.range(4) == 1;
  const std::string attrs =
      global ? " attrs { name: 'pooling_type' s: 'avg' }"
               " attrs { name: 'ksize' ints { values: [1, 1] } }"
               " attrs { name: 'global_pooling' b: true }"
             : " attrs { name: 'pooling_type' s: 'max' }"
               " attrs { name: 'ksize' ints { values: [2, 2] } }"
               " attrs { name: 'strides' ints { values: [2, 2] } }";
  NetDef net;
  const bool parsed = google::protobuf::TextFormat::ParseFromString(
      absl::StrCat(
          "format_version: ", kNetFormatVersion,
          " name: 'pool' blocks {"
          " vars { name: 'x' dtype: DATA_TYPE_FLOAT32 shape: [-1, -1, -1, -1] }"
          " ops { type: 'pool2d' inputs { slot: 'X' vars: 'x' }"
          " outputs { slot: 'Out' vars: 'y' }",
          attrs, " attrs { name: 'data_format' s: 'NHWC' } } }"),
      &net);
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  if (!parsed || !prepared.ok()) {
    state.SkipWithError(parsed
                            ? std::string(prepared.status().message()).c_str()
                            : "cannot parse the pool2d net");
    return;
  }
  const std::vector<Feed> feeds = {{"x", Scattered(input)}};
  Scope scope;
  int64_t out_elements = 0;
  for (auto _ : state) {
    auto out = executor.Run(*prepared, scope, feeds, {"y"});
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    out_elements = (*out)[0].numel();
    benchmark::DoNotOptimize((*out)[0].raw_data());
  }
  const double bytes =
      static_cast<double>(NumElements(input) + out_elements) * sizeof(float);
  state.counters["GB/s"] = benchmark::Counter(
      bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Pool2dNhwc)
    ->ArgNames({"n", "h", "w", "c", "global"})
    ->Args({16, 64, 64, 32, 0})
    ->Args({16, 32, 32, 64, 1})
    ->Args({1, 64, 64, 32, 0})
    ->Args({1, 32, 32, 64, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace scopeflow
