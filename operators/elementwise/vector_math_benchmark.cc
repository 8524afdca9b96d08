// vector_math.h's float32 functions on one thread against the scalar libm
// loops they replace, and exp and sigmoid against oneDNN's eltwise
// primitives (the other way to vectorize them), on 65536 floats spread
// over [-10, 10] (kept in L2). Items are elements: the report's
// items_per_second inverted is the time per element.
//   bazel run //operators/elementwise:vector_math_benchmark
#include <cmath>
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "dnnl.hpp"
#include "operators/elementwise/vector_math.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

constexpr int64_t kElements = 65536;

std::vector<float> Spread() {
  std::vector<float> x(kElements);
  for (int64_t i = 0; i < kElements; ++i) {
    x[i] = 10 * std::sin(0.37f * static_cast<float>(i));
  }
  return x;
}

// Each function as the kernels run it: a loop in an SF_WIDEST_VECTORS
// function.
#define SF_VECTOR_LOOP(name, call)                                      \
  SF_WIDEST_VECTORS void name(const float* in, float* out, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) out[i] = call(in[i]);               \
  }
SF_VECTOR_LOOP(VectorExp, vmath::Exp)
SF_VECTOR_LOOP(VectorLog, vmath::Log)
SF_VECTOR_LOOP(VectorSigmoid, vmath::Sigmoid)
SF_VECTOR_LOOP(VectorTanh, vmath::Tanh)
SF_VECTOR_LOOP(VectorErf, vmath::Erf)
SF_VECTOR_LOOP(VectorSoftplus, vmath::Softplus)
#undef SF_VECTOR_LOOP

SF_WIDEST_VECTORS void VectorGelu(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * vmath::NormalCdf(in[i]);
}

// The loops the kernels ran before: one libm call per element.
float ScalarSigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }
float ScalarGelu(float v) { return 0.5f * v * std::erfc(-v * 0.70710678f); }
float ScalarSoftplus(float v) {
  return std::fmax(v, 0.0f) + std::log1p(std::exp(-std::fabs(v)));
}

template <float (*kFn)(float)>
void Scalar(benchmark::State& state) {
  std::vector<float> x = Spread();
  if (state.range(0) == 1) {
    for (float& v : x) v = std::fabs(v) + 1e-3f;  // log's domain.
  }
  std::vector<float> y(kElements);
  for (auto _ : state) {
    for (int64_t i = 0; i < kElements; ++i) y[i] = kFn(x[i]);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}

template <void (*kLoop)(const float*, float*, int64_t)>
void Vector(benchmark::State& state) {
  std::vector<float> x = Spread();
  if (state.range(0) == 1) {
    for (float& v : x) v = std::fabs(v) + 1e-3f;
  }
  std::vector<float> y(kElements);
  for (auto _ : state) {
    kLoop(x.data(), y.data(), kElements);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}

float StdExp(float v) { return std::exp(v); }
float StdLog(float v) { return std::log(v); }
float StdTanh(float v) { return std::tanh(v); }
float StdErf(float v) { return std::erf(v); }

// oneDNN's eltwise forward primitive (inference), made once, on one thread
// (run with OMP_NUM_THREADS=1 for a per-thread comparison).
void OneDnn(benchmark::State& state, dnnl::algorithm algorithm) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc desc({kElements}, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::a);
  std::vector<float> x = Spread();
  std::vector<float> y(kElements);
  dnnl::memory src(desc, engine, x.data());
  dnnl::memory dst(desc, engine, y.data());
  const dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algorithm,
                                  desc, 0.0f, 0.0f),
      engine);
  dnnl::eltwise_forward primitive(pd);
  for (auto _ : state) {
    primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    stream.wait();
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}

BENCHMARK(Scalar<StdExp>)->Name("exp/std")->Arg(0);
BENCHMARK(Vector<VectorExp>)->Name("exp/vector")->Arg(0);
BENCHMARK_CAPTURE(OneDnn, exp, dnnl::algorithm::eltwise_exp)
    ->Name("exp/onednn");
BENCHMARK(Scalar<ScalarSigmoid>)->Name("sigmoid/std")->Arg(0);
BENCHMARK(Vector<VectorSigmoid>)->Name("sigmoid/vector")->Arg(0);
BENCHMARK_CAPTURE(OneDnn, sigmoid, dnnl::algorithm::eltwise_logistic)
    ->Name("sigmoid/onednn");
BENCHMARK(Scalar<StdLog>)->Name("log/std")->Arg(1);
BENCHMARK(Vector<VectorLog>)->Name("log/vector")->Arg(1);
BENCHMARK(Scalar<StdTanh>)->Name("tanh/std")->Arg(0);
BENCHMARK(Vector<VectorTanh>)->Name("tanh/vector")->Arg(0);
BENCHMARK(Scalar<StdErf>)->Name("erf/std")->Arg(0);
BENCHMARK(Vector<VectorErf>)->Name("erf/vector")->Arg(0);
BENCHMARK(Scalar<ScalarGelu>)->Name("gelu/std")->Arg(0);
BENCHMARK(Vector<VectorGelu>)->Name("gelu/vector")->Arg(0);
BENCHMARK(Scalar<ScalarSoftplus>)->Name("softplus/std")->Arg(0);
BENCHMARK(Vector<VectorSoftplus>)->Name("softplus/vector")->Arg(0);

}  // namespace
}  // namespace scopeflow

BENCHMARK_MAIN();
