// cast to and from int4, uint4, int2, uint2, float4e2m1 and float8e8m0
// (framework/small_types.h), against hand-computed values.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string CastOp(DataType out_dtype, const std::string& rounding = "up",
                   bool saturate = true) {
  return absl::StrFormat(R"pb(type: "cast"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "out" }
                              attrs { name: "out_dtype" i: %d }
                              attrs { name: "saturate" b: %s }
                              attrs { name: "e8m0_rounding" s: "%s" })pb",
                         static_cast<int>(out_dtype),
                         saturate ? "true" : "false", rounding);
}

Tensor Cast(const Tensor& x, DataType out_dtype,
            const std::string& rounding = "up", bool saturate = true) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(CastOp(out_dtype, rounding, saturate), {{"x", x}}, {"out"});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return Tensor();
  EXPECT_EQ((*out)[0].dtype(), out_dtype);
  EXPECT_EQ((*out)[0].dims(), x.dims());
  return (*out)[0];
}

template <typename T>
std::vector<int> Ints(const Tensor& tensor) {
  std::vector<int> values;
  for (const T& v : Values<T>(tensor)) values.push_back(v.value);
  return values;
}

template <typename T>
std::vector<int> Bits(const Tensor& tensor) {
  std::vector<int> values;
  for (const T& v : Values<T>(tensor)) values.push_back(v.bits);
  return values;
}

// Into the small integers the low bits are kept (ONNX's cases), a float
// truncated toward zero first, NaN giving 0.
TEST(CastSmallTypesTest, ToSmallIntegersKeepsTheLowBits) {
  const Tensor floats =
      MakeTensor<float>({8}, {-9, -8, 7, 8, 15, 2.7f, -2.7f, std::nanf("")});
  EXPECT_THAT(Ints<qint4>(Cast(floats, kInt4)),
              ElementsAre(7, -8, 7, -8, -1, 2, -2, 0));
  EXPECT_THAT(Ints<quint4>(Cast(floats, kUInt4)),
              ElementsAre(7, 8, 7, 8, 15, 2, 14, 0));
  const Tensor ints = MakeTensor<int32_t>({5}, {-3, -2, 1, 2, 5});
  EXPECT_THAT(Ints<qint2>(Cast(ints, kInt2)), ElementsAre(1, -2, 1, -2, 1));
  EXPECT_THAT(Ints<quint2>(Cast(ints, kUInt2)), ElementsAre(1, 2, 1, 2, 1));
  EXPECT_THAT(
      Ints<quint4>(Cast(MakeTensor<uint64_t>({2}, {17, ~0ull}), kUInt4)),
      ElementsAre(1, 15));
  EXPECT_THAT(Ints<qint4>(Cast(MakeTensor<bool>({2}, {true, false}), kInt4)),
              ElementsAre(1, 0));
  const Tensor halves =
      MakeTensor<float16>({2}, {FloatToHalf(-9.5f), FloatToHalf(6.0f)});
  EXPECT_THAT(Ints<qint4>(Cast(halves, kInt4)), ElementsAre(7, 6));
}

TEST(CastSmallTypesTest, FromSmallIntegers) {
  const Tensor int4 =
      MakeTensor<qint4>({4}, {qint4{-8}, qint4{-1}, qint4{0}, qint4{7}});
  EXPECT_THAT(Values<float>(Cast(int4, kFloat32)), ElementsAre(-8, -1, 0, 7));
  EXPECT_THAT(Values<int8_t>(Cast(int4, kInt8)), ElementsAre(-8, -1, 0, 7));
  // To a narrower or unsigned type: wrapped as integers are.
  EXPECT_THAT(Values<uint8_t>(Cast(int4, kUInt8)), ElementsAre(248, 255, 0, 7));
  EXPECT_THAT(Ints<qint2>(Cast(int4, kInt2)), ElementsAre(0, -1, 0, -1));
  EXPECT_THAT(Values<bool>(Cast(int4, kBool)),
              ElementsAre(true, true, false, true));
  EXPECT_THAT(Bits<float4_e2m1>(Cast(int4, kFloat4E2M1)),
              ElementsAre(0xf, 0xa, 0x0, 0x7));
  const Tensor uint2 =
      MakeTensor<quint2>({3}, {quint2{3}, quint2{0}, quint2{2}});
  EXPECT_THAT(Values<double>(Cast(uint2, kFloat64)), ElementsAre(3, 0, 2));
  const Tensor half = Cast(uint2, kFloat16);
  EXPECT_EQ(HalfToFloat(Values<float16>(half)[0]), 3.0f);
}

