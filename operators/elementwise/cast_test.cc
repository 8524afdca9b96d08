#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/float16.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string CastOp(int out_dtype, bool saturate = true) {
  return absl::StrFormat(R"pb(type: "cast"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "out" }
                              attrs { name: "out_dtype" i: %d }
                              attrs { name: "saturate" b: %s })pb",
                         out_dtype, saturate ? "true" : "false");
}

absl::StatusOr<Tensor> RunCast(const Tensor& x, DataType out_dtype,
                               bool saturate = true) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(CastOp(out_dtype, saturate), {{"x", x}}, {"out"});
  if (!out.ok()) return out.status();
  EXPECT_EQ((*out)[0].dtype(), out_dtype);
  EXPECT_EQ((*out)[0].dims(), x.dims());
  return (*out)[0];
}

TEST(CastTest, FromFloat32) {
  const Tensor x = MakeTensor<float>({2, 3}, {1.75f, -2.5f, 0, 300, -0.5f, 3});
  auto f64 = RunCast(x, kFloat64);
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT(Values<double>(*f64), ElementsAre(1.75, -2.5, 0, 300, -0.5, 3));
  auto i32 = RunCast(x, kInt32);
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>(*i32), ElementsAre(1, -2, 0, 300, 0, 3));
  auto i64 = RunCast(x, kInt64);
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_THAT(Values<int64_t>(*i64), ElementsAre(1, -2, 0, 300, 0, 3));
  // Saturates at uint8's limits.
  auto u8 = RunCast(x, kUInt8);
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_THAT(Values<uint8_t>(*u8), ElementsAre(1, 0, 0, 255, 0, 3));
  auto b = RunCast(x, kBool);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(Values<bool>(*b),
              ElementsAre(true, true, false, true, true, true));
  auto f32 = RunCast(x, kFloat32);
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_THAT(Values<float>(*f32), ElementsAre(1.75f, -2.5f, 0, 300, -0.5f, 3));
}

TEST(CastTest, FloatToIntegerEdgeCases) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x =
      MakeTensor<float>({5}, {std::nanf(""), inf, -inf, 3e9f, -3e9f});
  auto i32 = RunCast(x, kInt32);
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>(*i32),
              ElementsAre(0, std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<int32_t>::min()));
  auto i64 =
      RunCast(MakeTensor<double>({3}, {std::nan(""), 1e19, -1e19}), kInt64);
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_THAT(Values<int64_t>(*i64),
              ElementsAre(0, std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::min()));
  auto b = RunCast(MakeTensor<double>({2}, {std::nan(""), -0.0}), kBool);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(Values<bool>(*b), ElementsAre(true, false));
}

TEST(CastTest, FromFloat64) {
  const Tensor x = MakeTensor<double>({3}, {0.1, -7.9, 1e300});
  auto f32 = RunCast(x, kFloat32);
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_THAT(Values<float>(*f32),
              ElementsAre(0.1f, -7.9f, std::numeric_limits<float>::infinity()));
  auto i32 = RunCast(x, kInt32);
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>(*i32),
              ElementsAre(0, -7, std::numeric_limits<int32_t>::max()));
}

TEST(CastTest, FromIntegers) {
  const Tensor x32 = MakeTensor<int32_t>({4}, {-1, 0, 256 + 7, 1 << 30});
  auto f32 = RunCast(x32, kFloat32);
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_THAT(Values<float>(*f32), ElementsAre(-1, 0, 263, 1073741824.0f));
  auto i64 = RunCast(x32, kInt64);
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_THAT(Values<int64_t>(*i64), ElementsAre(-1, 0, 263, 1 << 30));
  // Narrowing integers keeps the low bits.
  auto u8 = RunCast(x32, kUInt8);
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_THAT(Values<uint8_t>(*u8), ElementsAre(255, 0, 7, 0));
  auto b = RunCast(x32, kBool);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(Values<bool>(*b), ElementsAre(true, false, true, true));

  const int64_t big = (int64_t{1} << 33) + 5;
  const Tensor x64 = MakeTensor<int64_t>({2}, {big, -3});
  auto to32 = RunCast(x64, kInt32);
  ASSERT_TRUE(to32.ok()) << to32.status();
  EXPECT_THAT(Values<int32_t>(*to32), ElementsAre(5, -3));
  auto to64f = RunCast(x64, kFloat64);
  ASSERT_TRUE(to64f.ok()) << to64f.status();
  EXPECT_THAT(Values<double>(*to64f), ElementsAre(8589934597.0, -3));
}

