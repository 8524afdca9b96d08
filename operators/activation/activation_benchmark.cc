// relu and softmax on large float32 inputs: through the executor as a net
// runs them, and softmax's row loops against the plain loops they replace.
//   bazel run //operators/activation:activation_benchmark
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/tensor.h"
#include "operators/activation/softmax_math.h"

namespace scopeflow {
namespace {

// A float32 tensor of `dims` holding values spread over [-10, 10].
Tensor SpreadTensor(Dims dims) {
  Tensor tensor;
  if (!tensor.Allocate(CPUPlace(), kFloat32, dims).ok()) std::abort();
  float* data = tensor.data<float>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    data[i] = 10 * std::sin(0.37f * static_cast<float>(i));
  }
  return tensor;
}

// Runs op `type` (X: "x", Out: "y") on `x`, prepared once, per iteration.
void RunOpBenchmark(benchmark::State& state, const std::string& type,
                    const Tensor& x) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name(type);
  BlockDef* block = net.add_blocks();
  VarDef* var = block->add_vars();
  var->set_name("x");
  var->set_dtype(kFloat32);
  for (int64_t d : x.dims()) var->add_shape(d);
  OpDef* op = block->add_ops();
  op->set_type(type);
  OpSlot* in = op->add_inputs();
  in->set_slot("X");
  in->add_vars("x");
  OpSlot* out = op->add_outputs();
  out->set_slot("Out");
  out->add_vars("y");
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  Scope scope;
  const std::vector<Feed> feeds = {{"x", x}};
  const std::vector<std::string> fetches = {"y"};
  for (auto _ : state) {
    auto result = executor.Run(*prepared, scope, feeds, fetches);
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
  state.SetBytesProcessed(state.iterations() * x.numel() * 2 * sizeof(float));
}

// relu of a [n] tensor.
void BM_ReluOp(benchmark::State& state) {
  RunOpBenchmark(state, "relu", SpreadTensor({state.range(0)}));
}
BENCHMARK(BM_ReluOp)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// softmax over the last axis of [rows, columns].
void BM_SoftmaxOp(benchmark::State& state) {
  RunOpBenchmark(state, "softmax",
                 SpreadTensor({state.range(0), state.range(1)}));
}
BENCHMARK(BM_SoftmaxOp)
    ->Args({1024, 10})
    ->Args({1024, 1000})
    ->Args({64, 32000})
    ->Args({1, 1 << 20});

// The kernel's loops alone, and the plain loops (std::exp, one accumulator)
// they replace, on [1024, columns].
void BM_SoftmaxRows(benchmark::State& state) {
  const int64_t rows = 1024, columns = state.range(0);
  Tensor x = SpreadTensor({rows, columns});
  std::vector<float> y(x.numel());
  for (auto _ : state) {
    softmax_math::SoftmaxRows(x.data<float>(), y.data(), rows, columns);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_SoftmaxRows)->Arg(10)->Arg(1000);

void BM_SoftmaxRowsPlain(benchmark::State& state) {
  const int64_t rows = 1024, columns = state.range(0);
  Tensor x = SpreadTensor({rows, columns});
  std::vector<float> y(x.numel());
  for (auto _ : state) {
    const float* in = x.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = in + r * columns;
      float* out = y.data() + r * columns;
      float max = row[0];
      for (int64_t i = 1; i < columns; ++i) max = std::max(max, row[i]);
      float sum = 0;
      for (int64_t i = 0; i < columns; ++i) {
        out[i] = std::exp(row[i] - max);
        sum += out[i];
      }
      for (int64_t i = 0; i < columns; ++i) out[i] /= sum;
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_SoftmaxRowsPlain)->Arg(10)->Arg(1000);

}  // namespace
}  // namespace scopeflow

BENCHMARK_MAIN();
