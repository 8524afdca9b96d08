// What the C API adds to a run: Predictor::Run against sf_predictor_run
// (library-owned outputs) and sf_predictor_run_into (the caller's output
// buffer: one more copy of the outputs) on the MLP of examples/mlp.
//   OMP_NUM_THREADS=1 bazel run --config=cpu_only //c_api:c_api_benchmark --
//       --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "c_api/c_api_test_util.h"
#include "c_api/scopeflow_c_api.h"
#include "framework/serving/mlp_fixture.h"
#include "framework/serving/predictor.h"
#include "platform/host_memory.h"

namespace scopeflow {
namespace {

const Predictor& SharedPredictor() {
  static Predictor* const predictor = [] {
    absl::StatusOr<Predictor> loaded = LoadMlp();
    if (!loaded.ok()) std::abort();
    return new Predictor(*std::move(loaded));
  }();
  return *predictor;
}

const sf_predictor* SharedCPredictor() {
  static sf_predictor* const predictor = [] {
    sf_predictor* loaded = nullptr;
    if (sf_predictor_load(kMlpNet, c_api_testing::MlpParamsPath().c_str(),
                          nullptr, &loaded) != nullptr) {
      std::abort();
    }
    return loaded;
  }();
  return predictor;
}

void BM_PredictorRun(benchmark::State& state) {
  const std::vector<Feed> feeds = {
      {"image", MlpInput(static_cast<int>(state.range(0)), 1)}};
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out = SharedPredictor().Run(feeds);
    if (!out.ok()) {
      state.SkipWithError("Run failed");
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PredictorRun)->Arg(1)->Arg(64)->UseRealTime();

// The input in the caller's memory, viewed by sf_tensor_wrap.
class CInput {
 public:
  explicit CInput(int batch) : image_(MlpInput(batch, 1)) {
    const int64_t dims[] = {batch, 64};
    if (sf_tensor_wrap(image_.data<float>(), image_.nbytes(), SF_FLOAT32, dims,
                       2, &tensor_) != nullptr) {
      std::abort();
    }
  }
  ~CInput() { sf_tensor_free(tensor_); }
  const sf_tensor* const* tensors() const { return &tensor_; }

 private:
  Tensor image_;
  sf_tensor* tensor_ = nullptr;
};

const char* const kNames[] = {"image"};

void BM_CApiRun(benchmark::State& state) {
  const CInput input(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    sf_tensor* output = nullptr;
    if (sf_predictor_run(SharedCPredictor(), kNames, input.tensors(), 1,
                         &output, 1) != nullptr) {
      state.SkipWithError("sf_predictor_run failed");
      break;
    }
    sf_tensor_free(output);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CApiRun)->Arg(1)->Arg(64)->UseRealTime();

void BM_CApiRunInto(benchmark::State& state) {
  const CInput input(static_cast<int>(state.range(0)));
  std::vector<float> probabilities(state.range(0) * 10);
  const int64_t dims[] = {state.range(0), 10};
  sf_tensor* output = nullptr;
  if (sf_tensor_wrap(probabilities.data(), probabilities.size() * 4, SF_FLOAT32,
                     dims, 2, &output) != nullptr) {
    std::abort();
  }
  for (auto _ : state) {
    if (sf_predictor_run_into(SharedCPredictor(), kNames, input.tensors(), 1,
                              &output, 1) != nullptr) {
      state.SkipWithError("sf_predictor_run_into failed");
      break;
    }
  }
  sf_tensor_free(output);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CApiRunInto)->Arg(1)->Arg(64)->UseRealTime();

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  scopeflow::KeepFreedHostMemoryForReuse();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::remove(scopeflow::c_api_testing::MlpParamsPath().c_str());
  return 0;
}
