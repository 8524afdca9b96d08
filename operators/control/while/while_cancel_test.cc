// Cancellation and deadlines of runs (framework/run_cancellation.h): a loop
// that would run for hours stops within milliseconds of Cancel or of its
// deadline, with the status saying which, and the executor runs on after.
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "framework/run_cancellation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/control/while/counter_net.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class WhileCancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The loop may run for as long as it is let (its default stops it at
    // a million iterations).
    std::string blocks = kCounterLoopBlocks;
    const std::string sub_block = "attrs { name: \"sub_block\" block_idx: 1 }";
    blocks.replace(blocks.find(sub_block), sub_block.size(),
                   sub_block + " attrs { name: \"max_iterations\" i: 2147483647 }");
    absl::StatusOr<NetDef> net =
        ParseNetText("format_version: 1 name: \"loop\" " + blocks);
    ASSERT_TRUE(net.ok()) << net.status();
    absl::StatusOr<PreparedNet> prepared = executor_.Prepare(*net, 0, CPUPlace());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    prepared_.emplace(*std::move(prepared));
  }

  absl::StatusOr<std::vector<Tensor>> Count(
      int64_t n, const RunCancellation* cancellation) {
    const std::vector<Feed> feeds = {{"n", MakeTensor<int64_t>({1}, {n})}};
    const std::vector<std::string> fetches = {"s"};
    return executor_.Run(*prepared_, scope_, feeds, fetches,
                         /*profile=*/nullptr, cancellation);
  }

  Executor executor_;
  std::optional<PreparedNet> prepared_;
  Scope scope_;
};

// 10^12 iterations: hours, unless stopped.
constexpr int64_t kForever = 1'000'000'000'000;

TEST_F(WhileCancelTest, UncancelledRunsToTheEnd) {
  RunCancellation cancellation;
  absl::StatusOr<std::vector<Tensor>> out = Count(100, &cancellation);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(5050));
}

TEST_F(WhileCancelTest, CancelledBeforeTheRunStopsAtTheFirstOp) {
  RunCancellation cancellation;
  cancellation.Cancel();
  absl::StatusOr<std::vector<Tensor>> out = Count(100, &cancellation);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(out.status().message(),
              HasSubstr("the run was cancelled; stopped before op "));
  EXPECT_THAT(out.status().message(), HasSubstr(", step 1 of "));
}

TEST_F(WhileCancelTest, CancelStopsALoopWithinMilliseconds) {
  RunCancellation cancellation;
  Clock::time_point cancelled_at;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cancelled_at = Clock::now();
    cancellation.Cancel();
  });
  absl::StatusOr<std::vector<Tensor>> out = Count(kForever, &cancellation);
  const Clock::time_point stopped_at = Clock::now();
  canceller.join();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
  // Stopped inside the loop's body, naming the while op around it.
  EXPECT_THAT(out.status().message(), HasSubstr("(while): iteration "));
  // Bounded loosely: the machine running the tests may be loaded.
  EXPECT_LT(stopped_at - cancelled_at, std::chrono::milliseconds(500));

  // The executor and its run scopes serve the next run as before.
  absl::StatusOr<std::vector<Tensor>> again = Count(4, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(Values<int64_t>((*again)[0]), ElementsAre(10));
}

TEST_F(WhileCancelTest, DeadlineStopsALoop) {
  const Clock::time_point start = Clock::now();
  RunCancellation cancellation(start + std::chrono::milliseconds(20));
  absl::StatusOr<std::vector<Tensor>> out = Count(kForever, &cancellation);
  const Clock::duration took = Clock::now() - start;
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(),
              HasSubstr("the run passed its deadline; stopped before op"));
  EXPECT_GE(took, std::chrono::milliseconds(20));
  EXPECT_LT(took, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace scopeflow
