// Times conv2d through the executor (prepared once, run many times), as a
// net would run it: `bazel run //operators/nn:conv2d_benchmark`.
#include <cstdint>
#include <random>
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

Tensor RandomTensor(Dims dims, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(NumElements(dims));
  for (float& v : values) v = dist(engine);
  return MakeTensor<float>(dims, values);
}

// Input [N, C, H, W] (args 0-3) convolved with [M, C, 3, 3] (arg 4),
// padding 1, stride 1; data_format NCHW (arg 5 = 0) or NHWC (1), the input
// then being [N, H, W, C].
void BM_Conv2d3x3(benchmark::State& state) {
  const bool nhwc = state.range(5) != 0;
  const Dims input = nhwc ? Dims{state.range(0), state.range(2), state.range(3),
                                 state.range(1)}
                          : Dims{state.range(0), state.range(1), state.range(2),
                                 state.range(3)};
  const Dims filter = {state.range(4), state.range(1), 3, 3};
  const std::string block = absl::StrCat(
      "vars { name: 'x' dtype: DATA_TYPE_FLOAT32 shape: [-1, -1, -1, -1] }"
      " vars { name: 'w' dtype: DATA_TYPE_FLOAT32 shape: [-1, -1, 3, 3] }"
      " ops { type: 'conv2d' inputs { slot: 'Input' vars: 'x' }"
      " inputs { slot: 'Filter' vars: 'w' }"
      " outputs { slot: 'Output' vars: 'y' }"
      " attrs { name: 'paddings' ints { values: [1, 1] } }"
      " attrs { name: 'data_format' s: '",
      nhwc ? "NHWC" : "NCHW", "' } }");
  if (!RunOpNet(state, block,
                {{"x", RandomTensor(input, 1)}, {"w", RandomTensor(filter, 2)}},
                "y")) {
    return;
  }
  const double flops = 2.0 * NumElements(input) / filter[1] * filter[0] *
                       filter[1] * 9;  // output cells x MACs each, x2
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Conv2d3x3)
    ->ArgNames({"n", "c", "h", "w", "m", "nhwc"})
    ->Args({16, 32, 64, 64, 32, 0})
    ->Args({16, 32, 64, 64, 32, 1})
    ->Args({1, 32, 64, 64, 32, 0})
    ->Args({1, 32, 64, 64, 32, 1})
    ->Args({1, 64, 56, 56, 64, 0})
    ->Args({1, 64, 56, 56, 64, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// conv2d_grad asked for Bias@GRAD alone: the sums of an Output@GRAD of
// [16, 32, 64, 64] (8 MiB) per channel, in NCHW (arg 0), NHWC (1) or
// NCHW16c (2).
void BM_Conv2dBiasGrad(benchmark::State& state) {
  const int64_t layout = state.range(0);
  const char* formats[] = {"NCHW", "NHWC", "NCHW16c"};
  const Dims d_output = layout == 0   ? Dims{16, 32, 64, 64}
                        : layout == 1 ? Dims{16, 64, 64, 32}
                                      : Dims{16, 2, 64, 64, 16};
  const Dims input = layout == 0   ? Dims{16, 32, 64, 64}
                     : layout == 1 ? Dims{16, 64, 64, 32}
                                   : Dims{16, 2, 64, 64, 16};
  const std::string block = absl::StrCat(
      "vars { name: 'x' dtype: DATA_TYPE_FLOAT32 }"
      " vars { name: 'w' dtype: DATA_TYPE_FLOAT32 }"
      " vars { name: 'b' dtype: DATA_TYPE_FLOAT32 }"
      " vars { name: 'g' dtype: DATA_TYPE_FLOAT32 }"
      " ops { type: 'conv2d_grad' inputs { slot: 'Input' vars: 'x' }"
      " inputs { slot: 'Filter' vars: 'w' }"
      " inputs { slot: 'Bias' vars: 'b' }"
      " inputs { slot: 'Output@GRAD' vars: 'g' }"
      " outputs { slot: 'Bias@GRAD' vars: 'db' }"
      " attrs { name: 'paddings' ints { values: [1, 1] } }"
      " attrs { name: 'data_format' s: '",
      formats[layout], "' } }");
  if (!RunOpNet(state, block,
                {{"x", RandomTensor(input, 1)},
                 {"w", RandomTensor({32, 32, 3, 3}, 2)},
                 {"b", RandomTensor({32}, 3)},
                 {"g", RandomTensor(d_output, 4)}},
                "db")) {
    return;
  }
  state.SetBytesProcessed(state.iterations() * NumElements(d_output) *
                          sizeof(float));
}
BENCHMARK(BM_Conv2dBiasGrad)
    ->ArgName("layout")
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace scopeflow
