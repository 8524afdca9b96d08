// Times the batched products of matmul on every path of BatchedGemm
// (batched_gemm.h) for the shapes of a transformer's attention (batch 8, 4
// heads, 128 tokens, 64 per head) and of its feed-forward layer: the scores
// Q K^T, the weighted values P V, the gradients' products with a stored
// transpose on either side, the products of short sequences, and a rank-3
// activation against a rank-2 weight, which matmul folds into one Gemm of
// 1024 rows. old_per_batch is
// the path matmul took before oneDNN's matmul primitive: one Gemm per
// batch in turn. At 1 and 2 threads, the paths interleaved:
//   OMP_NUM_THREADS=1 bazel run //operators:matmul_benchmark -- \
//     --benchmark_enable_random_interleaving=true \
//     --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "operators/batched_gemm.h"
#include "operators/gemm.h"

namespace scopeflow {
namespace {

std::vector<float> Random(int64_t size, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(size);
  std::generate(values.begin(), values.end(), [&] { return dist(engine); });
  return values;
}

struct Case {
  const char* name;
  BatchedGemmShape shape;
};

std::vector<Case> Cases() {
  return {
      {"scores_QKt_8x4x128x64_by_8x4x64x128",
       {{8, 4, 128, 64}, {8, 4, 64, 128}, {8, 4, 128, 128}}},
      {"values_PV_8x4x128x128_by_8x4x128x64",
       {{8, 4, 128, 128}, {8, 4, 128, 64}, {8, 4, 128, 64}}},
      // dP = dOut V^T: V stored [128 x 64] read transposed.
      {"grad_dOut_Vt_8x4x128x64_by_8x4x128x64T",
       {{8, 4, 128, 64}, {8, 4, 128, 64}, {8, 4, 128, 128}, false, true}},
      // dV = P^T dOut: P stored [128 x 128] read transposed.
      {"grad_Pt_dOut_8x4x128x128T_by_8x4x128x64",
       {{8, 4, 128, 128}, {8, 4, 128, 64}, {8, 4, 128, 64}, true, false}},
      // Short sequences: products too small to spread over threads one by
      // one.
      {"small_8x4x16x16_by_8x4x16x16",
       {{8, 4, 16, 16}, {8, 4, 16, 16}, {8, 4, 16, 16}}},
      {"ffn_8x128x256_by_256x1024", {{8, 128, 256}, {256, 1024}, {8, 128, 1024}}},
  };
}

// Multiply-adds of one call, for the rate counter.
double MultiplyAdds(const BatchedGemmShape& s) {
  const int64_t k = s.transpose_a ? s.a[s.a.size() - 2] : s.a.back();
  return static_cast<double>(NumElements(s.c)) * static_cast<double>(k);
}

void Report(benchmark::State& state, const BatchedGemmShape& shape) {
  state.counters["GFLOPS"] = benchmark::Counter(
      2e-9 * MultiplyAdds(shape), benchmark::Counter::kIsIterationInvariantRate);
}

void RunPath(benchmark::State& state, const BatchedGemmShape& shape,
             BatchedGemmPath path) {
  const std::vector<float> a = Random(NumElements(shape.a), 1);
  const std::vector<float> b = Random(NumElements(shape.b), 2);
  std::vector<float> c(NumElements(shape.c));
  for (auto _ : state) {
    const absl::Status status =
        BatchedGemm(shape, 1.0f, a.data(), b.data(), 0.0f, c.data(), path);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(c.data());
  }
  Report(state, shape);
}

// A rank-3 X against a rank-2 Y as matmul runs it: one Gemm of every row
// of the batch.
void RunFolded(benchmark::State& state, const BatchedGemmShape& shape) {
  const std::vector<float> a = Random(NumElements(shape.a), 1);
  const std::vector<float> b = Random(NumElements(shape.b), 2);
  std::vector<float> c(NumElements(shape.c));
  const int64_t k = shape.a.back(), n = shape.b.back();
  const int64_t rows = NumElements(shape.a) / k;
  for (auto _ : state) {
    const absl::Status status = Gemm(false, false, rows, n, k, 1.0f, a.data(),
                                     k, b.data(), n, 0.0f, c.data(), n);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(c.data());
  }
  Report(state, shape);
}

const bool kRegistered = [] {
  const std::pair<const char*, BatchedGemmPath> paths[] = {
      {"old_per_batch", BatchedGemmPath::kGemmPerBatch},
      {"threads_over_batch", BatchedGemmPath::kGemmThreadsOverBatch},
      {"onednn_matmul", BatchedGemmPath::kOneDnnMatmul},
      {"chosen", BatchedGemmPath::kChoose},
  };
  for (const Case& c : Cases()) {
    for (const auto& [path_name, path] : paths) {
      benchmark::RegisterBenchmark(
          absl::StrCat("BM_Matmul/", c.name, "/", path_name).c_str(),
          [shape = c.shape, path = path](benchmark::State& state) {
            RunPath(state, shape, path);
          })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
    if (c.shape.b.size() == 2) {
      benchmark::RegisterBenchmark(
          absl::StrCat("BM_Matmul/", c.name, "/folded_one_gemm").c_str(),
          [shape = c.shape](benchmark::State& state) {
            RunFolded(state, shape);
          })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  return true;
}();

}  // namespace
}  // namespace scopeflow