// Nearest, ties to even, saturated at +-6; NaN gives -0.
TEST(CastSmallTypesTest, Float4E2M1BothWays) {
  const Tensor x = MakeTensor<float>(
      {9}, {0.25f, 0.75f, 2.5f, 3.5f, 5, 1e6f, -kInf, std::nanf(""), -0.0f});
  const Tensor fp4 = Cast(x, kFloat4E2M1);
  EXPECT_THAT(Bits<float4_e2m1>(fp4),
              ElementsAre(0x0, 0x2, 0x4, 0x6, 0x6, 0x7, 0xf, 0x8, 0x8));
  const std::vector<float> back = Values<float>(Cast(fp4, kFloat32));
  EXPECT_THAT(back, ElementsAre(0, 1, 2, 4, 4, 6, -6, 0, 0));
  EXPECT_TRUE(std::signbit(back[8]));
  EXPECT_THAT(Values<int32_t>(Cast(fp4, kInt32)),
              ElementsAre(0, 1, 2, 4, 4, 6, -6, 0, 0));
  EXPECT_THAT(Ints<qint4>(Cast(fp4, kInt4)),
              ElementsAre(0, 1, 2, 4, 4, 6, -6, 0, 0));
  // "saturate" concerns the float8 types only: float4e2m1 always saturates.
  EXPECT_THAT(Bits<float4_e2m1>(Cast(MakeTensor<float>({1}, {100}), kFloat4E2M1,
                                     "up", false)),
              ElementsAre(0x7));
}

TEST(CastSmallTypesTest, Float8E8M0RoundingModes) {
  const Tensor x = MakeTensor<float>({6}, {0, 0.124f, 1.5f, 1.1f, -4, 3e38f});
  EXPECT_THAT(Bits<float8_e8m0>(Cast(x, kFloat8E8M0, "up")),
              ElementsAre(0x00, 0x7c, 0x80, 0x80, 0x81, 0xfe));
  EXPECT_THAT(Bits<float8_e8m0>(Cast(x, kFloat8E8M0, "down")),
              ElementsAre(0x00, 0x7b, 0x7f, 0x7f, 0x81, 0xfe));
  EXPECT_THAT(Bits<float8_e8m0>(Cast(x, kFloat8E8M0, "nearest")),
              ElementsAre(0x00, 0x7c, 0x80, 0x7f, 0x81, 0xfe));
  EXPECT_THAT(Bits<float8_e8m0>(Cast(x, kFloat8E8M0, "up", false)),
              ElementsAre(0x00, 0x7c, 0x80, 0x80, 0x81, 0xff));
  const Tensor e8m0 =
      MakeTensor<float8_e8m0>({4}, {float8_e8m0{0x7c}, float8_e8m0{0x82},
                                    float8_e8m0{0x00}, float8_e8m0{0xff}});
  const std::vector<float> back = Values<float>(Cast(e8m0, kFloat32));
  EXPECT_EQ(back[0], 0.125f);
  EXPECT_EQ(back[1], 8.0f);
  EXPECT_EQ(back[2], std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(back[3]));
  // Between the small types, through float32.
  EXPECT_THAT(Bits<float4_e2m1>(Cast(e8m0, kFloat4E2M1)),
              ElementsAre(0x0, 0x7, 0x0, 0x8));
}

TEST(CastSmallTypesTest, BadRoundingIsRefused) {
  absl::Status status = PrepareOp(CastOp(kFloat8E8M0, "sideways"),
                                  {{"x", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(status.message(), HasSubstr("e8m0_rounding"));
  EXPECT_THAT(status.message(), HasSubstr("sideways"));
}

}  // namespace
}  // namespace scopeflow
