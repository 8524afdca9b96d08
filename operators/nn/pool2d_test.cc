#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/nn/pool2d_test_util.h"

namespace scopeflow {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::NanSensitiveFloatEq;
using ::testing::Pointwise;

TEST(Pool2dTest, MaxNoPadding) {
  auto out = RunOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                               attrs {
                                 name: "ksize"
                                 ints { values: [ 2, 2 ] }
                               }
                               attrs {
                                 name: "strides"
                                 ints { values: [ 2, 2 ] }
                               })pb"),
                   {{"x", MakeTensor<float>({1, 1, 4, 4}, Iota(16))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5, 7, 13, 15));
}

TEST(Pool2dTest, MaxIgnoresPadding) {
  // All values negative: padding must not act as zeros.
  std::vector<float> negative = Iota(9, 1);
  for (float& v : negative) v = -v;
  auto out = RunOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                               attrs {
                                 name: "ksize"
                                 ints { values: [ 2, 2 ] }
                               }
                               attrs {
                                 name: "strides"
                                 ints { values: [ 2, 2 ] }
                               }
                               attrs {
                                 name: "paddings"
                                 ints { values: [ 1, 1 ] }
                               })pb"),
                   {{"x", MakeTensor<float>({1, 1, 3, 3}, negative)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-1, -2, -4, -5));
}

constexpr char kAvg3x3Pad1[] = R"pb(attrs { name: "pooling_type" s: "avg" }
                                    attrs {
                                      name: "ksize"
                                      ints { values: [ 3, 3 ] }
                                    }
                                    attrs {
                                      name: "paddings"
                                      ints { values: [ 1, 1 ] }
                                    })pb";

TEST(Pool2dTest, AvgExclusiveDividesByInputCells) {
  auto out = RunOp(PoolOp(kAvg3x3Pad1), {{"x", OneToNine()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(FloatEq(), {12 / 4.f, 21 / 6.f, 16 / 4.f, 27 / 6.f, 45 / 9.f,
                            33 / 6.f, 24 / 4.f, 39 / 6.f, 28 / 4.f}));
}

TEST(Pool2dTest, AvgNotExclusiveCountsPadding) {
  auto out =
      RunOp(PoolOp(absl::StrCat(kAvg3x3Pad1,
                                R"pb(attrs { name: "exclusive" b: false })pb")),
            {{"x", OneToNine()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(FloatEq(), {12 / 9.f, 21 / 9.f, 16 / 9.f, 27 / 9.f, 45 / 9.f,
                            33 / 9.f, 24 / 9.f, 39 / 9.f, 28 / 9.f}));
}

TEST(Pool2dTest, FourValuePaddings) {
  // [top, bottom, left, right] = [0, 1, 0, 1]: padding only after.
  const std::string attrs = R"pb(attrs { name: "pooling_type" s: "avg" }
                                 attrs {
                                   name: "ksize"
                                   ints { values: [ 2, 2 ] }
                                 }
                                 attrs {
                                   name: "strides"
                                   ints { values: [ 2, 2 ] }
                                 }
                                 attrs {
                                   name: "paddings"
                                   ints { values: [ 0, 1, 0, 1 ] }
                                 })pb";
  auto exclusive = RunOp(PoolOp(attrs), {{"x", OneToNine()}}, {"y"});
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  EXPECT_THAT((*exclusive)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>((*exclusive)[0]), ElementsAre(3, 4.5, 7.5, 9));
  auto padded =
      RunOp(PoolOp(absl::StrCat(attrs,
                                R"pb(attrs { name: "exclusive" b: false })pb")),
            {{"x", OneToNine()}}, {"y"});
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_THAT(Values<float>((*padded)[0]), ElementsAre(3, 2.25, 3.75, 2.25));
}

TEST(Pool2dTest, GlobalPooling) {
  const Tensor x = MakeTensor<float>({1, 2, 2, 2}, Iota(8, 1));
  // ksize is ignored with global_pooling.
  auto max = RunOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                               attrs {
                                 name: "ksize"
                                 ints { values: [ 1, 1 ] }
                               }
                               attrs { name: "global_pooling" b: true })pb"),
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT((*max)[0].dims(), ElementsAre(1, 2, 1, 1));
  EXPECT_THAT(Values<float>((*max)[0]), ElementsAre(4, 8));
  auto avg = RunOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "avg" }
                               attrs {
                                 name: "ksize"
                                 ints { values: [ 1, 1 ] }
                               }
                               attrs {
                                 name: "paddings"
                                 ints { values: [ 5, 5 ] }
                               }
                               attrs { name: "global_pooling" b: true })pb"),
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_THAT(Values<float>((*avg)[0]), ElementsAre(2.5, 6.5));
}

