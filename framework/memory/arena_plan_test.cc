#include "framework/memory/arena_plan.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

// No two tensors live at once share a byte.
void ExpectNoLiveOverlap(const std::vector<TensorUse>& uses,
                         const ArenaPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), uses.size());
  for (size_t a = 0; a < uses.size(); ++a) {
    EXPECT_LE(plan.offsets[a] + uses[a].bytes, plan.arena_bytes);
    for (size_t b = a + 1; b < uses.size(); ++b) {
      if (!LifetimesOverlap(uses[a], uses[b]) || uses[a].bytes == 0 ||
          uses[b].bytes == 0) {
        continue;
      }
      const bool apart = plan.offsets[a] + uses[a].bytes <= plan.offsets[b] ||
                         plan.offsets[b] + uses[b].bytes <= plan.offsets[a];
      EXPECT_TRUE(apart) << "tensors " << a << " and " << b;
    }
  }
}

TEST(ArenaPlanTest, AChainReusesTheMemoryOfDeadTensors) {
  // x0 -> op0 -> x1 -> op1 -> x2 -> op2 -> x3: x1 dies at op1, where x2 is
  // born, so x3 (born at op2) can take x1's place.
  const std::vector<TensorUse> uses = {
      {64, 0, 1}, {64, 1, 2}, {64, 2, 3}};
  const ArenaPlan plan = PlanArena(uses, 64);
  EXPECT_EQ(plan.sum_bytes, 192u);
  EXPECT_EQ(plan.live_peak_bytes, 128u);
  EXPECT_EQ(plan.arena_bytes, 128u);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 64u);
  EXPECT_EQ(plan.offsets[2], 0u);
  ExpectNoLiveOverlap(uses, plan);
}

TEST(ArenaPlanTest, LargestFirstAndTheSmallestGapThatFits) {
  // By hand: A (256, ops 0-1) at 0; B (192, ops 2-3) at 0, A being dead;
  // C (128, ops 0-3) overlaps both, above them at 256; D (64, op 2)
  // overlaps B and C: the gap [192, 256) above B fits it exactly.
  const std::vector<TensorUse> uses = {
      {256, 0, 1}, {192, 2, 3}, {128, 0, 3}, {64, 2, 2}};
  const ArenaPlan plan = PlanArena(uses, 64);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 0u);
  EXPECT_EQ(plan.offsets[2], 256u);
  EXPECT_EQ(plan.offsets[3], 192u);
  EXPECT_EQ(plan.arena_bytes, 384u);
  EXPECT_EQ(plan.live_peak_bytes, 384u);
  EXPECT_EQ(plan.sum_bytes, 640u);
  ExpectNoLiveOverlap(uses, plan);
}

TEST(ArenaPlanTest, SizesAreRoundedToTheAlignment) {
  const std::vector<TensorUse> uses = {{10, 0, 0}, {10, 0, 0}, {10, 1, 1}};
  const ArenaPlan plan = PlanArena(uses, 64);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 64u);
  EXPECT_EQ(plan.offsets[2], 0u);
  EXPECT_EQ(plan.arena_bytes, 128u);
  for (size_t offset : plan.offsets) EXPECT_EQ(offset % 64, 0u);
}

TEST(ArenaPlanTest, NothingToPlan) {
  const ArenaPlan plan = PlanArena({}, 64);
  EXPECT_EQ(plan.arena_bytes, 0u);
  EXPECT_EQ(plan.sum_bytes, 0u);
  EXPECT_EQ(plan.live_peak_bytes, 0u);
}

// Over random lifetimes: live tensors never share bytes, the arena is
// never below the live peak nor above the sum of the (aligned) sizes.
TEST(ArenaPlanTest, RandomLifetimesNeverOverlapWhileLive) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 300; ++trial) {
    const int ops = 1 + static_cast<int>(random() % 40);
    const int count = static_cast<int>(random() % 60);
    std::vector<TensorUse> uses;
    size_t aligned_sum = 0;
    for (int i = 0; i < count; ++i) {
      TensorUse use;
      use.first = static_cast<int>(random() % ops);
      use.last = use.first + static_cast<int>(random() % (ops - use.first));
      use.bytes = 1 + random() % 5000;
      aligned_sum += (use.bytes + 63) / 64 * 64;
      uses.push_back(use);
    }
    const ArenaPlan plan = PlanArena(uses, 64);
    ExpectNoLiveOverlap(uses, plan);
    EXPECT_GE(plan.arena_bytes, plan.live_peak_bytes);
    EXPECT_LE(plan.arena_bytes, aligned_sum);
    for (size_t offset : plan.offsets) EXPECT_EQ(offset % 64, 0u);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "trial " << trial;
      break;
    }
  }
}

}  // namespace
}  // namespace scopeflow
