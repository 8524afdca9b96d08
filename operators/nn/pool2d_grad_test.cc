// pool2d's gradient: numeric checks for max, average (exclusive and not)
// and global pooling with padding, in NCHW, NHWC, NCHW8c and NCHW16c,
// hand-computed values, and errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/channel_blocks_testing.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string Pool(const std::string& attrs) {
  return absl::StrCat(
      "type: \"pool2d\" inputs { slot: \"X\" vars: \"x\" } "
      "outputs { slot: \"Out\" vars: \"y\" } ",
      attrs);
}

std::string PoolGrad(const std::string& attrs) {
  return absl::StrCat(
      "type: \"pool2d_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Out@GRAD\" vars: \"dy\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } ",
      attrs);
}

std::string Ints(const std::string& name, const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Type(const std::string& type) {
  return absl::StrCat("attrs { name: \"pooling_type\" s: \"", type, "\" } ");
}

// Distinct values 0.1 apart in a shuffled order: every window has one
// maximum, far from a tie at the central differences' step.
Tensor Distinct(const Dims& dims, uint32_t seed) {
  std::vector<double> values(NumElements(dims));
  std::iota(values.begin(), values.end(), 0.0);
  std::shuffle(values.begin(), values.end(), std::mt19937(seed));
  for (double& v : values) v = (v - values.size() / 2.0) * 0.1;
  return MakeTensor<double>(dims, values);
}

struct PoolCase {
  std::string name;
  std::string attrs;
  Dims x;
};

TEST(Pool2dGradTest, MatchesCentralDifferences) {
  const std::vector<PoolCase> cases = {
      {"max",
       Type("max") + Ints("ksize", {2, 2}) + Ints("strides", {2, 2}),
       {2, 2, 4, 4}},
      // Overlapping windows: a cell may be the maximum of several.
      {"max overlapping padded",
       Type("max") + Ints("ksize", {3, 3}) + Ints("paddings", {1, 1}),
       {1, 2, 4, 5}},
      {"max four-sided padding ceil_mode",
       Type("max") + Ints("ksize", {3, 2}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 0, 0, 1}) +
           "attrs { name: \"ceil_mode\" b: "
           "true }",
       {1, 1, 6, 5}},
      {"avg exclusive padded",
       Type("avg") + Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}),
       {2, 2, 5, 5}},
      {"avg inclusive padded",
       Type("avg") + Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + "attrs { name: \"exclusive\" b: false }",
       {2, 2, 5, 5}},
      {"avg inclusive ceil_mode",
       Type("avg") + Ints("ksize", {2, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {0, 1}) +
           "attrs { name: \"exclusive\" b: false } "
           "attrs { name: \"ceil_mode\" b: true }",
       {1, 2, 5, 6}},
      {"global max",
       Type("max") + Ints("ksize", {1, 1}) +
           "attrs { name: \"global_pooling\" b: true }",
       {2, 3, 3, 4}},
      {"global avg",
       Type("avg") + Ints("ksize", {1, 1}) +
           "attrs { name: \"global_pooling\" b: true }",
       {2, 3, 3, 4}},
  };
  uint32_t seed = 1;
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::Status status =
        CheckGradient(Pool(c.attrs), {{"x", Distinct(c.x, ++seed)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(Pool2dGradTest, MaxSendsEachWindowsGradientToItsMaximum) {
  // Windows 2x2, stride 1 over 3x3: the 9 at the centre is every window's
  // maximum, so it collects all four gradients.
  const Tensor x = MakeTensor<float>({1, 1, 3, 3}, {1, 2, 3, 4, 9, 5, 6, 7, 8});
  const Tensor dy = MakeTensor<float>({1, 1, 2, 2}, {1, 10, 100, 1000});
  auto out = RunOp(PoolGrad(Type("max") + Ints("ksize", {2, 2})),
                   {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(0, 0, 0, 0, 1111, 0, 0, 0, 0));
  // A window whose maximum is elsewhere: top-left 2x2 of a row-major ramp
  // peaks at its bottom-right cell.
  const Tensor ramp = MakeTensor<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto strided = RunOp(
      PoolGrad(Type("max") + Ints("ksize", {2, 2}) + Ints("strides", {2, 2})),
      {{"x", ramp}, {"dy", MakeTensor<float>({1, 1, 1, 2}, {3, 4})}}, {"dx"});
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_THAT(Values<float>((*strided)[0]),
              ElementsAre(0, 0, 0, 0, 0, 3, 0, 4));
}

// Inputs large enough that the gradient's planes go to several threads
// (where more than one is available), against a plain loop: 3x3 windows,
// stride 2, padding 1 (neighbouring windows overlap), max and exclusive
// average, each window's gradient added in window order.
TEST(Pool2dGradTest, LargeInputsMatchAPlainLoop) {
  constexpr int64_t kPlanes = 3 * 16, kH = 41, kW = 40, kOh = 21, kOw = 20;
  const Tensor x = Distinct({3, 16, kH, kW}, 9);
  const Tensor dy = Distinct({3, 16, kOh, kOw}, 10);
  const double* in = x.data<double>();
  const double* grad = dy.data<double>();
  std::vector<double> max_dx(x.numel(), 0.0), avg_dx(x.numel(), 0.0);
  for (int64_t p = 0; p < kPlanes; ++p) {
    for (int64_t oh = 0; oh < kOh; ++oh) {
      for (int64_t ow = 0; ow < kOw; ++ow) {
        std::vector<int64_t> cells;
        for (int64_t h = 2 * oh - 1; h <= 2 * oh + 1; ++h) {
          for (int64_t w = 2 * ow - 1; w <= 2 * ow + 1; ++w) {
            if (h >= 0 && h < kH && w >= 0 && w < kW) {
              cells.push_back((p * kH + h) * kW + w);
            }
          }
        }
        const double g = grad[(p * kOh + oh) * kOw + ow];
        int64_t best = cells[0];
        for (int64_t c : cells) best = in[c] > in[best] ? c : best;
        max_dx[best] += g;
        for (int64_t c : cells) avg_dx[c] += g / cells.size();
      }
    }
  }
  const std::string window = Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
                             Ints("paddings", {1, 1});
  for (const auto& [type, expected] :
       {std::pair<std::string, const std::vector<double>*>{"max", &max_dx},
        {"avg", &avg_dx}}) {
    SCOPED_TRACE(type);
    auto out =
        RunOp(PoolGrad(Type(type) + window), {{"x", x}, {"dy", dy}}, {"dx"});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> got = Values<double>((*out)[0]);
    ASSERT_EQ(got.size(), expected->size());
    int64_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      mismatches += std::abs(got[i] - (*expected)[i]) > 1e-9;
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(Pool2dGradTest, AverageDividesByTheForwardsCount) {
  // 2x2 input, 3x3 windows, padding 1, stride 1: four windows, each
  // covering the whole input (4 cells) plus 5 padding cells.
  const Tensor x = MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor dy = MakeTensor<float>({1, 1, 2, 2}, {4, 8, 12, 36});
  const std::string attrs =
      Type("avg") + Ints("ksize", {3, 3}) + Ints("paddings", {1, 1});
  auto exclusive = RunOp(PoolGrad(attrs), {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  // Each cell gets sum(dy) / 4 = 15.
  EXPECT_THAT(Values<float>((*exclusive)[0]), ElementsAre(15, 15, 15, 15));
  auto inclusive =
      RunOp(PoolGrad(attrs + "attrs { name: \"exclusive\" b: false }"),
            {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(inclusive.ok()) << inclusive.status();
  // sum(dy) / 9, the padding cells' shares dropped.
  EXPECT_THAT(Values<float>((*inclusive)[0]),
              Pointwise(FloatEq(), std::vector<float>{60.0f / 9, 60.0f / 9,
                                                      60.0f / 9, 60.0f / 9}));
}

TEST(Pool2dGradTest, GlobalPoolingFloat32) {
  const Tensor x =
      MakeTensor<float>({1, 2, 2, 2}, {1, 5, 2, 3, -1, -2, -3, -4});
  const Tensor dy = MakeTensor<float>({1, 2, 1, 1}, {2, 8});
  const std::string global =
      Ints("ksize", {1, 1}) + "attrs { name: \"global_pooling\" b: true } ";
  auto max =
      RunOp(PoolGrad(Type("max") + global), {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(Values<float>((*max)[0]), ElementsAre(0, 2, 0, 0, 8, 0, 0, 0));
  auto avg =
      RunOp(PoolGrad(Type("avg") + global), {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_THAT(Values<float>((*avg)[0]),
              ElementsAre(0.5, 0.5, 0.5, 0.5, 2, 2, 2, 2));
}

TEST(Pool2dGradErrorTest, OutGradShapeNamesVariable) {
  absl::Status status = PrepareOp(
      PoolGrad(Type("max") + Ints("ksize", {2, 2}) + Ints("strides", {2, 2})),
      {{"x", MakeTensor<float>({1, 1, 4, 4}, {})},
       {"dy", MakeTensor<float>({1, 1, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"Out@GRAD\" (variable "
                        "\"dy\") is float32 [1, 1, 3, 3]: expected float32 "
                        "[1, 1, 2, 2], as the forward op's output \"Out\""));
  absl::Status dtype =
      PrepareOp(PoolGrad(Type("avg") + Ints("ksize", {2, 2})),
                {{"x", MakeTensor<float>({1, 1, 2, 2}, {})},
                 {"dy", MakeTensor<double>({1, 1, 1, 1}, {})}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("input \"Out@GRAD\" (variable \"dy\") is float64 "
                        "[1, 1, 1, 1]: expected float32"));
}

constexpr char kNhwc[] = "attrs { name: \"data_format\" s: \"NHWC\" } ";

// NCHW shapes, pooled as NHWC.
std::vector<PoolCase> NhwcCases() {
  return {
      {"max overlapping padded",
       Type("max") + Ints("ksize", {3, 3}) + Ints("paddings", {1, 1}),
       {1, 3, 4, 5}},
      {"max four-sided padding strides ceil_mode",
       Type("max") + Ints("ksize", {3, 2}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 0, 0, 1}) +
           "attrs { name: \"ceil_mode\" b: true }",
       {2, 2, 6, 5}},
      {"max dilated",
       Type("max") + Ints("ksize", {2, 2}) + Ints("dilations", {2, 1}) +
           Ints("paddings", {1, 0}),
       {1, 5, 5, 4}},
      {"avg exclusive padded",
       Type("avg") + Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}),
       {2, 3, 5, 5}},
      {"avg inclusive ceil_mode",
       Type("avg") + Ints("ksize", {2, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {0, 1}) +
           "attrs { name: \"exclusive\" b: false } "
           "attrs { name: \"ceil_mode\" b: true }",
       {1, 4, 5, 6}},
      {"avg inclusive dilated",
       Type("avg") + Ints("ksize", {2, 2}) + Ints("dilations", {2, 2}) +
           Ints("paddings", {1, 1}) + "attrs { name: \"exclusive\" b: false }",
       {1, 3, 5, 5}},
      {"global max",
       Type("max") + Ints("ksize", {1, 1}) +
           "attrs { name: \"global_pooling\" b: true }",
       {2, 3, 3, 4}},
      {"global avg",
       Type("avg") + Ints("ksize", {1, 1}) +
           "attrs { name: \"global_pooling\" b: true }",
       {2, 3, 3, 4}},
  };
}

TEST(Pool2dGradNhwcTest, MatchesCentralDifferences) {
  uint32_t seed = 50;
  for (const PoolCase& c : NhwcCases()) {
    SCOPED_TRACE(c.name);
    absl::Status status = CheckGradient(
        Pool(c.attrs + kNhwc),
        {{"x", Distinct(Permute4dDims(c.x, kNchwToNhwc), ++seed)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

// The data_format attribute naming `format`.
std::string DataFormat(const std::string& format) {
  return absl::StrCat("attrs { name: \"data_format\" s: \"", format, "\" } ");
}

// pool2d_grad of `attrs` in `format` on an X of NCHW dims `x` and its
// Out@GRAD, against NCHW's gradient of the same moved into `format`: each
// cell takes the same shares, added in the same order, so they are equal.
void ExpectGradIsNchwsIn(const std::string& format, const std::string& attrs,
                         const Dims& x_dims, uint32_t& seed) {
  const Tensor x = Distinct(x_dims, ++seed);
  auto y = RunOp(Pool(attrs), {{"x", x}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  const Tensor dy = Distinct((*y)[0].dims(), ++seed);
  auto nchw = RunOp(PoolGrad(attrs), {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  auto in_format = RunOp(PoolGrad(attrs + DataFormat(format)),
                         {{"x", InFormat<double>(x, format)},
                          {"dy", InFormat<double>(dy, format)}},
                         {"dx"});
  ASSERT_TRUE(in_format.ok()) << in_format.status();
  const Tensor expected = InFormat<double>((*nchw)[0], format);
  EXPECT_THAT((*in_format)[0].dims(), ElementsAreArray(expected.dims()));
  EXPECT_THAT(Values<double>((*in_format)[0]),
              ElementsAreArray(Values<double>(expected)));
}

// The gradient ops' results themselves: NHWC's is NCHW's transposed.
TEST(Pool2dGradNhwcTest, MatchesTransposedNchw) {
  uint32_t seed = 80;
  for (const PoolCase& c : NhwcCases()) {
    SCOPED_TRACE(c.name);
    ExpectGradIsNchwsIn("NHWC", c.attrs, c.x, seed);
  }
}

TEST(Pool2dGradNhwcTest, MaxGoesToFirstMaximumOrLastNaNPerChannel) {
  // [1, 1, 3, 2] NHWC, windows of two cells along the width. Channel 0
  // holds 5, 5, 1: window 0 ties, its first cell takes the gradient.
  // Channel 1 holds NaN, 2, NaN: each window's NaN takes it.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = MakeTensor<float>({1, 1, 3, 2}, {5, nan, 5, 2, 1, nan});
  // [1, 1, 2, 2]: (window, channel).
  const Tensor dy = MakeTensor<float>({1, 1, 2, 2}, {1, 10, 100, 1000});
  auto out = RunOp(PoolGrad(Type("max") + Ints("ksize", {1, 2}) + kNhwc),
                   {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 10, 100, 0, 0, 1000));
}

TEST(Pool2dGradNhwcTest, AverageSpreadsPerChannel) {
  // [1, 2, 2, 2] NHWC, 3x3 windows padded by 1 with stride 2: one window
  // over all four cells, dividing by 4 (exclusive) or 9.
  const Tensor x = MakeTensor<float>({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor dy = MakeTensor<float>({1, 1, 1, 2}, {8, 36});
  const std::string attrs = Type("avg") + Ints("ksize", {3, 3}) +
                            Ints("paddings", {1, 1}) + Ints("strides", {2, 2}) +
                            kNhwc;
  auto exclusive = RunOp(PoolGrad(attrs), {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  EXPECT_THAT(Values<float>((*exclusive)[0]),
              ElementsAre(2, 9, 2, 9, 2, 9, 2, 9));
  auto inclusive =
      RunOp(PoolGrad(attrs + "attrs { name: \"exclusive\" b: false }"),
            {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(inclusive.ok()) << inclusive.status();
  EXPECT_THAT(Values<float>((*inclusive)[0]),
              Pointwise(FloatEq(), std::vector<float>{8.f / 9, 4, 8.f / 9, 4,
                                                      8.f / 9, 4, 8.f / 9, 4}));
}

TEST(Pool2dGradNhwcErrorTest, OutGradShapeIsNhwc) {
  absl::Status status =
      PrepareOp(PoolGrad(Type("max") + Ints("ksize", {2, 2}) +
                         Ints("strides", {2, 2}) + kNhwc),
                {{"x", MakeTensor<float>({1, 4, 4, 3}, {})},
                 {"dy", MakeTensor<float>({1, 3, 2, 2}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"Out@GRAD\" (variable "
                        "\"dy\") is float32 [1, 3, 2, 2]: expected float32 "
                        "[1, 2, 2, 3], as the forward op's output \"Out\""));
}

TEST(Pool2dGradNhwcErrorTest, DataFormatMustBeKnown) {
  absl::Status status =
      PrepareOp(PoolGrad(Type("avg") + Ints("ksize", {2, 2}) +
                         "attrs { name: \"data_format\" s: \"nhwc\" } "),
                {{"x", MakeTensor<float>({1, 2, 2, 1}, {})},
                 {"dy", MakeTensor<float>({1, 1, 1, 1}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): attribute \"data_format\" must "
                        "be one of NCHW, NHWC, NCHW8c, NCHW16c, got \"nhwc\""));
}

// Channel-blocked (data_format "NCHW8c" [N, C / 8, H, W, 8] or "NCHW16c"
// [N, C / 16, H, W, 16]).

// The NHWC cases with their channels rounded up to whole blocks of
// `format` (NCHW shapes).
std::vector<PoolCase> BlockedCases(const std::string& format) {
  const int64_t b = BlockIn(format);
  std::vector<PoolCase> cases = NhwcCases();
  for (PoolCase& c : cases) c.x[1] = (c.x[1] + b - 1) / b * b;
  return cases;
}

TEST(Pool2dGradBlockedTest, MatchesCentralDifferences) {
  uint32_t seed = 150;
  for (const char* format : kBlockedFormats) {
    for (const PoolCase& c : BlockedCases(format)) {
      SCOPED_TRACE(absl::StrCat(format, " ", c.name));
      absl::Status status = CheckGradient(
          Pool(c.attrs + DataFormat(format)),
          {{"x", InFormat<double>(Distinct(c.x, ++seed), format)}});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

// A blocked layout's gradient is NCHW's blocked.
TEST(Pool2dGradBlockedTest, MatchesBlockedNchw) {
  uint32_t seed = 180;
  for (const char* format : kBlockedFormats) {
    for (const PoolCase& c : BlockedCases(format)) {
      SCOPED_TRACE(absl::StrCat(format, " ", c.name));
      ExpectGradIsNchwsIn(format, c.attrs, c.x, seed);
    }
  }
}

TEST(Pool2dGradBlockedTest, HandValues) {
  // [1, 1, 1, 2, 8], one window of two cells along the width: channel k
  // holds k at w = 0 and 7 - k at w = 1, so channels 0 to 3 peak at w = 1
  // and 4 to 7 at w = 0, none tied.
  std::vector<float> values;
  for (int k = 0; k < 8; ++k) values.push_back(k);
  for (int k = 0; k < 8; ++k) values.push_back(7 - k);
  const Tensor x = MakeTensor<float>({1, 1, 1, 2, 8}, values);
  const Tensor dy =
      MakeTensor<float>({1, 1, 1, 1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto max =
      RunOp(PoolGrad(Type("max") + Ints("ksize", {1, 2}) + kChannelBlockedAttr),
            {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT((*max)[0].dims(), ElementsAre(1, 1, 1, 2, 8));
  EXPECT_THAT(Values<float>((*max)[0]),
              ElementsAre(0, 0, 0, 0, 5, 6, 7, 8,  // w = 0
                          1, 2, 3, 4, 0, 0, 0, 0));
  // Average: each cell takes half of its channel's gradient.
  auto avg =
      RunOp(PoolGrad(Type("avg") + Ints("ksize", {1, 2}) + kChannelBlockedAttr),
            {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_THAT(Values<float>((*avg)[0]),
              ElementsAre(0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4,  //
                          0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4));
}

TEST(Pool2dGradBlockedTest, HandValuesSixteen) {
  // [1, 1, 1, 2, 16], one window of two cells along the width: channel k
  // holds k at w = 0 and 15 - k at w = 1, so channels 0 to 7 peak at w = 1
  // and 8 to 15 at w = 0, none tied.
  std::vector<float> values;
  for (int k = 0; k < 16; ++k) values.push_back(k);
  for (int k = 0; k < 16; ++k) values.push_back(15 - k);
  const Tensor x = MakeTensor<float>({1, 1, 1, 2, 16}, values);
  // Channel k's gradient is 2 * (k + 1).
  std::vector<float> grads;
  for (int k = 0; k < 16; ++k) grads.push_back(2 * (k + 1));
  const Tensor dy = MakeTensor<float>({1, 1, 1, 1, 16}, grads);
  const std::string blocked16 = DataFormat("NCHW16c");
  auto max = RunOp(PoolGrad(Type("max") + Ints("ksize", {1, 2}) + blocked16),
                   {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT((*max)[0].dims(), ElementsAre(1, 1, 1, 2, 16));
  EXPECT_THAT(Values<float>((*max)[0]),
              ElementsAre(0, 0, 0, 0, 0, 0, 0, 0,  // w = 0
                          18, 20, 22, 24, 26, 28, 30, 32, 2, 4, 6, 8, 10, 12,
                          14, 16,  // w = 1
                          0, 0, 0, 0, 0, 0, 0, 0));
  // Average: each cell takes half of its channel's gradient, k + 1.
  auto avg = RunOp(PoolGrad(Type("avg") + Ints("ksize", {1, 2}) + blocked16),
                   {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_THAT(
      Values<float>((*avg)[0]),
      ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                  16,  // w = 0
                  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16));
}

TEST(Pool2dGradBlockedErrorTest, XMustBeBlocked) {
  absl::Status status = PrepareOp(
      PoolGrad(Type("max") + Ints("ksize", {2, 2}) + kChannelBlockedAttr),
      {{"x", MakeTensor<float>({1, 8, 4, 4}, {})},
       {"dy", MakeTensor<float>({1, 1, 3, 3, 8}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"X\" (variable \"x\") "
                        "has shape [1, 8, 4, 4]: expected rank 5 [N, C / 8, H, "
                        "W, 8] for data_format \"NCHW8c\""));
  status = PrepareOp(
      PoolGrad(Type("max") + Ints("ksize", {2, 2}) + kChannelBlockedAttr),
      {{"x", MakeTensor<float>({1, 1, 4, 4, 16}, {})},
       {"dy", MakeTensor<float>({1, 1, 3, 3, 16}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"X\" (variable \"x\") "
                        "has shape [1, 1, 4, 4, 16]: expected rank 5 [N, C / "
                        "8, H, W, 8] for data_format \"NCHW8c\""));
}

TEST(Pool2dGradBlockedErrorTest, XMustBeBlockedBySixteen) {
  const std::string max2x2 =
      PoolGrad(Type("max") + Ints("ksize", {2, 2}) + DataFormat("NCHW16c"));
  absl::Status status =
      PrepareOp(max2x2, {{"x", MakeTensor<float>({1, 16, 4, 4}, {})},
                         {"dy", MakeTensor<float>({1, 1, 3, 3, 16}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"X\" (variable \"x\") "
                        "has shape [1, 16, 4, 4]: expected rank 5 [N, C / 16, "
                        "H, W, 16] for data_format \"NCHW16c\""));
  // NCHW8c's blocks are no NCHW16c ones.
  status = PrepareOp(max2x2, {{"x", MakeTensor<float>({1, 2, 4, 4, 8}, {})},
                              {"dy", MakeTensor<float>({1, 2, 3, 3, 8}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"X\" (variable \"x\") "
                        "has shape [1, 2, 4, 4, 8]: expected rank 5 [N, C / "
                        "16, H, W, 16] for data_format \"NCHW16c\""));
}

TEST(Pool2dGradBlockedErrorTest, OutGradShapeIsBlocked) {
  absl::Status status =
      PrepareOp(PoolGrad(Type("max") + Ints("ksize", {2, 2}) +
                         Ints("strides", {2, 2}) + kChannelBlockedAttr),
                {{"x", MakeTensor<float>({1, 2, 4, 4, 8}, {})},
                 {"dy", MakeTensor<float>({1, 16, 2, 2}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"Out@GRAD\" (variable "
                        "\"dy\") is float32 [1, 16, 2, 2]: expected float32 "
                        "[1, 2, 2, 2, 8], as the forward op's output \"Out\""));
  // Out@GRAD blocked by 8 where X is blocked by 16.
  status = PrepareOp(PoolGrad(Type("max") + Ints("ksize", {2, 2}) +
                              Ints("strides", {2, 2}) + DataFormat("NCHW16c")),
                     {{"x", MakeTensor<float>({1, 1, 4, 4, 16}, {})},
                      {"dy", MakeTensor<float>({1, 2, 2, 2, 8}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d_grad): input \"Out@GRAD\" (variable "
                        "\"dy\") is float32 [1, 2, 2, 2, 8]: expected float32 "
                        "[1, 1, 2, 2, 16], as the forward op's output "
                        "\"Out\""));
}

}  // namespace
}  // namespace scopeflow