constexpr char kCeil2x2[] = R"pb(attrs {
                                   name: "ksize"
                                   ints { values: [ 2, 2 ] }
                                 }
                                 attrs {
                                   name: "strides"
                                   ints { values: [ 2, 2 ] }
                                 }
                                 attrs { name: "ceil_mode" b: true })pb";

TEST(Pool2dTest, CeilModeKeepsPartialWindows) {
  const Tensor x = MakeTensor<float>({1, 1, 5, 5}, Iota(25));
  auto floor = RunOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                                 attrs {
                                   name: "ksize"
                                   ints { values: [ 2, 2 ] }
                                 }
                                 attrs {
                                   name: "strides"
                                   ints { values: [ 2, 2 ] }
                                 })pb"),
                     {{"x", x}}, {"y"});
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_THAT((*floor)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>((*floor)[0]), ElementsAre(6, 8, 16, 18));

  auto max =
      RunOp(PoolOp(absl::StrCat(
                R"pb(attrs { name: "pooling_type" s: "max" })pb", kCeil2x2)),
            {{"x", x}}, {"y"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT((*max)[0].dims(), ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(Values<float>((*max)[0]),
              ElementsAre(6, 8, 9, 16, 18, 19, 21, 23, 24));

  // The partial windows average their input cells; cells past the input
  // (not padding) never count, exclusive or not.
  for (const char* exclusive : {"true", "false"}) {
    auto avg =
        RunOp(PoolOp(absl::StrCat(
                  R"pb(attrs { name: "pooling_type" s: "avg" })pb", kCeil2x2,
                  " attrs { name: \"exclusive\" b: ", exclusive, " }")),
              {{"x", x}}, {"y"});
    ASSERT_TRUE(avg.ok()) << avg.status();
    EXPECT_THAT(Values<float>((*avg)[0]),
                ElementsAre(3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24))
        << "exclusive: " << exclusive;
  }
}

TEST(Pool2dTest, CeilModeDropsWindowsInTrailingPadding) {
  // 3 cells + padding 1 each side, ksize 2, stride 2: rounding up would add
  // a third window starting in the trailing padding; it is dropped.
  auto out =
      RunOp(PoolOp(absl::StrCat(R"pb(attrs { name: "pooling_type" s: "max" }
                                     attrs {
                                       name: "paddings"
                                       ints { values: [ 1, 1 ] }
                                     })pb",
                                kCeil2x2)),
            {{"x", OneToNine()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 3, 7, 9));
}

TEST(Pool2dTest, MaxNaNWinsAndMinusInfinityStays) {
  // Windows of two cells along the width: a NaN first or last wins; -inf
  // alone stays -inf.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto out = RunOp(
      PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                  attrs {
                    name: "ksize"
                    ints { values: [ 1, 2 ] }
                  })pb"),
      {{"x", MakeTensor<float>({1, 1, 2, 3}, {nan, 2, 5, -inf, -inf, nan})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(NanSensitiveFloatEq(), std::vector<float>{nan, 5, -inf, nan}));
}

TEST(Pool2dTest, Float64AndBatches) {
  std::vector<double> values(2 * 3 * 2 * 2);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * i;
  auto out = RunOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "avg" }
                               attrs {
                                 name: "ksize"
                                 ints { values: [ 2, 2 ] }
                               })pb"),
                   {{"x", MakeTensor<double>({2, 3, 2, 2}, values)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat64);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3, 1, 1));
  // Plane p holds 2p, 2p + 0.5, 2p + 1, 2p + 1.5.
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleEq(), {0.75, 2.75, 4.75, 6.75, 8.75, 10.75}));
}

TEST(Pool2dTest, InfersUnknownDimensions) {
  const std::string max2x2 = PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                                         attrs {
                                           name: "ksize"
                                           ints { values: [ 2, 2 ] }
                                         }
                                         attrs {
                                           name: "strides"
                                           ints { values: [ 2, 2 ] }
                                         })pb");
  auto y = InferAtPrepare(max2x2, {{"x", kFloat32, {-1, 3, 8, -1}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 3, 4, -1));
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, -1, -1, -1));
  y = InferAtPrepare(PoolOp(R"pb(attrs { name: "pooling_type" s: "avg" }
                                 attrs {
                                   name: "ksize"
                                   ints { values: [ 2, 2 ] }
                                 }
                                 attrs { name: "global_pooling" b: true })pb"),
                     {{"x", kFloat32, {}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, -1, 1, 1));
  // What is known is still checked.
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {-1, 3, 1, -1}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [-1, 3, 1, -1]: too small for \"ksize\" = [2, "
                        "2]"));
}

