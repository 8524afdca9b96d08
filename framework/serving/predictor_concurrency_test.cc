// Many threads running one Predictor (and clones of it, made and dropped
// while others run) get exactly the single-threaded results. Runs under
// ThreadSanitizer in tools/test.sh.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "framework/serving/mlp_fixture.h"
#include "framework/serving/predictor.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 1000;
constexpr int kDistinctInputs = 16;

struct Case {
  Tensor image;
  Tensor expected;
};

// Inputs of batch 1 to 4 and their single-threaded results.
std::vector<Case> SingleThreadedCases(const Predictor& predictor) {
  std::vector<Case> cases;
  for (int i = 0; i < kDistinctInputs; ++i) {
    Case c{MlpInput(1 + i % 4, i), Tensor()};
    absl::StatusOr<std::vector<Tensor>> out =
        predictor.Run({Feed{"image", c.image}});
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) c.expected = (*out)[0];
    cases.push_back(c);
  }
  return cases;
}

bool SameElements(const Tensor& a, const Tensor& b) {
  return a.dims() == b.dims() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(PredictorConcurrencyTest, ThreadsGetTheSingleThreadedResults) {
  absl::StatusOr<Predictor> predictor = LoadMlp();
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  const std::vector<Case> cases = SingleThreadedCases(*predictor);

  std::atomic<int> mismatches{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRunsPerThread; ++i) {
        const Case& c = cases[(t * 7 + i) % kDistinctInputs];
        const std::vector<Feed> feeds = {{"image", c.image}};
        absl::StatusOr<std::vector<Tensor>> out = predictor->Run(feeds);
        if (!out.ok()) {
          failures.fetch_add(1);
        } else if (!SameElements((*out)[0], c.expected)) {
          mismatches.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  // One run scope per run that overlapped, never more.
  EXPECT_GE(predictor->pooled_scopes(), 1);
  EXPECT_LE(predictor->pooled_scopes(), kThreads);
  EXPECT_EQ(predictor->parameters().num_kids(), predictor->pooled_scopes());
}

TEST(PredictorConcurrencyTest, ClonesComeAndGoWhileOthersRun) {
  absl::StatusOr<Predictor> predictor = LoadMlp();
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  const std::vector<Case> cases = SingleThreadedCases(*predictor);

  std::atomic<int> bad{0};
  auto run_some = [&](const Predictor& p, int seed, int runs) {
    for (int i = 0; i < runs; ++i) {
      const Case& c = cases[(seed + i) % kDistinctInputs];
      absl::StatusOr<std::vector<Tensor>> out = p.Run({Feed{"image", c.image}});
      if (!out.ok() || !SameElements((*out)[0], c.expected)) bad.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (t % 2 == 0) {
        run_some(*predictor, t, 200);
        return;
      }
      for (int round = 0; round < 20; ++round) {
        Predictor clone = predictor->Clone();
        run_some(clone, t + round, 10);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bad.load(), 0);
  // Every clone's scopes went with it.
  EXPECT_EQ(predictor->parameters().num_kids(), predictor->pooled_scopes());
}

}  // namespace
}  // namespace scopeflow
