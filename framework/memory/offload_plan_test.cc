#include "framework/memory/offload_plan.h"

#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"offload\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

// a = x w1; b = a w2; c = b w1 (elementwise); every variable 16 bytes.
std::string ChainNet(const std::string& x_shape) {
  return R"pb(
    blocks {
      vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: )pb" +
         x_shape + R"pb( }
      vars { name: "w1" dtype: DATA_TYPE_FLOAT32 shape: [ 4 ] persistable: true }
      vars { name: "w2" dtype: DATA_TYPE_FLOAT32 shape: [ 4 ] persistable: true }
      ops {
        type: "mul"
        inputs { slot: "X" vars: "x" }
        inputs { slot: "Y" vars: "w1" }
        outputs { slot: "Out" vars: "a" }
      }
      ops {
        type: "mul"
        inputs { slot: "X" vars: "a" }
        inputs { slot: "Y" vars: "w2" }
        outputs { slot: "Out" vars: "b" }
      }
      ops {
        type: "mul"
        inputs { slot: "X" vars: "b" }
        inputs { slot: "Y" vars: "w1" }
        outputs { slot: "Out" vars: "c" }
      }
    })pb";
}

class OffloadPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PreparedNet> prepared =
        Executor(ExecutorOptions::AsWritten())
            .Prepare(Net(ChainNet("[ 4 ]")), 0, CPUPlace());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    prepared_ = std::make_unique<PreparedNet>(*std::move(prepared));
  }

  OffloadAction Act(OffloadAction::Kind kind, const std::string& name,
                    bool prefetch = false) const {
    return {kind, prepared_->VarIndex(name), 16, prefetch};
  }
  std::vector<int> Vars(const std::vector<std::string>& names) const {
    std::vector<int> vars;
    for (const std::string& name : names) {
      vars.push_back(prepared_->VarIndex(name));
    }
    std::sort(vars.begin(), vars.end());
    return vars;
  }

  std::unique_ptr<PreparedNet> prepared_;
};

using K = OffloadAction;

// By hand, with room for one op's three variables: each op evicts the
// weight used furthest ahead (w1 at op 1, used again at op 2; w2 at op 2,
// never used again), both clean, so dropped; x, a and b die after their
// last reader; c, fetched, is written back at the end.
TEST_F(OffloadPlanTest, PlannedEvictsTheFurthestUseAndCopiesBackOnlyWrites) {
  absl::StatusOr<OffloadPlan> plan =
      PlanOffload(*prepared_, {"c"}, 48, OffloadPolicy::kPlanned);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_THAT(plan->steps[0].before,
              UnorderedElementsAreArray(
                  {Act(K::kLoad, "x"), Act(K::kLoad, "w1"),
                   Act(K::kAllocate, "a")}));
  EXPECT_THAT(plan->steps[0].after,
              UnorderedElementsAreArray({Act(K::kDie, "x")}));
  EXPECT_THAT(plan->steps[1].before,
              UnorderedElementsAreArray({Act(K::kDrop, "w1"),
                                         Act(K::kLoad, "w2"),
                                         Act(K::kAllocate, "b")}));
  EXPECT_EQ(plan->steps[1].before[0], Act(K::kDrop, "w1"));  // first
  EXPECT_THAT(plan->steps[1].after,
              UnorderedElementsAreArray({Act(K::kDie, "a")}));
  EXPECT_THAT(plan->steps[2].before,
              UnorderedElementsAreArray({Act(K::kDrop, "w2"),
                                         Act(K::kLoad, "w1"),
                                         Act(K::kAllocate, "c")}));
  EXPECT_THAT(plan->finish,
              UnorderedElementsAreArray(
                  {Act(K::kDrop, "w1"), Act(K::kWriteBack, "c")}));
  EXPECT_EQ(plan->peak_bytes, 48u);
  EXPECT_EQ(plan->peak_step, 0);
  EXPECT_EQ(plan->resident_at_peak, Vars({"x", "w1", "a"}));
  EXPECT_EQ(plan->transfers, 5);  // x, w1, w2, w1 in; c out
  EXPECT_EQ(plan->moved_bytes, 80u);
}

// With 16 bytes more, w2 is prefetched during op 0 and nothing is evicted.
TEST_F(OffloadPlanTest, PlannedPrefetchesTheNextOpsInputsWhereTheyFit) {
  absl::StatusOr<OffloadPlan> plan =
      PlanOffload(*prepared_, {"c"}, 64, OffloadPolicy::kPlanned);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->steps[0].before.back(), Act(K::kLoad, "w2", true));
  EXPECT_EQ(plan->steps[1].before,
            std::vector<OffloadAction>{Act(K::kAllocate, "b")});
  EXPECT_EQ(plan->steps[2].before,
            std::vector<OffloadAction>{Act(K::kAllocate, "c")});
  EXPECT_EQ(plan->peak_bytes, 64u);
  EXPECT_EQ(plan->resident_at_peak, Vars({"x", "w1", "w2", "a"}));
  EXPECT_EQ(plan->transfers, 4);
  EXPECT_EQ(plan->moved_bytes, 64u);
}