TEST(CastTest, FromUInt8AndBool) {
  const Tensor u8 = MakeTensor<uint8_t>({3}, {0, 200, 255});
  auto i32 = RunCast(u8, kInt32);
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>(*i32), ElementsAre(0, 200, 255));
  auto f64 = RunCast(u8, kFloat64);
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT(Values<double>(*f64), ElementsAre(0, 200, 255));
  auto b = RunCast(u8, kBool);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(Values<bool>(*b), ElementsAre(false, true, true));

  const Tensor flags = MakeTensor<bool>({2}, {true, false});
  auto f32 = RunCast(flags, kFloat32);
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_THAT(Values<float>(*f32), ElementsAre(1, 0));
  auto i64 = RunCast(flags, kInt64);
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_THAT(Values<int64_t>(*i64), ElementsAre(1, 0));
  auto to_u8 = RunCast(flags, kUInt8);
  ASSERT_TRUE(to_u8.ok()) << to_u8.status();
  EXPECT_THAT(Values<uint8_t>(*to_u8), ElementsAre(1, 0));
}

// int8: floats truncate toward zero and saturate at -128 and 127, wider
// integers keep their low 8 bits, and int8 widens with its sign.
TEST(CastTest, Int8) {
  const Tensor floats =
      MakeTensor<float>({6}, {-1000.0f, -128.9f, -2.7f, 2.7f, 127.5f, 1e9f});
  auto from_float = RunCast(floats, kInt8);
  ASSERT_TRUE(from_float.ok()) << from_float.status();
  EXPECT_THAT(Values<int8_t>(*from_float),
              ElementsAre(-128, -128, -2, 2, 127, 127));

  const Tensor wide = MakeTensor<int32_t>({3}, {300, -129, -5});
  auto wrapped = RunCast(wide, kInt8);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_THAT(Values<int8_t>(*wrapped), ElementsAre(44, 127, -5));

  const Tensor i8 = MakeTensor<int8_t>({3}, {-128, -1, 127});
  auto to_f32 = RunCast(i8, kFloat32);
  ASSERT_TRUE(to_f32.ok()) << to_f32.status();
  EXPECT_THAT(Values<float>(*to_f32), ElementsAre(-128, -1, 127));
  auto to_i64 = RunCast(i8, kInt64);
  ASSERT_TRUE(to_i64.ok()) << to_i64.status();
  EXPECT_THAT(Values<int64_t>(*to_i64), ElementsAre(-128, -1, 127));
  auto to_u8 = RunCast(i8, kUInt8);
  ASSERT_TRUE(to_u8.ok()) << to_u8.status();
  EXPECT_THAT(Values<uint8_t>(*to_u8), ElementsAre(128, 255, 127));
}

TEST(CastTest, Float16) {
  const Tensor x = MakeTensor<float>({3}, {1.5f, -2, 65536});
  auto half = RunCast(x, kFloat16);
  ASSERT_TRUE(half.ok()) << half.status();
  const std::vector<float16> values = Values<float16>(*half);
  EXPECT_EQ(HalfToFloat(values[0]), 1.5f);
  EXPECT_EQ(HalfToFloat(values[1]), -2);
  EXPECT_TRUE(std::isinf(HalfToFloat(values[2])));  // Beyond half's range.
  auto back = RunCast(*half, kInt32);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(Values<int32_t>(*back),
              ElementsAre(1, -2, std::numeric_limits<int32_t>::max()));
}

