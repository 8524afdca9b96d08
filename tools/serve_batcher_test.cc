// The batcher on the MLP: batched answers equal unbatched ones, batches
// hold several requests and no more rows than allowed, a request that
// cannot join fails (or succeeds) alone, a full queue refuses, and a
// request cancelled while queued does not run; the timing each request
// gets for the metrics.
#include "tools/serve_batcher.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

void ExpectSameElements(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dims(), b.dims());
  for (int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  }
}

class ServeBatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Predictor> mlp = LoadMlp();
    ASSERT_TRUE(mlp.ok()) << mlp.status();
    mlp_.emplace(*std::move(mlp));
  }

  // Runs `inputs[i]` through `batcher` on a thread each, all at once.
  std::vector<absl::StatusOr<std::vector<Tensor>>> RunTogether(
      ServeBatcher& batcher, const std::vector<std::vector<Feed>>& inputs) {
    std::vector<absl::StatusOr<std::vector<Tensor>>> results(
        inputs.size(), absl::UnknownError("not run"));
    std::vector<std::thread> threads;
    for (size_t i = 0; i < inputs.size(); ++i) {
      threads.emplace_back([&, i] {
        results[i] = batcher.Run(*mlp_, inputs[i], nullptr);
      });
    }
    for (std::thread& thread : threads) thread.join();
    return results;
  }

  Tensor Alone(const Tensor& image) {
    absl::StatusOr<std::vector<Tensor>> out = mlp_->Run({Feed{"image", image}});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  }

  std::optional<Predictor> mlp_;
};

BatchingOptions Batching(int max_batch_size, int64_t timeout_micros) {
  BatchingOptions options;
  options.max_batch_size = max_batch_size;
  options.batch_timeout_micros = timeout_micros;
  return options;
}

