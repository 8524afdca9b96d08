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

std::string CastOp(int out_dtype) {
  return absl::StrFormat(R"pb(type: "cast"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "out" }
                              attrs { name: "out_dtype" i: %d })pb",
                         out_dtype);
}

absl::StatusOr<Tensor> RunCast(const Tensor& x, DataType out_dtype) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(CastOp(out_dtype), {{"x", x}}, {"out"});
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

TEST(CastTest, ScalarAndEmpty) {
  auto scalar = RunCast(MakeTensor<int64_t>({}, {42}), kFloat32);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_THAT(Values<float>(*scalar), ElementsAre(42));
  auto empty = RunCast(MakeTensor<float>({0, 2}, {}), kInt32);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->numel(), 0);
}

TEST(CastTest, BadOutDtype) {
  for (int bad : {0, 9, -1, 42}) {
    SCOPED_TRACE(bad);
    absl::Status status =
        PrepareOp(CastOp(bad), {{"x", MakeTensor<float>({1}, {1})}});
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrFormat(
                    "op 0 (cast): attribute \"out_dtype\" must be a dtype "
                    "number, one of 1 (float32), 2 (float64), 3 (float16), "
                    "4 (int32), 5 (int64), 6 (uint8), 7 (bool), 8 (int8); got %d",
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