// Floats saturate at each type's limits and truncate toward zero; wider
// integers keep their low bits (two's complement).
TEST(CastTest, SixteenBitsAndUnsigned) {
  const Tensor floats = MakeTensor<float>({5}, {-1e6f, -2.7f, 2.7f, 1e6f, NAN});
  auto i16 = RunCast(floats, kInt16);
  ASSERT_TRUE(i16.ok()) << i16.status();
  EXPECT_THAT(Values<int16_t>(*i16), ElementsAre(-32768, -2, 2, 32767, 0));
  auto u16 = RunCast(floats, kUInt16);
  ASSERT_TRUE(u16.ok()) << u16.status();
  EXPECT_THAT(Values<uint16_t>(*u16), ElementsAre(0, 0, 2, 65535, 0));
  auto u32 = RunCast(MakeTensor<double>({2}, {4294967295.5, 1e300}), kUInt32);
  ASSERT_TRUE(u32.ok()) << u32.status();
  EXPECT_THAT(Values<uint32_t>(*u32), ElementsAre(4294967295u, 4294967295u));

  const Tensor wide = MakeTensor<int64_t>({3}, {-1, 65537, 4294967296});
  auto wrapped16 = RunCast(wide, kUInt16);
  ASSERT_TRUE(wrapped16.ok()) << wrapped16.status();
  EXPECT_THAT(Values<uint16_t>(*wrapped16), ElementsAre(65535, 1, 0));
  auto wrapped64 = RunCast(wide, kUInt64);
  ASSERT_TRUE(wrapped64.ok()) << wrapped64.status();
  EXPECT_THAT(Values<uint64_t>(*wrapped64),
              ElementsAre(18446744073709551615u, 65537u, 4294967296u));

  const Tensor big = MakeTensor<uint64_t>({2}, {18446744073709551615u, 7});
  auto to_i64 = RunCast(big, kInt64);
  ASSERT_TRUE(to_i64.ok()) << to_i64.status();
  EXPECT_THAT(Values<int64_t>(*to_i64), ElementsAre(-1, 7));
  auto to_f64 = RunCast(big, kFloat64);
  ASSERT_TRUE(to_f64.ok()) << to_f64.status();
  EXPECT_THAT(Values<double>(*to_f64), ElementsAre(18446744073709551616.0, 7));
  auto to_i16 = RunCast(MakeTensor<uint32_t>({1}, {98304}), kInt16);
  ASSERT_TRUE(to_i16.ok()) << to_i16.status();
  EXPECT_THAT(Values<int16_t>(*to_i16), ElementsAre(-32768));
}

TEST(CastTest, BFloat16) {
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1). -3e38 is within
  // bfloat16's range (to about 3.39e38) but beyond int32's and float16's.
  const Tensor x = MakeTensor<float>({4}, {1.5f, 1.00390625f, -3.0e38f, 7.0f});
  auto bf16 = RunCast(x, kBFloat16);
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  const std::vector<bfloat16> values = Values<bfloat16>(*bf16);
  EXPECT_EQ(values[0].bits, 0x3fc0);
  EXPECT_EQ(values[1].bits, 0x3f80);
  EXPECT_EQ(BFloat16ToFloat(values[3]), 7.0f);
  auto back = RunCast(*bf16, kInt32);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(Values<int32_t>(*back),
              ElementsAre(1, 1, std::numeric_limits<int32_t>::min(), 7));
  auto half = RunCast(*bf16, kFloat16);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(HalfToFloat(Values<float16>(*half)[0]), 1.5f);
  EXPECT_TRUE(std::isinf(HalfToFloat(Values<float16>(*half)[2])));
}

