// Times the int32-accumulating product of matmul_integer and qlinear_matmul
// (integer_matmul.h: uint8 activations against int8 weights with zero
// points), through oneDNN's int8 matmul and by the portable loops, against
// the float32 Gemm of matmul on the same shapes: a square
// 256 product and the feed-forward layer of a small transformer (128
// tokens, 256 -> 1024). Interleaved, at 1 thread:
//   OMP_NUM_THREADS=1 bazel run -c opt \
//     //operators/quantization:integer_matmul_benchmark -- \
//     --benchmark_enable_random_interleaving=true \
//     --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "framework/tensor.h"
#include "operators/gemm.h"
#include "operators/quantization/integer_conv.h"
#include "operators/quantization/integer_matmul.h"

namespace scopeflow {
namespace {

struct Shape {
  int64_t m, k, n;
};

template <typename T>
Tensor RandomTensor(Dims dims, uint32_t seed) {
  Tensor tensor;
  if (!tensor.Allocate(CPUPlace(), DataTypeOf<T>(), dims).ok()) return tensor;
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.data<T>()[i] = static_cast<T>(dist(engine));
  }
  return tensor;
}

void Report(benchmark::State& state, const Shape& s) {
  state.counters["GOPS"] =
      benchmark::Counter(2e-9 * static_cast<double>(s.m * s.k * s.n),
                         benchmark::Counter::kIsIterationInvariantRate);
}

template <bool kLoop>
void IntegerProduct(benchmark::State& state, Shape s) {
  const Tensor a = RandomTensor<uint8_t>({s.m, s.k}, 1);
  const Tensor b = RandomTensor<int8_t>({s.k, s.n}, 2);
  const IntegerMatmulSizes sizes =
      IntegerMatmulSizesOf(a.dims(), b.dims(), {s.m, s.n});
  const std::vector<int32_t> a_zero(s.m, 128), b_zero(s.n, 0);
  std::vector<int32_t> acc(s.m * s.n);
  for (auto _ : state) {
    if (kLoop) {
      IntegerMatmulLoop(a, b, a_zero, b_zero, sizes, acc.data());
    } else {
      IntegerMatmul(a, b, a_zero, b_zero, sizes, acc.data());
    }
    benchmark::DoNotOptimize(acc.data());
  }
  Report(state, s);
}

void FloatProduct(benchmark::State& state, Shape s) {
  std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n);
  for (auto _ : state) {
    const absl::Status status =
        Gemm(false, false, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n,
             0.0f, c.data(), s.n);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(c.data());
  }
  Report(state, s);
}

// conv_integer's accumulation of a 3x3 convolution, 64 -> 64 channels
// over 28x28, padded: int8 filters with one zero point (the product through
// oneDNN) against the same with a zero point per filter (the loops).
void IntegerConvolution(benchmark::State& state, bool one_zero_point) {
  const Tensor x = RandomTensor<uint8_t>({1, 64, 28, 28}, 3);
  const Tensor w = RandomTensor<int8_t>({64, 64, 3, 3}, 4);
  ConvWindow window;
  window.strides = {1, 1};
  window.dilations = {1, 1};
  window.pads_before = {1, 1};
  window.pads_after = {1, 1};
  std::vector<int32_t> w_zero(64, 0);
  if (!one_zero_point) w_zero[1] = 1;
  const Dims out = {1, 64, 28, 28};
  std::vector<int32_t> acc(64 * 28 * 28);
  for (auto _ : state) {
    IntegerConv(x, w, 128, w_zero, window, out, acc.data());
    benchmark::DoNotOptimize(acc.data());
  }
  Report(state, {28 * 28, 64 * 9, 64});
}

const int kRegistered = [] {
  benchmark::RegisterBenchmark("conv_integer_onednn/3x3_64x28x28",
                               &IntegerConvolution, true);
  benchmark::RegisterBenchmark("conv_integer_loop/3x3_64x28x28",
                               &IntegerConvolution, false);
  for (const auto& [name, shape] :
       {std::pair<const char*, Shape>{"square_256", {256, 256, 256}},
        std::pair<const char*, Shape>{"ffn_128x256_by_256x1024",
                                      {128, 256, 1024}}}) {
    benchmark::RegisterBenchmark(
        (std::string("integer_u8s8_onednn/") + name).c_str(),
        &IntegerProduct<false>, shape);
    benchmark::RegisterBenchmark(
        (std::string("integer_u8s8_loop/") + name).c_str(),
        &IntegerProduct<true>, shape);
    benchmark::RegisterBenchmark((std::string("float32_gemm/") + name).c_str(),
                                 FloatProduct, shape);
  }
  return 0;
}();

}  // namespace
}  // namespace scopeflow