// Every variable in before each op and out after it, copied back.
TEST_F(OffloadPlanTest, OnDemandMovesEverythingInAndOutAroundEachOp) {
  absl::StatusOr<OffloadPlan> plan =
      PlanOffload(*prepared_, {"c"}, 1000, OffloadPolicy::kOnDemand);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->steps[1].before,
              UnorderedElementsAreArray({Act(K::kLoad, "a"),
                                         Act(K::kLoad, "w2"),
                                         Act(K::kAllocate, "b")}));
  EXPECT_THAT(plan->steps[1].after,
              UnorderedElementsAreArray({Act(K::kDie, "a"),
                                         Act(K::kWriteBack, "w2"),
                                         Act(K::kWriteBack, "b")}));
  EXPECT_TRUE(plan->finish.empty());
  EXPECT_EQ(plan->peak_bytes, 48u);
  // Per op two loads and two copies back.
  EXPECT_EQ(plan->transfers, 12);
  EXPECT_EQ(plan->moved_bytes, 192u);
}

TEST_F(OffloadPlanTest, ABudgetBelowOneOpsNeedNamesTheOpAndTheBytes) {
  absl::StatusOr<OffloadPlan> plan =
      PlanOffload(*prepared_, {"c"}, 47, OffloadPolicy::kPlanned);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("op 0 (mul) needs 48 bytes of device memory"));
  EXPECT_THAT(plan.status().message(), HasSubstr("w1: 16"));
  EXPECT_THAT(plan.status().message(), HasSubstr("budget of 47 bytes"));
}

TEST(OffloadPlanErrorsTest, AVariableOfUnknownSizeIsNamed) {
  absl::StatusOr<PreparedNet> prepared =
      Executor(ExecutorOptions::AsWritten())
          .Prepare(Net(ChainNet("[ -1 ]")), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  absl::StatusOr<OffloadPlan> plan =
      PlanOffload(*prepared, {}, 1000, OffloadPolicy::kPlanned);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("op 0 (mul): variable \"x\" is float32 [-1]"));
}

// i = non_zero(a): its size depends on a's values; f = cast(i) with it.
TEST(OffloadPlanErrorsTest, SizesKnownOnlyInTheRunAreListedOrRefused) {
  absl::StatusOr<PreparedNet> prepared =
      Executor(ExecutorOptions::AsWritten())
          .Prepare(Net(R"pb(
            blocks {
              vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ 4 ] }
              ops {
                type: "scale"
                inputs { slot: "X" vars: "x" }
                outputs { slot: "Out" vars: "a" }
              }
              ops {
                type: "non_zero"
                inputs { slot: "X" vars: "a" }
                outputs { slot: "Out" vars: "i" }
              }
              ops {
                type: "cast"
                inputs { slot: "X" vars: "i" }
                outputs { slot: "Out" vars: "f" }
                attrs { name: "out_dtype" i: 1 }
              }
              ops {
                type: "relu"
                inputs { slot: "X" vars: "a" }
                outputs { slot: "Out" vars: "b" }
              }
            })pb"),
                   0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const PreparedNet& p = *prepared;
  absl::StatusOr<OffloadPlan> plan = PlanOffload(
      p, {"f", "b"}, kNoDeviceMemoryBudget, OffloadPolicy::kPlanned);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->unsized.size(), 2u);
  EXPECT_EQ(plan->unsized[0].var, p.VarIndex("i"));
  EXPECT_EQ(plan->unsized[0].op, 1);
  EXPECT_EQ(plan->unsized[1].var, p.VarIndex("f"));
  EXPECT_EQ(plan->unsized[1].op, 2);
  // x in, b out; a lives and dies on the device.
  EXPECT_EQ(plan->moved_bytes, 32u);
  EXPECT_EQ(plan->peak_bytes, 32u);

  plan = PlanOffload(p, {"f", "b"}, 1000, OffloadPolicy::kPlanned);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("op 1 (non_zero) writes variable \"i\" as int64 "
                        "[1, -1]: its size depends on values computed during "
                        "the run"));
  EXPECT_THAT(plan.status().message(),
              HasSubstr("2 variable(s) are sized only while it runs"));
}

TEST(OffloadPlanErrorsTest, Policies) {
  EXPECT_EQ(*ParseOffloadPolicy("planned"), OffloadPolicy::kPlanned);
  EXPECT_EQ(*ParseOffloadPolicy("on_demand"), OffloadPolicy::kOnDemand);
  EXPECT_THAT(ParseOffloadPolicy("lazy").status().message(),
              HasSubstr("offload policy \"lazy\": expected on_demand or "
                        "planned"));
}

}  // namespace
}  // namespace scopeflow
