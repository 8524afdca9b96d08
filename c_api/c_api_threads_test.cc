// Many threads on one sf_predictor handle (and on clones of it), each with
// its own batch size and inputs, every run checked against the
// probabilities computed by hand.
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "c_api/c_api_test_util.h"
#include "c_api/scopeflow_c_api.h"
#include "framework/serving/mlp_fixture.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 50;

// Runs `predictor_of(t)` from kThreads threads; returns the runs that
// failed or differed from the reference by more than 1e-5.
template <typename PredictorOf>
int RunThreads(PredictorOf predictor_of) {
  absl::StatusOr<std::unique_ptr<Scope>> parameters = MlpParameters();
  EXPECT_TRUE(parameters.ok());
  std::vector<Tensor> images;
  std::vector<std::vector<double>> expected;
  for (int t = 0; t < kThreads; ++t) {
    images.push_back(MlpInput(1 + t % 4, t));
    expected.push_back(ReferenceMlp(**parameters, images.back()));
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const sf_predictor* predictor = predictor_of(t);
      const int64_t dims[] = {images[t].dim(0), 64};
      sf_tensor* image = nullptr;
      if (sf_tensor_wrap(images[t].data<float>(), images[t].nbytes(),
                         SF_FLOAT32, dims, 2, &image) != nullptr) {
        bad += kRunsPerThread;
        return;
      }
      const char* name = "image";
      for (int i = 0; i < kRunsPerThread; ++i) {
        sf_tensor* output = nullptr;
        sf_status* status =
            sf_predictor_run(predictor, &name, &image, 1, &output, 1);
        bool same =
            status == nullptr && sf_tensor_num_elements(output) ==
                                     static_cast<int64_t>(expected[t].size());
        sf_status_free(status);
        const auto* values =
            static_cast<const float*>(sf_tensor_const_data(output));
        for (size_t j = 0; same && j < expected[t].size(); ++j) {
          same = std::abs(values[j] - expected[t][j]) <= 1e-5;
        }
        if (!same) ++bad;
        sf_tensor_free(output);
      }
      sf_tensor_free(image);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return bad.load();
}

TEST(CApiThreadsTest, ManyThreadsOnOneHandle) {
  sf_predictor* predictor = c_api_testing::LoadMlp();
  ASSERT_NE(predictor, nullptr);
  EXPECT_EQ(RunThreads([&](int) { return predictor; }), 0);
  sf_predictor_free(predictor);
}

TEST(CApiThreadsTest, ManyThreadsOnClones) {
  sf_predictor* predictor = c_api_testing::LoadMlp();
  ASSERT_NE(predictor, nullptr);
  std::vector<sf_predictor*> clones(kThreads, nullptr);
  for (sf_predictor*& clone : clones) {
    ASSERT_TRUE(c_api_testing::IsOk(sf_predictor_clone(predictor, &clone)));
  }
  sf_predictor_free(predictor);
  EXPECT_EQ(RunThreads([&](int t) { return clones[t]; }), 0);
  for (sf_predictor* clone : clones) sf_predictor_free(clone);
}

}  // namespace
}  // namespace scopeflow
