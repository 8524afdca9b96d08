// relu, exact gelu and softmax on large float32 inputs: through the
// executor as a net runs them, and softmax's row loops against the plain loops they replace.
//   bazel run //operators/activation:activation_benchmark
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
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

// Runs op `type`, prepared once, per iteration: input slot i reads
// variable "x<i>", fed inputs[i].second; the output slot `output` writes
// "y". Items: the first input's elements; bytes: those of the inputs read
// and the output written.
void RunOpBenchmark(benchmark::State& state, const std::string& type,
                    const std::vector<std::pair<std::string, Tensor>>& inputs,
                    const std::string& output = "Out") {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name(type);
  BlockDef* block = net.add_blocks();
  OpDef* op = block->add_ops();
  op->set_type(type);
  std::vector<Feed> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& [slot, tensor] = inputs[i];
    const std::string name = "x" + std::to_string(i);
    VarDef* var = block->add_vars();
    var->set_name(name);
    var->set_dtype(kFloat32);
    for (int64_t d : tensor.dims()) var->add_shape(d);
    OpSlot* in = op->add_inputs();
    in->set_slot(slot);
    in->add_vars(name);
    feeds.push_back({name, tensor});
  }
  OpSlot* out = op->add_outputs();
  out->set_slot(output);
  out->add_vars("y");
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  Scope scope;
  const std::vector<std::string> fetches = {"y"};
  for (auto _ : state) {
    auto result = executor.Run(*prepared, scope, feeds, fetches);
    benchmark::DoNotOptimize(result);
  }
  const int64_t n = inputs[0].second.numel();
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * (inputs.size() + 1) *
                          sizeof(float));
}

// relu of a [n] tensor.
void BM_ReluOp(benchmark::State& state) {
  RunOpBenchmark(state, "relu", {{"X", SpreadTensor({state.range(0)})}});
}
BENCHMARK(BM_ReluOp)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// Exact (erf) gelu of a [n] tensor: vector math whose body is large, so
// that its loop runs on the widest vectors only where the op is inlined
// into it (vector_loops.h's SF_VECTOR_LOOPS).
void BM_GeluOp(benchmark::State& state) {
  RunOpBenchmark(state, "gelu", {{"X", SpreadTensor({state.range(0)})}});
}
BENCHMARK(BM_GeluOp)->Arg(1 << 16)->Arg(1 << 20);

// relu_grad of a [n] tensor: from Out ("x") and Out@GRAD (the same
// values), into X@GRAD.
void BM_ReluGradOp(benchmark::State& state) {
  const Tensor x = SpreadTensor({state.range(0)});
  RunOpBenchmark(state, "relu_grad", {{"Out", x}, {"Out@GRAD", x}}, "X@GRAD");
}
BENCHMARK(BM_ReluGradOp)->Arg(1 << 16)->Arg(1 << 20);

// softmax over the last axis of [rows, columns].
void BM_SoftmaxOp(benchmark::State& state) {
  RunOpBenchmark(state, "softmax",
                 {{"X", SpreadTensor({state.range(0), state.range(1)})}});
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
