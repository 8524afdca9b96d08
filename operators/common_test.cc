#include "operators/common.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedArithmeticTest, AddAndMul) {
  EXPECT_EQ(CheckedAdd(2, 3), 5);
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMax, kMin), -1);
  EXPECT_EQ(CheckedMul(-4, 5), -20);
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedMul(kMax, 0), 0);
}

TEST(CheckedArithmeticTest, NumElements) {
  EXPECT_EQ(CheckedNumElements({}), 1);
  EXPECT_EQ(CheckedNumElements({2, 3, 4}), 24);
  EXPECT_EQ(CheckedNumElements({2, -1, 4}), -1);
  EXPECT_EQ(CheckedNumElements({0, -1}), -1);
  EXPECT_EQ(CheckedNumElements({kMax}), kMax);
  EXPECT_EQ(CheckedNumElements({int64_t{1} << 62, 2}), std::nullopt);
  EXPECT_EQ(CheckedNumElements({kMax, kMax, 0}), 0);
  EXPECT_EQ(CheckedNumElements({kMax, 2, -1}), -1);
}

TEST(CheckedArithmeticTest, InputNumElements) {
  OpSpec spec("test_op");
  spec.Input("X");
  PreparedOp op;
  op.spec = &spec;
  op.inputs = {{0}};
  std::vector<VarInfo> table = {VarInfo{kFloat32, {3, 4}, true}};
  const std::vector<std::string> names = {"x"};
  InferContext context(op, table, names);
  EXPECT_EQ(InputNumElements(context, "X").value(), 12);
  table[0].dims = {3, -1};
  EXPECT_EQ(InputNumElements(context, "X").value(), -1);
  table[0].has_dims = false;
  table[0].dims.clear();
  EXPECT_EQ(InputNumElements(context, "X").value(), -1);
  table[0] = VarInfo{kFloat32, {int64_t{1} << 40, int64_t{1} << 40}, true};
  EXPECT_THAT(InputNumElements(context, "X").status().message(),
              HasSubstr("input \"X\" (variable \"x\", shape [1099511627776, "
                        "1099511627776]) has more elements than int64 holds"));
}

}  // namespace
}  // namespace scopeflow