TEST(Pool2dErrorTest, BadKsize) {
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<float>({1, 1, 2, 2}, Iota(4))}};
  absl::Status one_value =
      PrepareOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                            attrs {
                              name: "ksize"
                              ints { values: [ 3 ] }
                            })pb"),
                feeds);
  EXPECT_THAT(one_value.message(),
              HasSubstr("op 0 (pool2d): attribute \"ksize\" must hold 2 "
                        "values [h, w], got [3]"));
  absl::Status zero =
      PrepareOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                            attrs {
                              name: "ksize"
                              ints { values: [ 0, 2 ] }
                            })pb"),
                feeds);
  EXPECT_THAT(zero.message(),
              HasSubstr("op 0 (pool2d): attribute \"ksize\" must be positive, "
                        "got [0, 2]"));
  absl::Status too_big =
      PrepareOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                            attrs {
                              name: "ksize"
                              ints { values: [ 3, 2 ] }
                            })pb"),
                feeds);
  EXPECT_THAT(too_big.message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 2, 2]: too small for \"ksize\" = [3, 2] "
                        "with paddings [0, 0, 0, 0] and strides [1, 1]; "
                        "expected a positive output height and width, got "
                        "[0, 1]"));
  absl::Status missing = PrepareOp(
      PoolOp(R"pb(attrs { name: "pooling_type" s: "max" })pb"), feeds);
  EXPECT_THAT(missing.message(),
              HasSubstr("op 0 (pool2d): missing required attribute \"ksize\" "
                        "(ints)"));
}

TEST(Pool2dErrorTest, PaddingMustBeSmallerThanKsize) {
  absl::Status status =
      PrepareOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "avg" }
                            attrs {
                              name: "ksize"
                              ints { values: [ 2, 2 ] }
                            }
                            attrs {
                              name: "paddings"
                              ints { values: [ 0, 0, 2, 0 ] }
                            })pb"),
                {{"x", OneToNine()}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d): attribute \"paddings\" = [0, 0, 2, 0] "
                        "must be smaller than \"ksize\" = [2, 2]"));
}

TEST(Pool2dErrorTest, PoolingTypeRankAndDtype) {
  absl::Status type =
      PrepareOp(PoolOp(R"pb(attrs { name: "pooling_type" s: "min" }
                            attrs {
                              name: "ksize"
                              ints { values: [ 2, 2 ] }
                            })pb"),
                {{"x", OneToNine()}});
  EXPECT_THAT(type.message(),
              HasSubstr("op 0 (pool2d): attribute \"pooling_type\" must be "
                        "one of max, avg, got \"min\""));
  const std::string max2x2 = PoolOp(R"pb(attrs { name: "pooling_type" s: "max" }
                                         attrs {
                                           name: "ksize"
                                           ints { values: [ 2, 2 ] }
                                         })pb");
  absl::Status rank =
      PrepareOp(max2x2, {{"x", MakeTensor<float>({3, 3}, Iota(9))}});
  EXPECT_THAT(rank.message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [3, 3]: expected rank 4"));
  absl::Status empty =
      PrepareOp(max2x2, {{"x", MakeTensor<float>({1, 1, 0, 3}, {})}});
  EXPECT_THAT(empty.message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 0, 3]: expected a positive height and "
                        "width"));
  absl::Status dtype = PrepareOp(
      max2x2,
      {{"x", MakeTensor<int32_t>({1, 1, 3, 3}, std::vector<int32_t>(9))}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (pool2d): no kernel for dtype int32"));
}

TEST(Pool2dTest, SizesBeyondInt64AreErrors) {
  auto y =
      InferAtPrepare(R"pb(type: "pool2d"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs { name: "pooling_type" s: "max" }
                          attrs {
                            name: "ksize"
                            ints { values: [ 2, 1 ] }
                          }
                          attrs {
                            name: "paddings"
                            ints { values: [ 1, 0 ] }
                          })pb",
                     {{"x", kFloat32, {1, 1, 9223372036854775807, 1}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 9223372036854775807, 1]; with "));
  EXPECT_THAT(y.status().message(),
              HasSubstr("along the height, a window of 2 cells moving by 1 "
                        "over 9223372036854775807 cells padded by 1 and 1 "
                        "makes sizes beyond int64"));
}

// The first window's taps over an input at the int64 limit, counted
// without overflow.
TEST(Pool2dTest, WindowsOverHugeInputs) {
  auto y =
      InferAtPrepare(R"pb(type: "pool2d"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs { name: "pooling_type" s: "max" }
                          attrs {
                            name: "ksize"
                            ints { values: [ 4, 1 ] }
                          }
                          attrs {
                            name: "paddings"
                            ints { values: [ 1, 0 ] }
                          })pb",
                     {{"x", kFloat32, {1, 1, 9223372036854775807, 1}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(1, 1, 9223372036854775806, 1));
}

}  // namespace
}  // namespace scopeflow
