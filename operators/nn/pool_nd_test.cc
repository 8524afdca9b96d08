// pool1d and pool3d, dilated windows and the Indices output of max pooling
// (pool2d's other behaviour is in pool2d_test.cc): hand-computed values,
// inference and errors.
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

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr char kNotExclusive[] = "attrs { name: \"exclusive\" b: false } ";
constexpr char kCeil[] = "attrs { name: \"ceil_mode\" b: true } ";

// A pool op of `type` (pool1d, pool2d, pool3d) reading "x", writing "y"
// and, with `indices`, "i".
std::string PoolOp(const std::string& type, const std::string& attrs,
                   bool indices = false) {
  return absl::StrCat(
      "type: \"", type,
      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"y\" } ",
      indices ? "outputs { slot: \"Indices\" vars: \"i\" } " : "", attrs);
}

absl::StatusOr<Tensor> Pool(const std::string& type, const std::string& attrs,
                            const Tensor& x) {
  auto out = RunOp(PoolOp(type, attrs), {{"x", x}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(Pool1dTest, MaxAndAverage) {
  // Two planes of three cells.
  const Tensor x = MakeTensor<float>({1, 2, 3}, {1, 5, 2, 8, 3, 0});
  auto max = Pool("pool1d", Type("max") + Ints("ksize", {2}), x);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(max->dims(), ElementsAre(1, 2, 2));
  EXPECT_THAT(Values<float>(*max), ElementsAre(5, 5, 8, 3));
  // [1, 2, 3, 4] padded by 1 each side, windows of 3 moving by 2: [pad, 1,
  // 2] and [2, 3, 4].
  const Tensor ramp = MakeTensor<float>({1, 1, 4}, {1, 2, 3, 4});
  const std::string avg = Type("avg") + Ints("ksize", {3}) +
                          Ints("strides", {2}) + Ints("paddings", {1});
  auto exclusive = Pool("pool1d", avg, ramp);
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  EXPECT_THAT(Values<float>(*exclusive), ElementsAre(1.5, 3));
  auto inclusive = Pool("pool1d", avg + kNotExclusive, ramp);
  ASSERT_TRUE(inclusive.ok()) << inclusive.status();
  EXPECT_THAT(Values<float>(*inclusive), ElementsAre(1, 3));
}

TEST(Pool1dTest, DilatedWindowsSkipCells) {
  // [1, 2, 3, 4, 5] padded by 2 each side; windows of 3 taps 2 apart
  // moving by 2 start at -2, 0 and 2: taps {-2, 0, 2}, {0, 2, 4}, {2, 4, 6}.
  const Tensor x = MakeTensor<float>({1, 1, 5}, {1, 2, 3, 4, 5});
  const std::string window = Ints("ksize", {3}) + Ints("dilations", {2}) +
                             Ints("strides", {2}) + Ints("paddings", {2});
  auto max = Pool("pool1d", Type("max") + window, x);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(Values<float>(*max), ElementsAre(3, 5, 5));
  auto exclusive = Pool("pool1d", Type("avg") + window, x);
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  EXPECT_THAT(Values<float>(*exclusive), ElementsAre(2, 3, 4));
  // Not exclusive, the padding taps count: 3 per window.
  auto inclusive = Pool("pool1d", Type("avg") + window + kNotExclusive, x);
  ASSERT_TRUE(inclusive.ok()) << inclusive.status();
  EXPECT_THAT(Values<float>(*inclusive),
              Pointwise(FloatEq(), {4.0f / 3, 3.0f, 8.0f / 3}));
}

TEST(Pool1dTest, CeilModeWithDilationCountsNoCellPastThePadding) {
  // [1, 2, 3, 4], taps 2 apart, moving by 2, rounded up: {0, 2} and {2, 4},
  // where 4 lies past the input (no padding): the second averages 3 alone.
  const Tensor x = MakeTensor<float>({1, 1, 4}, {1, 2, 3, 4});
  const std::string window = Ints("ksize", {2}) + Ints("dilations", {2}) +
                             Ints("strides", {2}) + kCeil;
  for (const char* exclusive : {"true", "false"}) {
    auto avg = Pool(
        "pool1d",
        Type("avg") + window +
            absl::StrCat("attrs { name: \"exclusive\" b: ", exclusive, " }"),
        x);
    ASSERT_TRUE(avg.ok()) << avg.status();
    EXPECT_THAT(Values<float>(*avg), ElementsAre(2, 3))
        << "exclusive: " << exclusive;
  }
  auto max = Pool("pool1d", Type("max") + window, x);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(Values<float>(*max), ElementsAre(3, 3));
}

TEST(Pool2dTest, Dilations) {
  // 0..15 as 4x4; 2x2 taps 2 apart: the window at (0, 0) takes 0, 2, 8, 10.
  const Tensor x = MakeTensor<float>({1, 1, 4, 4}, Iota(16));
  const std::string window = Ints("ksize", {2, 2}) + Ints("dilations", {2, 2});
  auto max = Pool("pool2d", Type("max") + window, x);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(max->dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>(*max), ElementsAre(10, 11, 14, 15));
  auto avg = Pool("pool2d", Type("avg") + window, x);
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_THAT(Values<float>(*avg), ElementsAre(5, 6, 9, 10));
  // Dilation along the width only: windows of rows {r, r+1} x columns
  // {c, c+3}.
  auto wide =
      Pool("pool2d",
           Type("max") + Ints("ksize", {2, 2}) + Ints("dilations", {1, 3}), x);
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_THAT(wide->dims(), ElementsAre(1, 1, 3, 1));
  EXPECT_THAT(Values<float>(*wide), ElementsAre(7, 11, 15));
}

TEST(Pool3dTest, MaxAndAverage) {
  // 0..26 as 3x3x3; 2x2x2 windows: the maximum is the far corner, the mean
  // the centre, 6.5 above the near corner (9 + 3 + 1) / 2.
  const Tensor x = MakeTensor<float>({1, 1, 3, 3, 3}, Iota(27));
  auto max = Pool("pool3d", Type("max") + Ints("ksize", {2, 2, 2}), x);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(max->dims(), ElementsAre(1, 1, 2, 2, 2));
  auto avg = Pool("pool3d", Type("avg") + Ints("ksize", {2, 2, 2}), x);
  ASSERT_TRUE(avg.ok()) << avg.status();
  std::vector<float> corners, centres;
  for (int d = 0; d < 2; ++d) {
    for (int h = 0; h < 2; ++h) {
      for (int w = 0; w < 2; ++w) {
        corners.push_back((d + 1) * 9 + (h + 1) * 3 + (w + 1));
        centres.push_back(d * 9 + h * 3 + w + 6.5f);
      }
    }
  }
  EXPECT_EQ(Values<float>(*max), corners);
  EXPECT_EQ(Values<float>(*avg), centres);
}

TEST(Pool3dTest, PaddingsPerSideStridesAndGlobalPooling) {
  // Two planes, 1..8 and 9..16 as 2x2x2. Windows 2x2x2 moving by 2; the
  // padding after the depth leaves no room for a second window, so one
  // covers each plane.
  const Tensor x = MakeTensor<double>(
      {1, 2, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  auto out = RunOp(PoolOp("pool3d", Type("avg") + Ints("ksize", {2, 2, 2}) +
                                        Ints("strides", {2, 2, 2}) +
                                        Ints("paddings", {0, 1, 0, 0, 0, 0})),
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  // 2 + 1 - 2 = 1 room along the depth: one window (floor).
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 1, 1, 1));
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(4.5, 12.5));
  auto global =
      RunOp(PoolOp("pool3d", Type("max") + Ints("ksize", {1, 1, 1}) +
                                 "attrs { name: \"global_pooling\" b: true }"),
            {{"x", x}}, {"y"});
  ASSERT_TRUE(global.ok()) << global.status();
  EXPECT_THAT((*global)[0].dims(), ElementsAre(1, 2, 1, 1, 1));
  EXPECT_THAT(Values<double>((*global)[0]), ElementsAre(8, 16));
}

TEST(PoolIndicesTest, FlatOffsetsRowAndColumnMajor) {
  // Plane 0 peaks at its centre (offset 4); plane 1 ramps up, so each 2x2
  // window peaks at its bottom-right cell. Offsets count plane 0's 9 cells.
  const Tensor x = MakeTensor<float>(
      {1, 2, 3, 3},
      {1, 2, 3, 4, 9, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  const std::string attrs = Type("max") + Ints("ksize", {2, 2});
  auto row =
      RunOp(PoolOp("pool2d", attrs, /*indices=*/true), {{"x", x}}, {"y", "i"});
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(Values<float>((*row)[0]),
              ElementsAre(9, 9, 9, 9, 14, 15, 17, 18));
  EXPECT_EQ((*row)[1].dtype(), kInt64);
  EXPECT_THAT((*row)[1].dims(), ElementsAre(1, 2, 2, 2));
  // (h, w) = (1, 1), (1, 2), (2, 1), (2, 2) at 3h + w.
  EXPECT_THAT(Values<int64_t>((*row)[1]),
              ElementsAre(4, 4, 4, 4, 13, 14, 16, 17));
  // Column-major: h + 3w.
  auto column = RunOp(
      PoolOp("pool2d",
             attrs + "attrs { name: \"storage_order\" s: \"column_major\" }",
             /*indices=*/true),
      {{"x", x}}, {"y", "i"});
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_THAT(Values<int64_t>((*column)[1]),
              ElementsAre(4, 4, 4, 4, 13, 16, 14, 17));
}

TEST(PoolIndicesTest, ThreeAndOneSpatialAxes) {
  // 0..11 as 2x2x3: windows 2x2x2 peak at (1, 1, w + 1): row-major
  // 6 + 3 + w + 1; column-major d + 2 (h + 2 w) = 1 + 2 (1 + 2 (w + 1)).
  const Tensor x = MakeTensor<float>({1, 1, 2, 2, 3}, Iota(12));
  const std::string attrs = Type("max") + Ints("ksize", {2, 2, 2});
  auto row =
      RunOp(PoolOp("pool3d", attrs, /*indices=*/true), {{"x", x}}, {"y", "i"});
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(Values<int64_t>((*row)[1]), ElementsAre(10, 11));
  auto column = RunOp(
      PoolOp("pool3d",
             attrs + "attrs { name: \"storage_order\" s: \"column_major\" }",
             /*indices=*/true),
      {{"x", x}}, {"y", "i"});
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_THAT(Values<int64_t>((*column)[1]), ElementsAre(7, 11));
  // 1-D, two batches: offsets run on across N and C.
  auto line = RunOp(
      PoolOp("pool1d", Type("max") + Ints("ksize", {2}) + Ints("strides", {2}),
             /*indices=*/true),
      {{"x", MakeTensor<float>({2, 1, 4}, {3, 1, 2, 5, 7, 7, 7, 6})}},
      {"y", "i"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(Values<float>((*line)[0]), ElementsAre(3, 5, 7, 7));
  // Ties keep the first maximum.
  EXPECT_THAT(Values<int64_t>((*line)[1]), ElementsAre(0, 3, 4, 6));
}

TEST(PoolIndicesTest, TheLastNaNIsTheMaximum) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunOp(PoolOp("pool1d", Type("max") + Ints("ksize", {4}),
                          /*indices=*/true),
                   {{"x", MakeTensor<float>({1, 1, 4}, {nan, 2, nan, 1})}},
                   {"y", "i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(Values<float>((*out)[0])[0]));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2));
}

TEST(PoolNdTest, InfersUnknownDimensions) {
  const std::string op = PoolOp(
      "pool3d",
      Type("max") + Ints("ksize", {2, 2, 2}) + Ints("strides", {2, 2, 2}),
      /*indices=*/true);
  auto y = InferAtPrepare(op, {{"x", kFloat32, {-1, 2, 8, -1, 4}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 2, 4, -1, 2));
  auto i = InferAtPrepare(op, {{"x", kFloat32, {-1, 2, 8, -1, 4}}}, "i");
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->dtype, kInt64);
  EXPECT_THAT(i->dims, ElementsAre(-1, 2, 4, -1, 2));
  auto unknown =
      InferAtPrepare(PoolOp("pool1d", Type("avg") + Ints("ksize", {3})),
                     {{"x", kFloat64, {}}}, "y");
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_THAT(unknown->dims, ElementsAre(-1, -1, -1));
}

TEST(PoolNdErrorTest, PerAxisAttributes) {
  const std::vector<Feed> line = {{"x", MakeTensor<float>({1, 1, 4}, Iota(4))}};
  absl::Status ksize =
      PrepareOp(PoolOp("pool1d", Type("max") + Ints("ksize", {2, 2})), line);
  EXPECT_THAT(ksize.message(),
              HasSubstr("op 0 (pool1d): attribute \"ksize\" must hold 1 "
                        "value [w], got [2, 2]"));
  const std::vector<Feed> cube = {
      {"x", MakeTensor<float>({1, 1, 2, 2, 2}, Iota(8))}};
  absl::Status strides =
      PrepareOp(PoolOp("pool3d", Type("max") + Ints("ksize", {1, 1, 1}) +
                                     Ints("strides", {1, 1})),
                cube);
  EXPECT_THAT(strides.message(),
              HasSubstr("op 0 (pool3d): attribute \"strides\" must hold 3 "
                        "values [d, h, w], got [1, 1]"));
  absl::Status dilations =
      PrepareOp(PoolOp("pool3d", Type("max") + Ints("ksize", {1, 1, 1}) +
                                     Ints("dilations", {1, 0, 1})),
                cube);
  EXPECT_THAT(dilations.message(),
              HasSubstr("op 0 (pool3d): attribute \"dilations\" must be "
                        "positive, got [1, 0, 1]"));
  absl::Status paddings =
      PrepareOp(PoolOp("pool3d", Type("max") + Ints("ksize", {2, 2, 2}) +
                                     Ints("paddings", {1, 1, 1, 1})),
                cube);
  EXPECT_THAT(paddings.message(),
              HasSubstr("op 0 (pool3d): attribute \"paddings\" must hold 3 "
                        "values (each axis padded alike at both ends) or 6 "
                        "values [before, after] per axis of [d, h, w], got "
                        "[1, 1, 1, 1]"));
  absl::Status negative =
      PrepareOp(PoolOp("pool1d", Type("max") + Ints("ksize", {2}) +
                                     Ints("paddings", {0, -1})),
                line);
  EXPECT_THAT(negative.message(),
              HasSubstr("op 0 (pool1d): attribute \"paddings\" must be "
                        "non-negative, got [0, -1]"));
  absl::Status order = PrepareOp(
      PoolOp("pool1d", Type("max") + Ints("ksize", {2}) +
                           "attrs { name: \"storage_order\" s: \"f\" }"),
      line);
  EXPECT_THAT(order.message(),
              HasSubstr("op 0 (pool1d): attribute \"storage_order\" must be "
                        "one of row_major, column_major, got \"f\""));
}

TEST(PoolNdErrorTest, ShapesAndWindows) {
  absl::Status rank =
      PrepareOp(PoolOp("pool3d", Type("max") + Ints("ksize", {2, 2, 2})),
                {{"x", MakeTensor<float>({1, 1, 2, 2}, Iota(4))}});
  EXPECT_THAT(rank.message(),
              HasSubstr("op 0 (pool3d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 2, 2]: expected rank 5"));
  absl::Status empty =
      PrepareOp(PoolOp("pool3d", Type("max") + Ints("ksize", {1, 1, 1})),
                {{"x", MakeTensor<float>({1, 1, 2, 0, 2}, {})}});
  EXPECT_THAT(empty.message(),
              HasSubstr("op 0 (pool3d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 2, 0, 2]: expected a positive depth, "
                        "height and width"));
  absl::Status small =
      PrepareOp(PoolOp("pool3d", Type("avg") + Ints("ksize", {3, 2, 2})),
                {{"x", MakeTensor<float>({1, 1, 2, 2, 2}, Iota(8))}});
  EXPECT_THAT(small.message(),
              HasSubstr("op 0 (pool3d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 2, 2, 2]: too small for \"ksize\" = "
                        "[3, 2, 2] with paddings [0, 0, 0, 0, 0, 0] and "
                        "strides [1, 1, 1]; expected a positive output "
                        "depth, height and width, got [0, 1, 1]"));
  // Dilation widens the window past the input.
  absl::Status dilated_small =
      PrepareOp(PoolOp("pool1d", Type("max") + Ints("ksize", {2}) +
                                     Ints("dilations", {4})),
                {{"x", MakeTensor<float>({1, 1, 4}, Iota(4))}});
  EXPECT_THAT(dilated_small.message(),
              HasSubstr("op 0 (pool1d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 4]: too small for \"ksize\" = [2] with "
                        "paddings [0, 0], strides [1] and dilations [4]; "
                        "expected a positive output width, got [0]"));
}

TEST(PoolNdErrorTest, WindowsMustTakeAnInputCell) {
  // Padding as wide as the dilated window (1 + 3 = 4 cells).
  const std::vector<Feed> one = {{"x", MakeTensor<float>({1, 1, 1}, {5})}};
  absl::Status wide = PrepareOp(
      PoolOp("pool1d", Type("max") + Ints("ksize", {2}) +
                           Ints("dilations", {3}) + Ints("paddings", {4, 0})),
      one);
  EXPECT_THAT(wide.message(),
              HasSubstr("op 0 (pool1d): attribute \"paddings\" = [4, 0] must "
                        "be smaller than \"ksize\" = [2] dilated by [3], "
                        "spanning [4]: a window would see only padding"));
  // Narrower padding, but the window's taps at -1 and 2 step over the one
  // cell.
  absl::Status skips = PrepareOp(
      PoolOp("pool1d", Type("max") + Ints("ksize", {2}) +
                           Ints("dilations", {3}) + Ints("paddings", {1, 2})),
      one);
  EXPECT_THAT(skips.message(),
              HasSubstr("op 0 (pool1d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 1]: with \"ksize\" = [2], paddings [1, "
                        "2], strides [1] and dilations [3], window 0 along "
                        "the width takes padding only"));
}

TEST(PoolNdErrorTest, IndicesNeedMaxPooling) {
  absl::Status status = PrepareOp(
      PoolOp("pool2d", Type("avg") + Ints("ksize", {2, 2}), /*indices=*/true),
      {{"x", MakeTensor<float>({1, 1, 2, 2}, Iota(4))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d): output \"Indices\" (variable \"i\") "
                        "holds the positions of the maxima: expected "
                        "pooling_type \"max\", got \"avg\""));
}

}  // namespace
}  // namespace scopeflow
