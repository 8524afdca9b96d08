// Executor::Run with an OpObserver: told after each op of the block, in
// order, with that op's outputs written; an observer's error stops the run.
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/relu_softmax_net.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;


// Records each op's position and the values its first output holds, and
// keeps a view of "xw".
class Recorder final : public OpObserver {
 public:
  absl::Status AfterOp(const PreparedNet& plan, size_t position,
                       absl::Span<Tensor* const> tensors) override {
    plans.push_back(&plan);
    positions.push_back(position);
    const int xw = plan.VarIndex("xw");
    for (const std::vector<int>& slot : plan.ops()[position].outputs) {
      for (int v : slot) {
        EXPECT_TRUE(tensors[v]->initialized())
            << plan.var_names()[v] << " after op " << position;
        if (v == xw) xw_view = *tensors[xw];
      }
    }
    if (position == fail_after) {
      return absl::AbortedError("the observer stopped it");
    }
    return absl::OkStatus();
  }

  std::vector<const PreparedNet*> plans;
  std::vector<size_t> positions;
  Tensor xw_view;
  size_t fail_after = 99;
};

std::vector<Feed> Feeds() {
  return {{"x", MakeTensor<float>({2, 3}, {1, 0, 0, 0, 1, 1})},
          {"w", MakeTensor<float>({3, 2}, {1, -2, 3, 4, 5, 6})}};
}

TEST(OpObserverTest, ToldAfterEachOpInOrder) {
  absl::StatusOr<NetDef> net = ParseNetText(kReluSoftmaxNet);
  ASSERT_TRUE(net.ok()) << net.status();
  const Executor executor(ExecutorOptions::AsWritten());
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(*net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  Recorder recorder;
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, Feeds(), {"xw", "out"}, recorder);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(recorder.positions, ElementsAre(0, 1, 2));
  for (const PreparedNet* plan : recorder.plans) {
    EXPECT_EQ(plan, &*prepared);
  }
  // The view taken after the matmul holds what the run fetched: x w.
  ASSERT_TRUE(recorder.xw_view.initialized());
  EXPECT_EQ(recorder.xw_view.data<float>(), (*out)[0].data<float>());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, -2, 8, 10));
}

// With Prepare's passes on, the observer is told about the plan the run
// steps through.
TEST(OpObserverTest, ToldAboutThePlanTheRunStepsThrough) {
  absl::StatusOr<NetDef> net = ParseNetText(kReluSoftmaxNet);
  ASSERT_TRUE(net.ok()) << net.status();
  const Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(*net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  Recorder recorder;
  const std::vector<std::string> fetches = {"xw", "out"};
  ASSERT_TRUE(executor.Run(*prepared, scope, Feeds(), fetches, recorder).ok());
  const PreparedNet& plan = prepared->PlanFor(fetches);
  ASSERT_EQ(recorder.positions.size(), plan.ops().size());
  for (size_t i = 0; i < recorder.positions.size(); ++i) {
    EXPECT_EQ(recorder.positions[i], i);
    EXPECT_EQ(recorder.plans[i], &plan);
  }
}

TEST(OpObserverTest, AnErrorStopsTheRun) {
  absl::StatusOr<NetDef> net = ParseNetText(kReluSoftmaxNet);
  ASSERT_TRUE(net.ok()) << net.status();
  const Executor executor(ExecutorOptions::AsWritten());
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(*net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  Recorder recorder;
  recorder.fail_after = 1;
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, Feeds(), {"out"}, recorder);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(out.status().message(), HasSubstr("the observer stopped it"));
  EXPECT_THAT(recorder.positions, ElementsAre(0, 1));
}

}  // namespace
}  // namespace scopeflow
