#include "framework/memory/memory_plan.h"

#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/memory/op_uses.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"plan\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

// a = 2x; b = relu(a); c = reshape(b) (a view of b); d = 2c; e = c + d.
// Each temporary is 2048 floats, 8 KiB (above kSmallestArenaTensor).
constexpr char kChain[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 64, 32 ]
    }
    ops {
      type: "scale"
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "a" }
      attrs { name: "scale" f: 2 }
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "a" }
      outputs { slot: "Out" vars: "b" }
    }
    ops {
      type: "reshape"
      inputs { slot: "X" vars: "b" }
      outputs { slot: "Out" vars: "c" }
      attrs {
        name: "shape"
        i64s { values: [ 2048 ] }
      }
    }
    ops {
      type: "scale"
      inputs { slot: "X" vars: "c" }
      outputs { slot: "Out" vars: "d" }
      attrs { name: "scale" f: 2 }
    }
    ops {
      type: "add"
      inputs { slot: "X" vars: "c" }
      inputs { slot: "Y" vars: "d" }
      outputs { slot: "Out" vars: "e" }
    }
  })pb";

PreparedNet Prepared(const NetDef& net) {
  absl::StatusOr<PreparedNet> prepared =
      Executor(ExecutorOptions::AsWritten()).Prepare(net, 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  return *std::move(prepared);
}

int64_t OffsetOf(const PreparedNet& prepared, const MemoryPlan& plan,
                 const std::string& name) {
  return plan.offset_of[prepared.VarIndex(name)];
}

TEST(MemoryPlanTest, LifetimesAndOffsetsOfAChain) {
  const PreparedNet prepared = Prepared(Net(kChain));
  const MemoryPlan plan = PlanMemory(prepared, {"e"});
  // Lifetimes: a [0, 1], b [1, 2], c [2, 4], d [3, 4]; e is fetched, x fed.
  ASSERT_EQ(plan.vars.size(), 4u);
  EXPECT_EQ(plan.unplanned_temporaries, 2);  // x fed, e fetched
  const int c = plan.index_of[prepared.VarIndex("c")];
  EXPECT_EQ(plan.uses[c].first, 2);
  EXPECT_EQ(plan.uses[c].last, 4);
  EXPECT_EQ(plan.uses[c].bytes, 8192u);
  // By hand, largest first then by birth: a at 0; b overlaps a: 8192; c
  // overlaps b only: 0; d overlaps c: 8192, where b was.
  EXPECT_EQ(OffsetOf(prepared, plan, "a"), 0);
  EXPECT_EQ(OffsetOf(prepared, plan, "b"), 8192);
  EXPECT_EQ(OffsetOf(prepared, plan, "c"), 0);
  EXPECT_EQ(OffsetOf(prepared, plan, "d"), 8192);
  EXPECT_EQ(OffsetOf(prepared, plan, "e"), -1);
  EXPECT_EQ(OffsetOf(prepared, plan, "x"), -1);
  EXPECT_EQ(plan.arena.arena_bytes, 16384u);
  EXPECT_EQ(plan.arena.live_peak_bytes, 16384u);
  EXPECT_EQ(plan.arena.sum_bytes, 32768u);
}

std::vector<float> RunChain(bool plan_memory, const std::string& fetch) {
  ExecutorOptions options = ExecutorOptions::AsWritten();
  options.run.plan_memory = plan_memory;
  Executor executor(options);
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(Net(kChain), 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  std::vector<float> x(2048);
  for (int i = 0; i < 2048; ++i) x[i] = static_cast<float>(i % 11 - 5);
  std::vector<float> last;
  // Twice: the second run reuses the cached plan and the run scope.
  for (int run = 0; run < 2; ++run) {
    absl::StatusOr<std::vector<Tensor>> out = executor.Run(
        *prepared, scope, {{"x", MakeTensor<float>({64, 32}, x)}}, {fetch});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    last = Values<float>((*out)[0]);
  }
  return last;
}

// reshape leaves c viewing b's region, which d takes once b is dead: the
// run copies c out of it, so e = c + 2c still.
TEST(MemoryPlanTest, AViewOfADeadTensorsRegionIsCopiedOut) {
  const std::vector<float> planned = RunChain(true, "e");
  const std::vector<float> unplanned = RunChain(false, "e");
  ASSERT_EQ(planned.size(), 2048u);
  EXPECT_EQ(planned, unplanned);
  for (int i = 0; i < 2048; ++i) {
    const float x = static_cast<float>(i % 11 - 5);
    EXPECT_EQ(planned[i], 3 * (x > 0 ? 2 * x : 0)) << i;
  }
}

// A fetched temporary that the plan placed is allocated on its own: what
// the caller holds stays as the run left it.
TEST(MemoryPlanTest, AFetchedTemporaryKeepsItsValue) {
  const std::vector<float> planned = RunChain(true, "a");
  ASSERT_EQ(planned.size(), 2048u);
  for (int i = 0; i < 2048; ++i) EXPECT_EQ(planned[i], 2.0f * (i % 11 - 5));
}

TEST(MemoryPlanTest, TheCachedPlanIsMadeOnceAndShared) {
  const PreparedNet prepared = Prepared(Net(kChain));
  EXPECT_EQ(prepared.memory_plans().plans_made(), 0);
  const std::shared_ptr<const MemoryPlan> plan =
      CachedMemoryPlan(prepared, prepared.var_infos());
  EXPECT_EQ(CachedMemoryPlan(prepared, prepared.var_infos()), plan);
  EXPECT_EQ(prepared.memory_plans().plans_made(), 1);
  // Without fetches, e is planned too.
  EXPECT_EQ(plan->vars.size(), 5u);
  EXPECT_EQ(plan->uses[0].bytes, 8192u);
}

TEST(MemoryPlanTest, SmallTemporariesAreLeftToTheRunsPool) {
  const PreparedNet prepared = Prepared(Net(kChain));
  const MemoryPlan plan = PlanMemory(prepared, {}, 8193);
  EXPECT_TRUE(plan.vars.empty());
  EXPECT_EQ(plan.unplanned_temporaries, 6);
}

// Variables a control-flow op reads or writes stay out of the arena: its
// steps may keep views of them, and its blocks write its outputs.
TEST(MemoryPlanTest, ControlFlowVariablesAreLeftOut) {
  const PreparedNet prepared = Prepared(Net(R"pb(
    blocks {
      vars {
        name: "x"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 2 ]
      }
      vars {
        name: "c"
        dtype: DATA_TYPE_BOOL
        shape: [ 1 ]
      }
      ops {
        type: "scale"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "t" }
      }
      ops {
        type: "scale"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "y" }
      }
      ops {
        type: "conditional_block"
        inputs { slot: "Cond" vars: "c" }
        inputs { slot: "X" vars: "t" }
        outputs { slot: "Out" vars: "y" }
        attrs { name: "sub_block" block_idx: 1 }
      }
      ops {
        type: "relu"
        inputs { slot: "X" vars: "y" }
        outputs { slot: "Out" vars: "z" }
      }
    }
    blocks {
      parent_idx: 0
      ops {
        type: "scale"
        inputs { slot: "X" vars: "t" }
        outputs { slot: "Out" vars: "y" }
        attrs { name: "scale" f: 2 }
      }
    })pb"));
  const std::vector<OpUses> uses = CollectOpUses(prepared);
  ASSERT_EQ(uses.size(), 4u);
  const int t = prepared.VarIndex("t");
  const int y = prepared.VarIndex("y");
  EXPECT_THAT(uses[2].writes, ElementsAre(y));
  EXPECT_NE(std::find(uses[2].reads.begin(), uses[2].reads.end(), t),
            uses[2].reads.end());
  const MemoryPlan plan = PlanMemory(prepared, {});
  EXPECT_EQ(plan.offset_of[t], -1);
  EXPECT_EQ(plan.offset_of[y], -1);
  EXPECT_EQ(plan.vars, std::vector<int>{prepared.VarIndex("z")});
}

}  // namespace
}  // namespace scopeflow
