// Times pool2d and pool2d_grad through the executor on the CNN's poolings
// of the net and training benchmarks: `bazel run
// //operators/nn:pool2d_benchmark`. Pooling reads its input
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
#include "operators/nn/op_benchmark.h"

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

// Input N, C, H, W (args 0-3) in NCHW, NHWC or NCHW16c (arg 5: 0, 1 or 2;
// NCHW16c is the layout the executor runs a CNN's activations in on
// AVX-512, NHWC where channel counts do not fill its blocks, NCHW the one
// of nets run as written), pooled by kind (arg 4): 0, max over 2x2
// windows with stride 2; 1, global average. With `grad`, times
// pool2d_grad instead, which reads X and Out@GRAD and writes X@GRAD.
void TimePool2d(benchmark::State& state, bool grad) {
  const int64_t n = state.range(0), c = state.range(1), h = state.range(2),
                w = state.range(3);
  const bool global = state.range(4) == 1;
  const char* const formats[] = {"NCHW", "NHWC", "NCHW16c"};
  const char* const format = formats[state.range(5)];
  const int64_t oh = global ? 1 : h / 2, ow = global ? 1 : w / 2;
  const auto dims_in = [&](int64_t height, int64_t width) {
    if (state.range(5) == 0) return Dims{n, c, height, width};
    if (state.range(5) == 1) return Dims{n, height, width, c};
    return Dims{n, c / 16, height, width, 16};
  };
  const Dims input = dims_in(h, w);
  const Dims output = dims_in(oh, ow);
  const std::string attrs = absl::StrCat(
      global ? " attrs { name: 'pooling_type' s: 'avg' }"
               " attrs { name: 'ksize' ints { values: [1, 1] } }"
               " attrs { name: 'global_pooling' b: true }"
             : " attrs { name: 'pooling_type' s: 'max' }"
               " attrs { name: 'ksize' ints { values: [2, 2] } }"
               " attrs { name: 'strides' ints { values: [2, 2] } }",
      " attrs { name: 'data_format' s: '", format, "' }");
  const std::string op =
      grad ? absl::StrCat(
                 " ops { type: 'pool2d_grad' inputs { slot: 'X' vars: 'x' }"
                 " inputs { slot: 'Out@GRAD' vars: 'dy' }"
                 " outputs { slot: 'X@GRAD' vars: 'y' }",
                 attrs, " }")
           : absl::StrCat(
                 " ops { type: 'pool2d' inputs { slot: 'X' vars: 'x' }"
                 " outputs { slot: 'Out' vars: 'y' }",
                 attrs, " }");
  std::vector<Feed> feeds = {{"x", Scattered(input)}};
  if (grad) feeds.push_back({"dy", Scattered(output)});
  if (!RunOpNet(state,
                absl::StrCat("vars { name: 'x' dtype: DATA_TYPE_FLOAT32 }"
                             " vars { name: 'dy' dtype: DATA_TYPE_FLOAT32 }",
                             op),
                feeds, "y")) {
    return;
  }
  // The gradient reads X and Out@GRAD and writes a tensor of X's size.
  const double elements = grad ? 2.0 * NumElements(input) + NumElements(output)
                               : NumElements(input) + NumElements(output);
  state.counters["GB/s"] =
      benchmark::Counter(elements * sizeof(float) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Pool2d(benchmark::State& state) { TimePool2d(state, false); }
void BM_Pool2dGrad(benchmark::State& state) { TimePool2d(state, true); }

// The CNN's two poolings at batch 16 and 1, in each layout.
void CnnPoolings(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "c", "h", "w", "global", "layout"});
  for (int64_t layout : {0, 1, 2}) {
    for (int64_t n : {16, 1}) {
      b->Args({n, 32, 64, 64, 0, layout});
      b->Args({n, 64, 32, 32, 1, layout});
    }
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_Pool2d)->Apply(CnnPoolings);
BENCHMARK(BM_Pool2dGrad)->Apply(CnnPoolings);

}  // namespace
}  // namespace scopeflow
