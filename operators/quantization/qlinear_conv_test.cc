// conv_integer and qlinear_conv against hand-computed convolutions, and
// their error paths.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ConvIntegerOp(bool zero_points, const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"conv_integer\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"W\" vars: \"w\" } ",
      zero_points ? "inputs { slot: \"XZeroPoint\" vars: \"xz\" } "
                    "inputs { slot: \"WZeroPoint\" vars: \"wz\" } "
                  : "",
      "outputs { slot: \"Y\" vars: \"y\" } ", attrs);
}

TEST(ConvIntegerTest, PaddedStridedWithPerChannelZeroPoints) {
  // X - 1 = [[0, 1, 2], [3, 4, 5], [6, 7, 8]], padded by 1, stride 2.
  // Filter 0 less its zero point is all ones (window sums); filter 1 is
  // 2 at its top-left corner only.
  auto out = RunOp(
      ConvIntegerOp(
          true,
          "attrs { name: \"strides\" ints { values: 2 values: 2 } } "
          "attrs { name: \"paddings\" ints { values: [1, 1, 1, 1] } }"),
      {{"x", MakeTensor<uint8_t>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
       {"w", MakeTensor<uint8_t>({2, 1, 2, 2}, {2, 2, 2, 2, 3, 1, 1, 1})},
       {"xz", MakeTensor<uint8_t>({}, {1})},
       {"wz", MakeTensor<uint8_t>({2}, {1, 1})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt32);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 2, 2));
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(0, 3, 9, 24, 0, 0, 0, 8));
}

TEST(ConvIntegerTest, GroupsAndOneSpatialAxisWithDilation) {
  auto groups = RunOp(ConvIntegerOp(false, "attrs { name: \"groups\" i: 2 }"),
                      {{"x", MakeTensor<int8_t>({1, 2, 1, 1}, {5, -3})},
                       {"w", MakeTensor<int8_t>({2, 1, 1, 1}, {2, 3})}},
                      {"y"});
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(Values<int32_t>((*groups)[0]), ElementsAre(10, -9));

  // x[i] - x[i + 2].
  auto dilated = RunOp(
      ConvIntegerOp(false, "attrs { name: \"dilations\" ints { values: 2 } }"),
      {{"x", MakeTensor<uint8_t>({1, 1, 4}, {1, 2, 3, 9})},
       {"w", MakeTensor<int8_t>({1, 1, 2}, {1, -1})}},
      {"y"});
  ASSERT_TRUE(dilated.ok()) << dilated.status();
  EXPECT_THAT((*dilated)[0].dims(), ElementsAre(1, 1, 2));
  EXPECT_THAT(Values<int32_t>((*dilated)[0]), ElementsAre(-2, -7));
}

TEST(ConvIntegerTest, Errors) {
  absl::Status zero_dtype = PrepareOp(
      ConvIntegerOp(true), {{"x", MakeTensor<uint8_t>({1, 1, 1, 1}, {1})},
                            {"w", MakeTensor<uint8_t>({1, 1, 1, 1}, {1})},
                            {"xz", MakeTensor<uint8_t>({}, {0})},
                            {"wz", MakeTensor<int8_t>({}, {0})}});
  EXPECT_THAT(std::string(zero_dtype.message()),
              HasSubstr("input \"WZeroPoint\" (variable \"wz\", shape [?]) has "
                        "dtype int8: a zero point must have the dtype of input "
                        "\"W\" (variable \"w\"), uint8"));
  absl::Status per_channel = PrepareOp(
      ConvIntegerOp(true), {{"x", MakeTensor<uint8_t>({1, 1, 1, 1}, {1})},
                            {"w", MakeTensor<uint8_t>({2, 1, 1, 1}, {1, 1})},
                            {"xz", MakeTensor<uint8_t>({}, {0})},
                            {"wz", MakeTensor<uint8_t>({3}, {0, 0, 0})}});
  EXPECT_THAT(std::string(per_channel.message()),
              HasSubstr("input \"WZeroPoint\" (variable \"wz\", shape [3]): "
                        "expected one element or [2], one per output channel"));
  absl::Status x_zero = PrepareOp(
      ConvIntegerOp(true), {{"x", MakeTensor<uint8_t>({1, 2, 1, 1}, {1, 1})},
                            {"w", MakeTensor<uint8_t>({1, 2, 1, 1}, {1, 1})},
                            {"xz", MakeTensor<uint8_t>({2}, {0, 0})},
                            {"wz", MakeTensor<uint8_t>({}, {0})}});
  EXPECT_THAT(std::string(x_zero.message()),
              HasSubstr("input \"XZeroPoint\" (variable \"xz\", shape [2]): "
                        "expected one element"));
  absl::Status channels = PrepareOp(
      ConvIntegerOp(false),
      {{"x", MakeTensor<uint8_t>({1, 3, 2, 2}, std::vector<uint8_t>(12))},
       {"w", MakeTensor<uint8_t>({1, 2, 1, 1}, {1, 1})}});
  EXPECT_THAT(std::string(channels.message()),
              HasSubstr("3 input channels do not match 2 per group times 1 "
                        "groups"));
}