TEST_F(ServeBatcherTest, BatchedAnswersEqualUnbatchedOnes) {
  ServeBatcher batcher(Batching(64, 200'000));
  std::vector<std::vector<Feed>> inputs;
  for (int i = 0; i < 12; ++i) {
    inputs.push_back({Feed{"image", MlpInput(1 + i % 3, i)}});
  }
  const auto results = RunTogether(batcher, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    ASSERT_EQ(results[i]->size(), 1u);
    ExpectSameElements((*results[i])[0], Alone(inputs[i][0].tensor));
  }
  // 24 rows: every request waited up to 200 ms for the others.
  EXPECT_EQ(batcher.rows_run(), 24);
  EXPECT_LT(batcher.batches_run(), 12);
}

TEST_F(ServeBatcherTest, BatchesHoldAtMostMaxBatchSizeRows) {
  ServeBatcher batcher(Batching(4, 200'000));
  std::vector<std::vector<Feed>> inputs;
  for (int i = 0; i < 8; ++i) inputs.push_back({Feed{"image", MlpInput(1, i)}});
  const auto results = RunTogether(batcher, inputs);
  for (const auto& result : results) ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(batcher.rows_run(), 8);
  EXPECT_GE(batcher.batches_run(), 2);
}

TEST_F(ServeBatcherTest, BadRequestsFailAloneAndTheOthersSucceed) {
  ServeBatcher batcher(Batching(64, 100'000));
  Tensor ints;
  ASSERT_TRUE(ints.Allocate(CPUPlace(), kInt32, {1, 64}).ok());
  // A [1, 3] image: the wrong width.
  Tensor narrow;
  ASSERT_TRUE(narrow.Allocate(CPUPlace(), kFloat32, {1, 3}).ok());
  const std::vector<std::vector<Feed>> inputs = {
      {Feed{"image", MlpInput(1, 0)}}, {Feed{"image", narrow}},
      {Feed{"image", MlpInput(2, 2)}}, {Feed{"wrong", MlpInput(1, 3)}},
      {Feed{"image", ints}},           {Feed{"image", MlpInput(1, 5)}},
  };
  const auto results = RunTogether(batcher, inputs);
  EXPECT_THAT(results[1].status().message(),
              HasSubstr("input \"image\": expected shape [-1, 64], got [1, 3]"));
  EXPECT_THAT(results[3].status().message(), HasSubstr("\"wrong\""));
  EXPECT_THAT(results[4].status().message(),
              HasSubstr("expected dtype float32, got int32"));
  for (int good : {0, 2, 5}) {
    ASSERT_TRUE(results[good].ok()) << results[good].status();
    ExpectSameElements((*results[good])[0], Alone(inputs[good][0].tensor));
  }
  EXPECT_EQ(batcher.rows_run(), 4);
}

TEST_F(ServeBatcherTest, MoreRowsThanABatchRunAlone) {
  ServeBatcher batcher(Batching(2, 1000));
  const Tensor image = MlpInput(5, 7);
  absl::StatusOr<std::vector<Tensor>> out =
      batcher.Run(*mlp_, {Feed{"image", image}}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSameElements((*out)[0], Alone(image));
  EXPECT_EQ(batcher.batches_run(), 0);
}

TEST_F(ServeBatcherTest, FullQueueRefusesWithUnavailable) {
  BatchingOptions options = Batching(64, 300'000);
  options.max_queued_requests = 1;
  ServeBatcher batcher(options);
  absl::StatusOr<std::vector<Tensor>> first = absl::UnknownError("not run");
  std::thread waiting(
      [&] { first = batcher.Run(*mlp_, {Feed{"image", MlpInput(1, 0)}}, nullptr); });
  // The first request waits in the queue for 300 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  absl::StatusOr<std::vector<Tensor>> second =
      batcher.Run(*mlp_, {Feed{"image", MlpInput(1, 1)}}, nullptr);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(),
              HasSubstr("has 1 requests queued for batching, the limit"));
  waiting.join();
  EXPECT_TRUE(first.ok()) << first.status();
}

TEST_F(ServeBatcherTest, CancelledWhileQueuedDoesNotRun) {
  ServeBatcher batcher(Batching(64, 100'000));
  RunCancellation cancellation;
  cancellation.Cancel();
  absl::StatusOr<std::vector<Tensor>> out =
      batcher.Run(*mlp_, {Feed{"image", MlpInput(1, 0)}}, &cancellation);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(out.status().message(),
              HasSubstr("while queued for a batch; it did not run"));
  EXPECT_EQ(batcher.rows_run(), 0);
}

// A batch waits for others only while one may come: with every request of
// its model admitted already in the batcher, it runs at once.
TEST_F(ServeBatcherTest, RunsAtOnceWhenNoOtherRequestIsOnTheWay) {
  // A minute's timeout: waiting it out would fail the test's time limit.
  ServeBatcher batcher(Batching(64, 60'000'000));
  RequestAdmission admission{AdmissionOptions()};
  auto admitted = admission.Admit("mlp", RequestAdmission::Clock::now(), 0);
  ASSERT_TRUE(admitted.ok());
  RunTiming timing;
  const Tensor image = MlpInput(1, 4);
  absl::StatusOr<std::vector<Tensor>> out =
      batcher.Run(*mlp_, {Feed{"image", image}}, nullptr, &timing, &admission,
                  "mlp");
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSameElements((*out)[0], Alone(image));
  EXPECT_LT(timing.queue_seconds, 10);
  EXPECT_EQ(batcher.batches_run(), 1);

  // With a second request of the model admitted and not yet here, the
  // first waits for it (here, out the 200 ms timeout: it never comes).
  ServeBatcher waiting(Batching(64, 200'000));
  auto second = admission.Admit("mlp", RequestAdmission::Clock::now(), 0);
  ASSERT_TRUE(second.ok());
  out = waiting.Run(*mlp_, {Feed{"image", image}}, nullptr, &timing,
                    &admission, "mlp");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_GE(timing.queue_seconds, 0.2);
}

TEST_F(ServeBatcherTest, OffRunsDirectly) {
  ServeBatcher batcher(Batching(0, 1000));
  const Tensor image = MlpInput(3, 1);
  PredictContext context;
  context.batcher = &batcher;
  absl::StatusOr<std::vector<Tensor>> out =
      RunPredictor(*mlp_, {Feed{"image", image}}, context);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSameElements((*out)[0], Alone(image));
  EXPECT_EQ(batcher.batches_run(), 0);
}

// What the metrics get: one request of each run reports it, with the
// requests that run held; each request's queue time covers the batch
// timeout it waited.
TEST_F(ServeBatcherTest, TimingSaysWhichRunComputedEachRequest) {
  constexpr int kRequests = 6;
  ServeBatcher batcher(Batching(64, 100'000));
  std::vector<RunTiming> timings(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] {
      EXPECT_TRUE(batcher
                      .Run(*mlp_, {Feed{"image", MlpInput(1, i)}}, nullptr,
                           &timings[i])
                      .ok());
    });
  }
  for (std::thread& thread : threads) thread.join();
  int runs = 0;
  int requests = 0;
  double oldest_wait = 0;
  for (const RunTiming& timing : timings) {
    EXPECT_GE(timing.batch_requests, 1);
    EXPECT_GE(timing.compute_seconds, 0);
    oldest_wait = std::max(oldest_wait, timing.queue_seconds);
    if (timing.reports_run) {
      ++runs;
      requests += timing.batch_requests;
    }
  }
  EXPECT_EQ(runs, batcher.batches_run());
  EXPECT_EQ(requests, kRequests);
  // 6 rows never fill a batch of 64: its oldest request waited 0.1 s.
  EXPECT_GE(oldest_wait, 0.1);

  // A request that cannot join a batch is a run of its own.
  RunTiming alone;
  EXPECT_FALSE(batcher.Run(*mlp_, {Feed{"image", MlpInput(1, 0)},
                                   Feed{"extra", MlpInput(1, 0)}},
                           nullptr, &alone)
                   .ok());
  EXPECT_EQ(alone.batch_requests, 1);
  EXPECT_TRUE(alone.reports_run);
}

}  // namespace
}  // namespace scopeflow