// Values from the formats' definitions (framework/float8.h): to nearest
// even, beyond the range saturated or, with saturate false, NaN (or
// infinity for float8e5m2).
TEST(CastTest, Float8BothWaysWithSaturate) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = MakeTensor<float>({5}, {1.0625f, 500, -inf, 0.5f, NAN});
  auto e4m3 = RunCast(x, kFloat8E4M3FN);
  ASSERT_TRUE(e4m3.ok()) << e4m3.status();
  std::vector<uint8_t> bits;
  for (float8_e4m3fn v : Values<float8_e4m3fn>(*e4m3)) bits.push_back(v.bits);
  EXPECT_THAT(bits, ElementsAre(0x38, 0x7e, 0xfe, 0x30, 0x7f));
  auto back = RunCast(*e4m3, kFloat32);
  ASSERT_TRUE(back.ok()) << back.status();
  const std::vector<float> values = Values<float>(*back);
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(values[1], 448);
  EXPECT_EQ(values[2], -448);
  EXPECT_TRUE(std::isnan(values[4]));

  auto e5m2 = RunCast(x, kFloat8E5M2, /*saturate=*/false);
  ASSERT_TRUE(e5m2.ok()) << e5m2.status();
  auto e5m2_back = RunCast(*e5m2, kFloat64);
  ASSERT_TRUE(e5m2_back.ok()) << e5m2_back.status();
  // 1.0625 lies nearer 1 than 1.25.
  EXPECT_EQ(Values<double>(*e5m2_back)[0], 1.0);
  EXPECT_EQ(Values<double>(*e5m2_back)[1], 512);
  EXPECT_EQ(Values<double>(*e5m2_back)[2], -inf);
  auto fnuz = RunCast(MakeTensor<float>({2}, {1e6f, -0.0f}), kFloat8E4M3FNUZ,
                      /*saturate=*/false);
  ASSERT_TRUE(fnuz.ok()) << fnuz.status();
  EXPECT_EQ(Values<float8_e4m3fnuz>(*fnuz)[0].bits, 0x80);  // NaN.
  EXPECT_EQ(Values<float8_e4m3fnuz>(*fnuz)[1].bits, 0x00);  // No -0.

  // From float16 through float32, and to an integer.
  auto from_half = RunCast(MakeTensor<float16>({1}, {FloatToHalf(-2.5f)}),
                           kFloat8E5M2FNUZ);
  ASSERT_TRUE(from_half.ok()) << from_half.status();
  auto to_int = RunCast(*from_half, kInt32);
  ASSERT_TRUE(to_int.ok()) << to_int.status();
  EXPECT_THAT(Values<int32_t>(*to_int), ElementsAre(-2));
}

TEST(CastTest, ScalarAndEmpty) {
  auto scalar = RunCast(MakeTensor<int64_t>({}, {42}), kFloat32);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_THAT(Values<float>(*scalar), ElementsAre(42));
  auto empty = RunCast(MakeTensor<float>({0, 2}, {}), kInt32);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->numel(), 0);
}

TEST(CastTest, BadOutDtype) {
  for (int bad : {0, 24, -1, 42}) {
    SCOPED_TRACE(bad);
    absl::Status status =
        PrepareOp(CastOp(bad), {{"x", MakeTensor<float>({1}, {1})}});
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrFormat(
                    "op 0 (cast): attribute \"out_dtype\" must be a dtype "
                    "number, one of 1 (float32), 2 (float64), 3 (float16), "
                    "4 (int32), 5 (int64), 6 (uint8), 7 (bool), 8 (int8), "
                    "9 (int16), 10 (uint16), 11 (uint32), 12 (uint64), "
                    "13 (bfloat16), 14 (float8e4m3fn), 15 (float8e4m3fnuz), "
                    "16 (float8e5m2), 17 (float8e5m2fnuz), 18 (int4), "
                    "19 (uint4), 20 (int2), 21 (uint2), 22 (float4e2m1), "
                    "23 (float8e8m0); got %d",
                    bad)));
  }
}

TEST(CastTest, MissingOutDtypeAndInput) {
  absl::Status no_attr =
      PrepareOp(R"pb(type: "cast"
                     inputs { slot: "X" vars: "x" }
                     outputs { slot: "Out" vars: "out" })pb",
                {{"x", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(no_attr.message(),
              HasSubstr("op 0 (cast): missing required attribute "
                        "\"out_dtype\" (int)"));
  absl::Status no_input = PrepareOp(R"pb(type: "cast"
                                         outputs { slot: "Out" vars: "out" }
                                         attrs { name: "out_dtype" i: 1 })pb",
                                    {});
  EXPECT_THAT(no_input.message(),
              HasSubstr("op 0 (cast): missing required input \"X\""));
}

}  // namespace
}  // namespace scopeflow