std::string QLinearConvOp(bool bias) {
  return absl::StrCat(
      "type: \"qlinear_conv\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"XScale\" vars: \"xs\" } "
      "inputs { slot: \"XZeroPoint\" vars: \"xz\" } "
      "inputs { slot: \"W\" vars: \"w\" } "
      "inputs { slot: \"WScale\" vars: \"ws\" } "
      "inputs { slot: \"WZeroPoint\" vars: \"wz\" } "
      "inputs { slot: \"YScale\" vars: \"ys\" } "
      "inputs { slot: \"YZeroPoint\" vars: \"yz\" } ",
      bias ? "inputs { slot: \"B\" vars: \"b\" } " : "",
      "outputs { slot: \"Y\" vars: \"y\" }");
}

TEST(QLinearConvTest, PerChannelScalesBiasRoundingAndSaturation) {
  // X - 10 = [0, 10, 20, 30]. Channel 0: 2 * that + bias 1, times
  // 0.5 * 1 / 1 = [0.5, 10.5, 20.5, 30.5], halves to even, + 5. Channel 1:
  // -1 * that times 0.5 * 2 = [0, -10, -20, -30], + 5, saturated at 0.
  std::vector<Feed> feeds = {
      {"x", MakeTensor<uint8_t>({1, 1, 2, 2}, {10, 20, 30, 40})},
      {"xs", MakeTensor<float>({}, {0.5f})},
      {"xz", MakeTensor<uint8_t>({}, {10})},
      {"w", MakeTensor<int8_t>({2, 1, 1, 1}, {2, -1})},
      {"ws", MakeTensor<float>({2}, {1, 2})},
      {"wz", MakeTensor<int8_t>({2}, {0, 0})},
      {"ys", MakeTensor<float>({}, {1})},
      {"yz", MakeTensor<uint8_t>({}, {5})},
      {"b", MakeTensor<int32_t>({2}, {1, 0})}};
  auto out = RunOp(QLinearConvOp(true), feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kUInt8);
  EXPECT_THAT(Values<uint8_t>((*out)[0]),
              ElementsAre(5, 15, 25, 35, 5, 0, 0, 0));

  feeds[8] = {"b", MakeTensor<int32_t>({3}, {0, 0, 0})};
  EXPECT_THAT(std::string(PrepareOp(QLinearConvOp(true), feeds).message()),
              HasSubstr("input \"B\" (variable \"b\", shape [3]): expected "
                        "[2], one bias per output channel"));
  feeds[8] = {"b", MakeTensor<int32_t>({2}, {0, 0})};
  feeds[4] = {"ws", MakeTensor<float>({3}, {1, 1, 1})};
  EXPECT_THAT(std::string(PrepareOp(QLinearConvOp(true), feeds).message()),
              HasSubstr("input \"WScale\" (variable \"ws\", shape [3]): "
                        "expected one element or [2], one per output channel"));
}

}  // namespace
}  // namespace scopeflow
