// quantize_linear, dequantize_linear and dynamic_quantize_linear against
// values computed by hand from ONNX's formulas (round half to even, then
// saturate), and their error paths.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/float16.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string QuantOp(const std::string& type, bool zero_point,
                    const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"", type, "\"\n", "inputs { slot: \"X\" vars: \"x\" }\n",
      "inputs { slot: \"Scale\" vars: \"s\" }\n",
      zero_point ? "inputs { slot: \"ZeroPoint\" vars: \"z\" }\n" : "",
      "outputs { slot: \"Y\" vars: \"y\" }\n", attrs);
}

TEST(QuantizeLinearTest, PerTensorUint8RoundsHalfToEvenAndSaturates) {
  // x / 2 = 0, 1, 1.5, 500, -127, -500, 0.5, 2.5, -0.5, -1.5: halves go to
  // the even neighbour (1.5 -> 2, 0.5 -> 0, 2.5 -> 2, -0.5 -> 0, -1.5 ->
  // -2), then + 128 saturated to [0, 255].
  auto out = RunOp(QuantOp("quantize_linear", true),
                   {{"x", MakeTensor<float>({10}, {0, 2, 3, 1000, -254, -1000,
                                                   1, 5, -1, -3})},
                    {"s", MakeTensor<float>({}, {2})},
                    {"z", MakeTensor<uint8_t>({}, {128})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kUInt8);
  EXPECT_THAT(Values<uint8_t>((*out)[0]),
              ElementsAre(128, 129, 130, 255, 1, 0, 128, 130, 128, 126));
}

TEST(QuantizeLinearTest, Int8ZeroPointAndNoZeroPoint) {
  auto out =
      RunOp(QuantOp("quantize_linear", true),
            {{"x", MakeTensor<float>({4}, {-200, 126.5f, 127.5f, -0.5f})},
             {"s", MakeTensor<float>({1}, {1})},
             {"z", MakeTensor<int8_t>({1}, {-1})}},
            {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt8);
  // -200 saturates; 126.5 -> 126, 127.5 -> 128, -0.5 -> 0; then - 1.
  EXPECT_THAT(Values<int8_t>((*out)[0]), ElementsAre(-128, 125, 127, -1));

  // Without a zero point the output type is the attribute's (int8 = 8).
  auto no_zero = RunOp(
      QuantOp("quantize_linear", false, "attrs { name: \"out_dtype\" i: 8 }"),
      {{"x", MakeTensor<float>({3}, {300, -300, 4.5f})},
       {"s", MakeTensor<float>({}, {1})}},
      {"y"});
  ASSERT_TRUE(no_zero.ok()) << no_zero.status();
  EXPECT_THAT(Values<int8_t>((*no_zero)[0]), ElementsAre(127, -128, 4));
}

TEST(QuantizeLinearTest, PerAxisAndPerBlock) {
  // Axis 1 of [2, 3]: scales 1, 2, 4 and zero points 0, 10, 20.
  auto axis = RunOp(QuantOp("quantize_linear", true),
                    {{"x", MakeTensor<float>({2, 3}, {1, 2, 4, 3, 6, -8})},
                     {"s", MakeTensor<float>({3}, {1, 2, 4})},
                     {"z", MakeTensor<uint8_t>({3}, {0, 10, 20})}},
                    {"y"});
  ASSERT_TRUE(axis.ok()) << axis.status();
  EXPECT_THAT(Values<uint8_t>((*axis)[0]), ElementsAre(1, 11, 21, 3, 13, 18));

  // Blocks of 2 along axis 1 of [2, 4]: scale [2, 2], one per row and
  // block. Row 0: scales 1 | 2; row 1: scales 4 | 0.5.
  auto blocked = RunOp(
      QuantOp(
          "quantize_linear", false,
          "attrs { name: \"axis\" i: 1 } attrs { name: \"block_size\" i: 2 }"),
      {{"x", MakeTensor<float>({2, 4}, {1, 2, 4, 6, 4, 8, 1, 2})},
       {"s", MakeTensor<float>({2, 2}, {1, 2, 4, 0.5f})}},
      {"y"});
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  EXPECT_THAT(Values<uint8_t>((*blocked)[0]),
              ElementsAre(1, 2, 2, 3, 1, 2, 2, 4));
}

TEST(QuantizeLinearTest, NanGivesTheZeroPointAndFloat16Works) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunOp(QuantOp("quantize_linear", true),
                   {{"x", MakeTensor<float>({2}, {nan, 7})},
                    {"s", MakeTensor<float>({}, {1})},
                    {"z", MakeTensor<uint8_t>({}, {9})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(9, 16));

  auto half =
      RunOp(QuantOp("quantize_linear", true),
            {{"x", MakeTensor<float16>({2}, {FloatToHalf(3), FloatToHalf(-5)})},
             {"s", MakeTensor<float16>({}, {FloatToHalf(2)})},
             {"z", MakeTensor<int8_t>({}, {0})}},
            {"y"});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_THAT(Values<int8_t>((*half)[0]), ElementsAre(2, -2));
}

TEST(QuantizeLinearTest, ShapeInference) {
  auto info = InferAtPrepare(
      QuantOp("quantize_linear", true),
      {{"x", kFloat32, {-1, 3, 5}}, {"s", kFloat32, {3}}, {"z", kInt8, {3}}},
      "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->dtype, kInt8);
  EXPECT_THAT(info->dims, ElementsAre(-1, 3, 5));
}

TEST(QuantizeLinearTest, Errors) {
  // A scale of the wrong length for axis 1.
  absl::Status wrong_scale =
      PrepareOp(QuantOp("quantize_linear", false),
                {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                 {"s", MakeTensor<float>({2}, {1, 1})}});
  EXPECT_THAT(std::string(wrong_scale.message()),
              HasSubstr("input \"Scale\" (variable \"s\", shape [2]): expected "
                        "one element (per tensor) or [3]"));
  // A zero point of another shape than the scale.
  auto zero_shape = RunOp(QuantOp("quantize_linear", true),
                          {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                           {"s", MakeTensor<float>({3}, {1, 1, 1})},
                           {"z", MakeTensor<uint8_t>({}, {0})}},
                          {"y"});
  ASSERT_FALSE(zero_shape.ok());
  EXPECT_THAT(std::string(zero_shape.status().message()),
              HasSubstr("input \"ZeroPoint\" (variable \"z\", shape []): "
                        "expected the shape of input \"Scale\" (variable "
                        "\"s\", shape [3])"));
  // Known at Prepare: [2] against [3].
  absl::Status zero_declared =
      PrepareOp(QuantOp("quantize_linear", true),
                {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                 {"s", MakeTensor<float>({3}, {1, 1, 1})},
                 {"z", MakeTensor<uint8_t>({2}, {0, 0})}});
  EXPECT_THAT(std::string(zero_declared.message()),
              HasSubstr("input \"ZeroPoint\" (variable \"z\", shape [2]): "
                        "expected the shape of input \"Scale\""));
  // An int32 zero point: quantize writes uint8 or int8 only.
  absl::Status zero_dtype = PrepareOp(QuantOp("quantize_linear", true),
                                      {{"x", MakeTensor<float>({1}, {1})},
                                       {"s", MakeTensor<float>({}, {1})},
                                       {"z", MakeTensor<int32_t>({}, {0})}});
  EXPECT_THAT(
      std::string(zero_dtype.message()),
      HasSubstr("input \"ZeroPoint\" (variable \"z\") has dtype int32"));
  // A scale of another float type than X.
  absl::Status scale_dtype =
      PrepareOp(QuantOp("quantize_linear", false),
                {{"x", MakeTensor<float>({1}, {1})},
                 {"s", MakeTensor<float16>({}, {FloatToHalf(1)})}});
  EXPECT_FALSE(scale_dtype.ok());
  // Blocks that do not match the scale's shape.
  absl::Status blocks = PrepareOp(
      QuantOp("quantize_linear", false, "attrs { name: \"block_size\" i: 2 }"),
      {{"x", MakeTensor<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
       {"s", MakeTensor<float>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  EXPECT_THAT(std::string(blocks.message()),
              HasSubstr("with block_size 2 along axis 1 of [2, 4], expected "
                        "[2, 2]"));
}

TEST(DequantizeLinearTest, PerTensorPerAxisAndInt32) {
  auto out = RunOp(QuantOp("dequantize_linear", true),
                   {{"x", MakeTensor<uint8_t>({4}, {0, 3, 128, 255})},
                    {"s", MakeTensor<float>({}, {2})},
                    {"z", MakeTensor<uint8_t>({}, {128})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat32);
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-256, -250, 0, 254));

  // Axis 0 of [2, 2], int8: rows scaled by 0.5 and 3, zero points -2, 1.
  auto axis =
      RunOp(QuantOp("dequantize_linear", true, "attrs { name: \"axis\" i: 0 }"),
            {{"x", MakeTensor<int8_t>({2, 2}, {-128, 2, 127, 1})},
             {"s", MakeTensor<float>({2}, {0.5f, 3})},
             {"z", MakeTensor<int8_t>({2}, {-2, 1})}},
            {"y"});
  ASSERT_TRUE(axis.ok()) << axis.status();
  EXPECT_THAT(Values<float>((*axis)[0]), ElementsAre(-63, 2, 378, 0));

  auto wide = RunOp(QuantOp("dequantize_linear", false),
                    {{"x", MakeTensor<int32_t>({2}, {-100000, 7})},
                     {"s", MakeTensor<float>({}, {0.25f})}},
                    {"y"});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_THAT(Values<float>((*wide)[0]), ElementsAre(-25000, 1.75f));

  auto half = RunOp(QuantOp("dequantize_linear", false),
                    {{"x", MakeTensor<int8_t>({1}, {-3})},
                     {"s", MakeTensor<float16>({}, {FloatToHalf(0.5f)})}},
                    {"y"});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ((*half)[0].dtype(), kFloat16);
  EXPECT_EQ(HalfToFloat((*half)[0].data<float16>()[0]), -1.5f);
}

TEST(QuantizeLinearTest, SixteenBitsSaturateAtTheirLimits) {
  // x / 0.5 = 0, -40000, 2.5 (to even: 2), 80000; + 32768 into [0, 65535].
  auto u16 = RunOp(QuantOp("quantize_linear", true),
                   {{"x", MakeTensor<float>({4}, {0, -20000, 1.25f, 40000})},
                    {"s", MakeTensor<float>({}, {0.5f})},
                    // A [1] zero point serves a [] scale: both per tensor.
                    {"z", MakeTensor<uint16_t>({1}, {32768})}},
                   {"y"});
  ASSERT_TRUE(u16.ok()) << u16.status();
  EXPECT_EQ((*u16)[0].dtype(), kUInt16);
  EXPECT_THAT(Values<uint16_t>((*u16)[0]), ElementsAre(32768, 0, 32770, 65535));
  // Without a zero point: the attribute's dtype (int16 = 9).
  auto i16 = RunOp(
      QuantOp("quantize_linear", false, "attrs { name: \"out_dtype\" i: 9 }"),
      {{"x", MakeTensor<float>({3}, {70000, -1.5f, -70000})},
       {"s", MakeTensor<float>({}, {1})}},
      {"y"});
  ASSERT_TRUE(i16.ok()) << i16.status();
  EXPECT_THAT(Values<int16_t>((*i16)[0]), ElementsAre(32767, -2, -32768));
  // And back: (X - ZeroPoint) * Scale.
  auto back = RunOp(QuantOp("dequantize_linear", true),
                    {{"x", MakeTensor<int16_t>({2}, {-32768, 5})},
                     {"s", MakeTensor<float>({}, {0.5f})},
                     {"z", MakeTensor<int16_t>({}, {1})}},
                    {"y"});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(Values<float>((*back)[0]), ElementsAre(-16384.5f, 2));
}

TEST(QuantizeLinearTest, Float8RoundsToNearestAndSaturates) {
  // x / 2 = 1.5 (exact), 500 (beyond float8e4m3fn's 448), -0.05 (to the
  // nearest float8e4m3fn, 13 * 2^-8).
  const Tensor x = MakeTensor<float>({3}, {3, 1000, -0.1f});
  const Tensor s = MakeTensor<float>({}, {2});
  auto saturated = RunOp(
      QuantOp("quantize_linear", false, "attrs { name: \"out_dtype\" i: 14 }"),
      {{"x", x}, {"s", s}}, {"y"});
  ASSERT_TRUE(saturated.ok()) << saturated.status();
  EXPECT_EQ((*saturated)[0].dtype(), kFloat8E4M3FN);
  const float8_e4m3fn* y = (*saturated)[0].data<float8_e4m3fn>();
  EXPECT_EQ(Float8ToFloat(y[0]), 1.5f);
  EXPECT_EQ(Float8ToFloat(y[1]), 448.0f);
  EXPECT_EQ(Float8ToFloat(y[2]), -13.0f / 256);
  auto unsaturated = RunOp(QuantOp("quantize_linear", false,
                                   "attrs { name: \"out_dtype\" i: 14 }\n"
                                   "attrs { name: \"saturate\" b: false }"),
                           {{"x", x}, {"s", s}}, {"y"});
  ASSERT_TRUE(unsaturated.ok()) << unsaturated.status();
  EXPECT_TRUE(
      std::isnan(Float8ToFloat((*unsaturated)[0].data<float8_e4m3fn>()[1])));

  // Dequantize float8e5m2 with a zero point of 1: (3 - 1) * 2, (-0.5 - 1) * 2.
  auto back = RunOp(
      QuantOp("dequantize_linear", true),
      {{"x", MakeTensor<float8_e5m2>(
                 {2}, {FloatToFloat8<Float8Format::kE5M2>(3),
                       FloatToFloat8<Float8Format::kE5M2>(-0.5f)})},
       {"s", MakeTensor<float>({}, {2})},
       {"z",
        MakeTensor<float8_e5m2>({}, {FloatToFloat8<Float8Format::kE5M2>(1)})}},
      {"y"});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(Values<float>((*back)[0]), ElementsAre(4, -3));
}

// int4 and the others of framework/small_types.h: rounded half to even and
// saturated at the type's own range; float4e2m1 to nearest even, at +-6.
TEST(QuantizeLinearTest, SubByteTypesSaturateAtTheirOwnRanges) {
  // x / 2 = -15, 1.5, 2.5, 50; + 1 into [-2, 1] (int2 = 20).
  const Tensor x = MakeTensor<float>({4}, {-30, 3, 5, 100});
  const Tensor s = MakeTensor<float>({}, {2});
  auto int2 = RunOp(
      QuantOp("quantize_linear", true),
      {{"x", x}, {"s", s}, {"z", MakeTensor<qint2>({}, {qint2{1}})}}, {"y"});
  ASSERT_TRUE(int2.ok()) << int2.status();
  EXPECT_EQ((*int2)[0].dtype(), kInt2);
  std::vector<int> values;
  for (qint2 v : Values<qint2>((*int2)[0])) values.push_back(v.value);
  EXPECT_THAT(values, ElementsAre(-2, 1, 1, 1));
  // uint4 = 19, without a zero point: 0, 2, 2, 15.
  auto uint4 = RunOp(
      QuantOp("quantize_linear", false, "attrs { name: \"out_dtype\" i: 19 }"),
      {{"x", x}, {"s", s}}, {"y"});
  ASSERT_TRUE(uint4.ok()) << uint4.status();
  values.clear();
  for (quint4 v : Values<quint4>((*uint4)[0])) values.push_back(v.value);
  EXPECT_THAT(values, ElementsAre(0, 2, 2, 15));
  // float4e2m1 = 22: -15 -> -6, 1.5, 2.5 -> 2, 50 -> 6.
  auto fp4 = RunOp(
      QuantOp("quantize_linear", false, "attrs { name: \"out_dtype\" i: 22 }"),
      {{"x", x}, {"s", s}}, {"y"});
  ASSERT_TRUE(fp4.ok()) << fp4.status();
  values.clear();
  for (float4_e2m1 v : Values<float4_e2m1>((*fp4)[0])) values.push_back(v.bits);
  EXPECT_THAT(values, ElementsAre(0xf, 0x3, 0x4, 0x7));
  // And back: (X - ZeroPoint) * Scale.
  auto back =
      RunOp(QuantOp("dequantize_linear", true),
            {{"x", MakeTensor<qint4>({3}, {qint4{-8}, qint4{0}, qint4{7}})},
             {"s", s},
             {"z", MakeTensor<qint4>({}, {qint4{-1}})}},
            {"y"});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(Values<float>((*back)[0]), ElementsAre(-14, 2, 16));
  auto fp4_back = RunOp(QuantOp("dequantize_linear", false),
                        {{"x", (*fp4)[0]}, {"s", s}}, {"y"});
  ASSERT_TRUE(fp4_back.ok()) << fp4_back.status();
  EXPECT_THAT(Values<float>((*fp4_back)[0]), ElementsAre(-12, 3, 4, 12));
}

TEST(DequantizeLinearTest, Errors) {
  absl::Status mismatch = PrepareOp(QuantOp("dequantize_linear", true),
                                    {{"x", MakeTensor<uint8_t>({2}, {1, 2})},
                                     {"s", MakeTensor<float>({}, {1})},
                                     {"z", MakeTensor<int8_t>({}, {0})}});
  EXPECT_THAT(std::string(mismatch.message()),
              HasSubstr("input \"ZeroPoint\" (variable \"z\", shape [?]) has "
                        "dtype int8: the zero point must have the dtype of "
                        "input \"X\" (variable \"x\"), uint8"));
  absl::Status scale_shape =
      PrepareOp(QuantOp("dequantize_linear", false),
                {{"x", MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4})},
                 {"s", MakeTensor<float>({2, 2}, {1, 1, 1, 1})}});
  EXPECT_THAT(std::string(scale_shape.message()),
              HasSubstr("input \"Scale\" (variable \"s\", shape [2, 2]): "
                        "expected one element (per tensor) or [2]"));
  absl::Status float_x = PrepareOp(
      QuantOp("dequantize_linear", false),
      {{"x", MakeTensor<float>({1}, {1})}, {"s", MakeTensor<float>({}, {1})}});
  EXPECT_THAT(std::string(float_x.message()),
              HasSubstr("input \"X\" (variable \"x\") has dtype float32"));
}

// Y is linear in Scale: Scale@GRAD sums (X - ZeroPoint) * Y@GRAD per scale.
TEST(DequantizeLinearTest, ScaleGradientPerTensorAndPerAxis) {
  GradCheckOptions options;
  options.wrt = {"s"};
  EXPECT_TRUE(CheckGradient(QuantOp("dequantize_linear", true),
                            {{"x", MakeTensor<uint8_t>({3}, {0, 200, 17})},
                             {"s", MakeTensor<double>({}, {0.03})},
                             {"z", MakeTensor<uint8_t>({}, {100})}},
                            options)
                  .ok());
  const absl::Status axis = CheckGradient(
      QuantOp("dequantize_linear", true, "attrs { name: \"axis\" i: 0 }"),
      {{"x", MakeTensor<int8_t>({2, 3}, {-5, 0, 9, 100, -100, 3})},
       {"s", MakeTensor<double>({2}, {0.5, 0.125})},
       {"z", MakeTensor<int8_t>({2}, {1, -1})}},
      options);
  EXPECT_TRUE(axis.ok()) << axis;
}

std::string DynamicOp() {
  return R"pb(type: "dynamic_quantize_linear"
              inputs { slot: "X" vars: "x" }
              outputs { slot: "Y" vars: "y" }
              outputs { slot: "YScale" vars: "s" }
              outputs { slot: "YZeroPoint" vars: "z" })pb";
}

TEST(DynamicQuantizeLinearTest, RangeIncludesZero) {
  // min -3, max 2: scale 5 / 255, zero point round(3 / scale) = 153.
  // Computed in float32 with numpy from ONNX's formula.
  auto out =
      RunOp(DynamicOp(),
            {{"x", MakeTensor<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})}},
            {"y", "s", "z"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[1].data<float>()[0], 0.019607844f);
  EXPECT_EQ((*out)[2].data<uint8_t>()[0], 153);
  EXPECT_THAT(Values<uint8_t>((*out)[0]),
              ElementsAre(153, 255, 0, 26, 221, 179));

  // All positive: the range still starts at 0, zero point 0.
  auto positive = RunOp(DynamicOp(), {{"x", MakeTensor<float>({2}, {1, 5.1f})}},
                        {"y", "s", "z"});
  ASSERT_TRUE(positive.ok()) << positive.status();
  EXPECT_EQ((*positive)[2].data<uint8_t>()[0], 0);
  EXPECT_THAT(Values<uint8_t>((*positive)[0]), ElementsAre(50, 255));

  // All zeros: scale 1 / 255 (max == min), zero point 0.
  auto zeros = RunOp(DynamicOp(), {{"x", MakeTensor<float>({2}, {0, 0})}},
                     {"y", "s", "z"});
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_FLOAT_EQ((*zeros)[1].data<float>()[0], 1.0f / 255);
  EXPECT_THAT(Values<uint8_t>((*zeros)[0]), ElementsAre(0, 0));
}

}  // namespace
}  // namespace scopeflow
