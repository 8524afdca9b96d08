// matmul_integer and qlinear_matmul against hand-computed products, and
// their error paths.
#include <cstdint>
#include <string>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kMatmulInteger[] = R"pb(type: "matmul_integer"
                                       inputs { slot: "A" vars: "a" }
                                       inputs { slot: "B" vars: "b" }
                                       inputs { slot: "AZeroPoint" vars: "az" }
                                       inputs { slot: "BZeroPoint" vars: "bz" }
                                       outputs { slot: "Y" vars: "y" })pb";

constexpr char kMatmulIntegerNoZero[] =
    R"pb(type: "matmul_integer"
         inputs { slot: "A" vars: "a" }
         inputs { slot: "B" vars: "b" }
         outputs { slot: "Y" vars: "y" })pb";

TEST(MatmulIntegerTest, BroadcastBatchWithPerColumnZeroPoints) {
  // A - 1 = [[0, -3]] and [[2, 3]]; B - [5, 0] = [[0, 6], [2, 8]].
  auto out = RunOp(kMatmulInteger,
                   {{"a", MakeTensor<int8_t>({2, 1, 2}, {1, -2, 3, 4})},
                    {"b", MakeTensor<uint8_t>({2, 2}, {5, 6, 7, 8})},
                    {"az", MakeTensor<int8_t>({}, {1})},
                    {"bz", MakeTensor<uint8_t>({2}, {5, 0})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt32);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1, 2));
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(-6, -24, 6, 36));
}

TEST(MatmulIntegerTest, VectorsAndPerRowZeroPoints) {
  auto dot = RunOp(kMatmulIntegerNoZero,
                   {{"a", MakeTensor<uint8_t>({3}, {1, 2, 3})},
                    {"b", MakeTensor<uint8_t>({3}, {4, 5, 255})}},
                   {"y"});
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_EQ((*dot)[0].rank(), 0);
  EXPECT_EQ((*dot)[0].data<int32_t>()[0], 4 + 10 + 765);

  // Rows of A less 1 and 2: [[0, 1], [1, 0]] times B = [[1, 2], [3, 4]].
  auto rows = RunOp(kMatmulInteger,
                    {{"a", MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 2})},
                     {"b", MakeTensor<int8_t>({2, 2}, {1, 2, 3, 4})},
                     {"az", MakeTensor<uint8_t>({2}, {1, 2})},
                     {"bz", MakeTensor<int8_t>({1}, {0})}},
                    {"y"});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(Values<int32_t>((*rows)[0]), ElementsAre(3, 4, 1, 2));
}

TEST(MatmulIntegerTest, Errors) {
  absl::Status dtype =
      PrepareOp(kMatmulInteger, {{"a", MakeTensor<uint8_t>({1, 1}, {1})},
                                 {"b", MakeTensor<uint8_t>({1, 1}, {1})},
                                 {"az", MakeTensor<int8_t>({}, {0})},
                                 {"bz", MakeTensor<uint8_t>({}, {0})}});
  EXPECT_THAT(std::string(dtype.message()),
              HasSubstr("input \"AZeroPoint\" (variable \"az\", shape [?]) has "
                        "dtype int8: a zero point must have the dtype of input "
                        "\"A\" (variable \"a\"), uint8"));
  absl::Status inner = PrepareOp(
      kMatmulIntegerNoZero, {{"a", MakeTensor<uint8_t>({1, 2}, {1, 2})},
                             {"b", MakeTensor<uint8_t>({3, 1}, {1, 2, 3})}});
  EXPECT_THAT(std::string(inner.message()),
              HasSubstr("the inner dimensions 2 and 3 differ"));
  absl::Status per_column = PrepareOp(
      kMatmulInteger, {{"a", MakeTensor<uint8_t>({1, 2}, {1, 2})},
                       {"b", MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4})},
                       {"az", MakeTensor<uint8_t>({}, {0})},
                       {"bz", MakeTensor<uint8_t>({3}, {0, 0, 0})}});
  EXPECT_THAT(std::string(per_column.message()),
              HasSubstr("input \"BZeroPoint\" (variable \"bz\", shape [3]): "
                        "expected one element or [2], one per column of B"));
  absl::Status float_a = PrepareOp(kMatmulIntegerNoZero,
                                   {{"a", MakeTensor<float>({1, 1}, {1})},
                                    {"b", MakeTensor<uint8_t>({1, 1}, {1})}});
  EXPECT_THAT(std::string(float_a.message()),
              HasSubstr("input \"A\" (variable \"a\") has dtype float32"));
}

