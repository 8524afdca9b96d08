#include <cstdint>
#include <string>
#include <vector>

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

// The op `type` on X = x (and Y = y if `binary`), Out = out, with `attrs`.
absl::StatusOr<Tensor> RunBinary(const std::string& type, const Tensor& x,
                                 const Tensor& y,
                                 const std::string& attrs = "") {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(BinaryOp(type, attrs), {{"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<Tensor> RunUnary(const std::string& type, const Tensor& x) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(
      absl::StrCat("type: \"", type,
                   "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                   "\"Out\" vars: \"out\" }"),
      {{"x", x}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
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

TEST(BitwiseTest, AndOrXorNotOnSignedAndUnsigned) {
  const Tensor x = MakeTensor<int16_t>({3}, {-1, 0x0f0f, -32768});
  const Tensor y = MakeTensor<int16_t>({3}, {0x00ff, 0x00ff, 1});
  auto band = RunBinary("bitwise_and", x, y);
  ASSERT_TRUE(band.ok()) << band.status();
  EXPECT_THAT(Values<int16_t>(*band), ElementsAre(0x00ff, 0x000f, 0));
  auto bor = RunBinary("bitwise_or", x, y);
  ASSERT_TRUE(bor.ok()) << bor.status();
  EXPECT_THAT(Values<int16_t>(*bor), ElementsAre(-1, 0x0fff, -32767));
  auto bxor = RunBinary("bitwise_xor", x, y);
  ASSERT_TRUE(bxor.ok()) << bxor.status();
  EXPECT_THAT(Values<int16_t>(*bxor), ElementsAre(-256, 0x0ff0, -32767));
  // Broadcast of a [1] against a [2, 1] uint64.
  auto wide =
      RunBinary("bitwise_or", MakeTensor<uint64_t>({2, 1}, {uint64_t{1} << 63, 2}),
          MakeTensor<uint64_t>({1}, {1}));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_THAT(wide->dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<uint64_t>(*wide), ElementsAre((uint64_t{1} << 63) | 1, 3));
  auto bnot = RunUnary("bitwise_not", MakeTensor<uint16_t>({2}, {0, 0x00ff}));
  ASSERT_TRUE(bnot.ok()) << bnot.status();
  EXPECT_THAT(Values<uint16_t>(*bnot), ElementsAre(0xffff, 0xff00));
  auto floats = RunBinary("bitwise_and", MakeTensor<float>({1}, {1}),
                    MakeTensor<float>({1}, {1}));
  EXPECT_THAT(floats.status().message(),
              HasSubstr("has dtype float32: expected int8"));
}

TEST(BitwiseTest, ShiftsEveryUnsignedWidth) {
  const std::string left = R"pb(attrs { name: "direction" s: "LEFT" })pb";
  const std::string right = R"pb(attrs { name: "direction" s: "RIGHT" })pb";
  // uint8: 0x81 << 1 drops the top bit; shifts by 8 or more give 0.
  auto shl = RunBinary("bit_shift", MakeTensor<uint8_t>({4}, {0x81, 1, 1, 255}),
                 MakeTensor<uint8_t>({4}, {1, 7, 8, 200}), left);
  ASSERT_TRUE(shl.ok()) << shl.status();
  EXPECT_THAT(Values<uint8_t>(*shl), ElementsAre(0x02, 0x80, 0, 0));
  // uint16 promotes to int: 0xffff << 15 must not overflow it.
  auto shl16 = RunBinary("bit_shift", MakeTensor<uint16_t>({1}, {0xffff}),
                   MakeTensor<uint16_t>({1}, {15}), left);
  ASSERT_TRUE(shl16.ok()) << shl16.status();
  EXPECT_THAT(Values<uint16_t>(*shl16), ElementsAre(0x8000));
  auto shr = RunBinary("bit_shift", MakeTensor<uint64_t>({3}, {~uint64_t{0}, 16, 5}),
                 MakeTensor<uint64_t>({3}, {63, 2, 64}), right);
  ASSERT_TRUE(shr.ok()) << shr.status();
  EXPECT_THAT(Values<uint64_t>(*shr), ElementsAre(1, 4, 0));
  auto bad = RunBinary("bit_shift", MakeTensor<uint32_t>({1}, {1}),
                 MakeTensor<uint32_t>({1}, {1}),
                 R"pb(attrs { name: "direction" s: "UP" })pb");
  EXPECT_THAT(bad.status().message(),
              HasSubstr("must be one of LEFT, RIGHT, got \"UP\""));
  auto signed_shift = RunBinary("bit_shift", MakeTensor<int32_t>({1}, {1}),
                          MakeTensor<int32_t>({1}, {1}), left);
  EXPECT_THAT(signed_shift.status().message(),
              HasSubstr("has dtype int32: expected uint8"));
}

}  // namespace
}  // namespace scopeflow
