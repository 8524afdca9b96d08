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

std::string BitCastOp(DataType to) {
  return absl::StrCat(R"pb(type: "bit_cast"
                           inputs { slot: "X" vars: "x" }
                           outputs { slot: "Out" vars: "y" }
                           attrs { name: "out_dtype" i:)pb",
                      static_cast<int>(to), " }");
}

TEST(BitCastTest, ReadsTheBytesAsTheOtherDtype) {
  // IEEE 754: 1.0f is 0x3f800000, -2.0f 0xc0000000, 1.0 0x3ff0000000000000.
  auto out = RunOp(BitCastOp(kInt32),
                   {{"x", MakeTensor<float>({2}, {1.0f, -2.0f})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]),
              ElementsAre(0x3f800000, static_cast<int32_t>(0xc0000000u)));
  out = RunOp(BitCastOp(kFloat64),
              {{"x", MakeTensor<int64_t>({1}, {0x3ff0000000000000})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(1.0));
  out = RunOp(BitCastOp(kUInt8), {{"x", MakeTensor<int8_t>({2}, {-1, 5})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(255, 5));
  out = RunOp(BitCastOp(kUInt8), {{"x", MakeTensor<bool>({2}, {true, false})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(1, 0));
}

TEST(BitCastTest, TwoAndOneByteDtypes) {
  // bfloat16 1.0 is 0x3f80 (float32's top half); float8 e4m3fn 1.0 is 0x38
  // (exponent bias 7), e5m2 -2.0 is 0xc0.
  auto out = RunOp(BitCastOp(kBFloat16),
                   {{"x", MakeTensor<uint16_t>({1}, {0x3f80})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kBFloat16);
  EXPECT_EQ(Values<bfloat16>((*out)[0])[0].bits, 0x3f80);
  out = RunOp(BitCastOp(kInt16), {{"x", MakeTensor<uint16_t>({1}, {0xffff})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int16_t>((*out)[0]), ElementsAre(-1));
  out = RunOp(BitCastOp(kFloat8E4M3FN),
              {{"x", MakeTensor<uint8_t>({1}, {0x38})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Float8ToFloat(Values<float8_e4m3fn>((*out)[0])[0]), 1.0f);
  out = RunOp(BitCastOp(kUInt8),
              {{"x", MakeTensor<float8_e5m2>({1}, {float8_e5m2{0xc0}})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(0xc0));
}

TEST(BitCastTest, SizesMustMatchAndBoolComesFromBoolOnly) {
  absl::Status status =
      PrepareOp(BitCastOp(kInt64), {{"x", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"X\" (variable \"x\") has dtype float32, of "
                        "4: expected the same size"));
  status = PrepareOp(BitCastOp(kBool), {{"x", MakeTensor<uint8_t>({1}, {2})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("whose bytes need not be 0 or 1"));
}

}  // namespace
}  // namespace scopeflow
