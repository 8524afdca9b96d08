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

std::string BinaryOp(const std::string& type, const std::string& attrs = "") {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
                      "\"Y\" vars: \"y\" } outputs { slot: \"Out\" vars: "
                      "\"out\" } ",
                      attrs);
}

TEST(BitwiseTest, AndOrXorBroadcastOverIntegers) {
  // 12 = 0b1100, 10 = 0b1010; -1 has every bit set.
  const Tensor x = MakeTensor<int32_t>({2, 2}, {12, 12, -1, 0});
  const Tensor y = MakeTensor<int32_t>({2}, {10, 3});
  auto out = RunOp(BinaryOp("bitwise_and"), {{"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(8, 0, 10, 0));
  out = RunOp(BinaryOp("bitwise_or"), {{"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(14, 15, -1, 3));
  out = RunOp(BinaryOp("bitwise_xor"), {{"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(6, 15, -11, 3));
}

TEST(BitwiseTest, NotFlipsEveryBit) {
  auto out = RunOp(
      "type: \"bitwise_not\" inputs { slot: \"X\" vars: \"x\" } outputs { "
      "slot: \"Out\" vars: \"out\" }",
      {{"x", MakeTensor<uint8_t>({3}, {0, 1, 255})}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(255, 254, 0));
}

TEST(BitwiseTest, ShiftsLeftAndRightAndPastTheWidth) {
  const Tensor x = MakeTensor<uint8_t>({3}, {16, 4, 1});
  const Tensor y = MakeTensor<uint8_t>({3}, {1, 2, 8});
  auto out =
      RunOp(BinaryOp("bit_shift", "attrs { name: \"direction\" s: \"LEFT\" }"),
            {{"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(32, 16, 0));
  out =
      RunOp(BinaryOp("bit_shift", "attrs { name: \"direction\" s: \"RIGHT\" }"),
            {{"x", x}, {"y", y}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(8, 1, 0));
}

TEST(BitwiseTest, FloatsAndMixedDtypesAreRefused) {
  absl::Status status = PrepareOp(
      BinaryOp("bitwise_and"),
      {{"x", MakeTensor<float>({1}, {1})}, {"y", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(std::string(status.message()), HasSubstr("variable \"x\""));
  status =
      PrepareOp(BinaryOp("bitwise_or"), {{"x", MakeTensor<int32_t>({1}, {1})},
                                         {"y", MakeTensor<int64_t>({1}, {1})}});
  EXPECT_THAT(std::string(status.message()), HasSubstr("int64"));
}

}  // namespace
}  // namespace scopeflow