constexpr char kQLinearMatmul[] = R"pb(type: "qlinear_matmul"
                                       inputs { slot: "A" vars: "a" }
                                       inputs { slot: "AScale" vars: "as" }
                                       inputs { slot: "AZeroPoint" vars: "az" }
                                       inputs { slot: "B" vars: "b" }
                                       inputs { slot: "BScale" vars: "bs" }
                                       inputs { slot: "BZeroPoint" vars: "bz" }
                                       inputs { slot: "YScale" vars: "ys" }
                                       inputs { slot: "YZeroPoint" vars: "yz" }
                                       outputs { slot: "Y" vars: "y" })pb";

TEST(QLinearMatmulTest, PerColumnScalesRoundHalfToEvenAndSaturate) {
  // A - 128 = [1, -1]; B = [[5, 7], [2, 2]]: acc = [3, 5]. Multipliers
  // 0.5 * [0.25, 0.75] / 0.25 = [0.5, 1.5]: 1.5 -> 2 and 7.5 -> 8.
  std::vector<Feed> feeds = {{"a", MakeTensor<uint8_t>({1, 2}, {129, 127})},
                             {"as", MakeTensor<float>({}, {0.5f})},
                             {"az", MakeTensor<uint8_t>({}, {128})},
                             {"b", MakeTensor<int8_t>({2, 2}, {5, 7, 2, 2})},
                             {"bs", MakeTensor<float>({2}, {0.25f, 0.75f})},
                             {"bz", MakeTensor<int8_t>({}, {0})},
                             {"ys", MakeTensor<float>({}, {0.25f})},
                             {"yz", MakeTensor<uint8_t>({}, {100})}};
  auto out = RunOp(kQLinearMatmul, feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kUInt8);
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(102, 108));

  // An int8 output zero point of 120: 122 and 128, saturated to 127.
  feeds[7] = {"yz", MakeTensor<int8_t>({}, {120})};
  auto saturated = RunOp(kQLinearMatmul, feeds, {"y"});
  ASSERT_TRUE(saturated.ok()) << saturated.status();
  EXPECT_EQ((*saturated)[0].dtype(), kInt8);
  EXPECT_THAT(Values<int8_t>((*saturated)[0]), ElementsAre(122, 127));
}

TEST(QLinearMatmulTest, Errors) {
  std::vector<Feed> feeds = {{"a", MakeTensor<uint8_t>({1, 2}, {1, 2})},
                             {"as", MakeTensor<float>({}, {1})},
                             {"az", MakeTensor<uint8_t>({}, {0})},
                             {"b", MakeTensor<uint8_t>({2, 1}, {1, 2})},
                             {"bs", MakeTensor<float>({}, {1})},
                             {"bz", MakeTensor<uint8_t>({}, {0})},
                             {"ys", MakeTensor<float>({2}, {1, 1})},
                             {"yz", MakeTensor<uint8_t>({}, {0})}};
  EXPECT_THAT(std::string(PrepareOp(kQLinearMatmul, feeds).message()),
              HasSubstr("input \"YScale\" (variable \"ys\", shape [2]): "
                        "expected one element"));
  feeds[6] = {"ys", MakeTensor<float>({}, {1})};
  feeds[7] = {"yz", MakeTensor<int32_t>({}, {0})};
  EXPECT_THAT(std::string(PrepareOp(kQLinearMatmul, feeds).message()),
              HasSubstr("input \"YZeroPoint\" (variable \"yz\") has dtype "
                        "int32"));
  feeds[7] = {"yz", MakeTensor<uint8_t>({}, {0})};
  feeds[1] = {"as", MakeTensor<double>({}, {1})};
  EXPECT_THAT(
      std::string(PrepareOp(kQLinearMatmul, feeds).message()),
      HasSubstr("input \"AScale\" (variable \"as\") has dtype float64"));
  feeds[1] = {"as", MakeTensor<float>({}, {1})};
  ASSERT_TRUE(PrepareOp(kQLinearMatmul, feeds).ok());
}

}  // namespace
}  // namespace scopeflow
