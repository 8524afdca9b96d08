#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/channel_blocks_testing.h"
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

// Channels last (data_format "NHWC"): the same pooling as channels first,
// checked against the NCHW op run on the transposed input.

constexpr char kNhwc[] = "attrs { name: \"data_format\" s: \"NHWC\" } ";
constexpr char kNotExclusive[] = "attrs { name: \"exclusive\" b: false } ";
constexpr char kCeil[] = "attrs { name: \"ceil_mode\" b: true } ";
constexpr char kGlobal[] = "attrs { name: \"global_pooling\" b: true } ";

template <typename T>
Tensor ToNhwc(const Tensor& nchw) {
  return Permute4d<T>(nchw, kNchwToNhwc);
}

template <typename T>
Tensor RandomTensor(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-5, 5);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<T> values(n);
  for (T& v : values) v = static_cast<T>(dist(rng));
  return MakeTensor<T>(dims, values);
}

TEST(Pool2dNhwcTest, PermuteMovesChannelsLast) {
  // [1, 2, 1, 3]: channel 0 holds 0, 1, 2, channel 1 holds 3, 4, 5.
  const Tensor nhwc = ToNhwc<float>(MakeTensor<float>({1, 2, 1, 3}, Iota(6)));
  EXPECT_THAT(nhwc.dims(), ElementsAre(1, 1, 3, 2));
  EXPECT_THAT(Values<float>(nhwc), ElementsAre(0, 3, 1, 4, 2, 5));
}

struct LayoutCase {
  std::string name;
  std::string attrs;
  Dims nchw;  // X's shape in NCHW
};

// Channel counts above and below the vector widths, with remainders, so
// that vectorised channel loops run their main part and their tail.
std::vector<LayoutCase> LayoutCases() {
  return {
      {"max 3x3 stride 2 padded",
       Type("max") + Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}),
       {2, 5, 7, 6}},
      {"max four-sided padding strides ceil_mode",
       Type("max") + Ints("ksize", {3, 2}) + Ints("strides", {2, 3}) +
           Ints("paddings", {1, 0, 0, 1}) + kCeil,
       {1, 17, 8, 7}},
      {"max dilated padded",
       Type("max") + Ints("ksize", {2, 3}) + Ints("dilations", {2, 1}) +
           Ints("paddings", {1, 1}),
       {2, 9, 7, 7}},
      {"max one channel", Type("max") + Ints("ksize", {2, 2}), {3, 1, 5, 4}},
      {"avg exclusive padded",
       Type("avg") + Ints("ksize", {3, 3}) + Ints("paddings", {1, 1}),
       {2, 6, 5, 6}},
      {"avg not exclusive padded",
       Type("avg") + Ints("ksize", {3, 3}) + Ints("paddings", {1, 1}) +
           kNotExclusive,
       {2, 6, 5, 6}},
      {"avg exclusive four-sided padding ceil_mode",
       Type("avg") + Ints("ksize", {3, 2}) + Ints("strides", {2, 2}) +
           Ints("paddings", {0, 1, 1, 0}) + kCeil,
       {1, 17, 6, 7}},
      {"avg not exclusive strides ceil_mode",
       Type("avg") + Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + kNotExclusive + kCeil,
       {1, 17, 6, 7}},
      {"avg not exclusive dilated",
       Type("avg") + Ints("ksize", {2, 2}) + Ints("dilations", {2, 2}) +
           Ints("paddings", {1, 1}) + kNotExclusive,
       {2, 3, 6, 5}},
      // The blocks' channel counts, which take kernels of their own.
      {"max 8 channels padded",
       Type("max") + Ints("ksize", {3, 3}) + Ints("paddings", {1, 1}),
       {2, 8, 5, 6}},
      {"avg exclusive 16 channels strides ceil_mode",
       Type("avg") + Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + kCeil,
       {1, 16, 6, 7}},
      {"global max",
       Type("max") + Ints("ksize", {1, 1}) + kGlobal,
       {2, 11, 4, 5}},
      {"global avg",
       Type("avg") + Ints("ksize", {1, 1}) + kGlobal,
       {2, 11, 4, 5}},
  };
}

// Both layouts sum each window in the same order, so even the averages
// agree exactly.
template <typename T>
void ExpectNhwcMatchesNchw(const LayoutCase& c, uint32_t seed) {
  const Tensor x = RandomTensor<T>(c.nchw, seed);
  auto nchw = RunOp(PoolOp(c.attrs), {{"x", x}}, {"y"});
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  auto nhwc = RunOp(PoolOp(c.attrs + kNhwc), {{"x", ToNhwc<T>(x)}}, {"y"});
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  const Tensor expected = ToNhwc<T>((*nchw)[0]);
  EXPECT_EQ((*nhwc)[0].dtype(), DataTypeOf<T>());
  EXPECT_THAT((*nhwc)[0].dims(), ElementsAreArray(expected.dims()));
  EXPECT_THAT(Values<T>((*nhwc)[0]), ElementsAreArray(Values<T>(expected)));
}

TEST(Pool2dNhwcTest, MatchesTransposedNchwFloat32) {
  uint32_t seed = 1;
  for (const LayoutCase& c : LayoutCases()) {
    SCOPED_TRACE(c.name);
    ExpectNhwcMatchesNchw<float>(c, ++seed);
  }
}

TEST(Pool2dNhwcTest, MatchesTransposedNchwFloat64) {
  uint32_t seed = 100;
  for (const LayoutCase& c : LayoutCases()) {
    SCOPED_TRACE(c.name);
    ExpectNhwcMatchesNchw<double>(c, ++seed);
  }
}

// Inputs large enough that pooling spreads its rows of windows over
// threads (where more than one is available), against a plain loop: 3x3
// windows, stride 2, padding 1, max with its indices and exclusive average,
// in both layouts.
TEST(Pool2dNhwcTest, LargeInputsMatchAPlainLoop) {
  constexpr int64_t kN = 3, kC = 16, kH = 41, kW = 40, kOh = 21, kOw = 20;
  const Tensor x = RandomTensor<float>({kN, kC, kH, kW}, 5);
  const float* in = x.data<float>();
  std::vector<float> max(kN * kC * kOh * kOw), avg(max.size());
  std::vector<int64_t> argmax(max.size());
  for (int64_t p = 0; p < kN * kC; ++p) {
    for (int64_t oh = 0; oh < kOh; ++oh) {
      for (int64_t ow = 0; ow < kOw; ++ow) {
        float best = -std::numeric_limits<float>::infinity(), sum = 0;
        int64_t best_at = -1, count = 0;
        for (int64_t h = 2 * oh - 1; h <= 2 * oh + 1; ++h) {
          for (int64_t w = 2 * ow - 1; w <= 2 * ow + 1; ++w) {
            if (h < 0 || h >= kH || w < 0 || w >= kW) continue;
            const int64_t at = (p * kH + h) * kW + w;
            if (in[at] > best) {
              best = in[at];
              best_at = at;
            }
            sum += in[at];
            ++count;
          }
        }
        const int64_t o = (p * kOh + oh) * kOw + ow;
        max[o] = best;
        argmax[o] = best_at;
        avg[o] = sum / static_cast<float>(count);
      }
    }
  }
  const std::string window = Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
                             Ints("paddings", {1, 1});
  auto max_nchw = RunOp(R"pb(type: "pool2d"
                             inputs { slot: "X" vars: "x" }
                             outputs { slot: "Out" vars: "y" }
                             outputs { slot: "Indices" vars: "i" })pb" +
                            Type("max") + window,
                        {{"x", x}}, {"y", "i"});
  ASSERT_TRUE(max_nchw.ok()) << max_nchw.status();
  EXPECT_THAT(Values<float>((*max_nchw)[0]), ElementsAreArray(max));
  EXPECT_THAT(Values<int64_t>((*max_nchw)[1]), ElementsAreArray(argmax));
  auto avg_nchw = RunOp(PoolOp(Type("avg") + window), {{"x", x}}, {"y"});
  ASSERT_TRUE(avg_nchw.ok()) << avg_nchw.status();
  EXPECT_THAT(Values<float>((*avg_nchw)[0]), Pointwise(FloatEq(), avg));
  const Dims out_dims = {kN, kC, kOh, kOw};
  for (const auto& [type, expected] :
       {std::pair<std::string, const std::vector<float>*>{"max", &max},
        {"avg", &avg}}) {
    SCOPED_TRACE(type);
    auto nhwc = RunOp(PoolOp(Type(type) + window + kNhwc),
                      {{"x", ToNhwc<float>(x)}}, {"y"});
    ASSERT_TRUE(nhwc.ok()) << nhwc.status();
    EXPECT_THAT(
        Values<float>((*nhwc)[0]),
        Pointwise(FloatEq(), Values<float>(ToNhwc<float>(
                                 MakeTensor<float>(out_dims, *expected)))));
  }
}

TEST(Pool2dNhwcTest, HandValues) {
  // [1, 2, 2, 2] NHWC: channel 0 holds 1, 2, 3, 4, channel 1 holds -1, -2,
  // -3, -4 (row-major over H and W).
  const Tensor x =
      MakeTensor<float>({1, 2, 2, 2}, {1, -1, 2, -2, 3, -3, 4, -4});
  auto max = RunOp(PoolOp(Type("max") + Ints("ksize", {1, 2}) + kNhwc),
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT((*max)[0].dims(), ElementsAre(1, 2, 1, 2));
  EXPECT_THAT(Values<float>((*max)[0]), ElementsAre(2, -1, 4, -3));
  // Windows over the padding: 3x3 padded by 1 take all four cells,
  // averaged over 4 (exclusive) or over 9.
  auto avg = RunOp(
      PoolOp(Type("avg") + Ints("ksize", {3, 3}) + Ints("paddings", {1, 1}) +
             Ints("strides", {2, 2}) + kNotExclusive + kNhwc),
      {{"x", x}}, {"y"});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_THAT((*avg)[0].dims(), ElementsAre(1, 1, 1, 2));
  EXPECT_THAT(Values<float>((*avg)[0]),
              Pointwise(FloatEq(), std::vector<float>{10.f / 9, -10.f / 9}));
}

TEST(Pool2dNhwcTest, MaxNaNWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // [1, 2, 3, C] NHWC, 2x2 windows at w = 0 and 1. Per cell (h, w) three
  // channels: a NaN inside window 0 and at its first cell, one at window
  // 1's last cell; channel 2 of window 0 has none. Nine channels repeat the
  // three, so that vectorised channel loops see NaNs too.
  const std::vector<std::array<float, 3>> cells = {
      {1, nan, 5}, {nan, 2, -1}, {0, 3, 7},  // h = 0
      {4, 6, 2},   {3, 1, 0},    {9, -2, nan}};
  const std::array<float, 6> expected = {nan, nan, 5, nan, 3, nan};
  constexpr int kChannels = 9;
  std::vector<float> values;
  for (const auto& cell : cells) {
    for (int c = 0; c < kChannels; ++c) values.push_back(cell[c % 3]);
  }
  auto out =
      RunOp(PoolOp(Type("max") + Ints("ksize", {2, 2}) + kNhwc),
            {{"x", MakeTensor<float>({1, 2, 3, kChannels}, values)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, kChannels));
  std::vector<float> want;
  for (int w = 0; w < 2; ++w) {
    for (int c = 0; c < kChannels; ++c) want.push_back(expected[w * 3 + c % 3]);
  }
  EXPECT_THAT(Values<float>((*out)[0]), Pointwise(NanSensitiveFloatEq(), want));
}

TEST(Pool2dNhwcTest, InfersShapes) {
  const std::string max2x2 = PoolOp(Type("max") + Ints("ksize", {2, 2}) +
                                    Ints("strides", {2, 2}) + kNhwc);
  auto y = InferAtPrepare(max2x2, {{"x", kFloat32, {2, 8, 6, 3}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(2, 4, 3, 3));
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {-1, 8, -1, 3}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 4, -1, 3));
  y = InferAtPrepare(max2x2, {{"x", kFloat64, {1, 4, 4, 0}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->dtype, kFloat64);
  EXPECT_THAT(y->dims, ElementsAre(1, 2, 2, 0));
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, -1, -1, -1));
  const std::string global =
      PoolOp(Type("avg") + Ints("ksize", {2, 2}) + kGlobal + kNhwc);
  y = InferAtPrepare(global, {{"x", kFloat32, {5, 7, 9, 3}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(5, 1, 1, 3));
  y = InferAtPrepare(global, {{"x", kFloat32, {}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 1, 1, -1));
  // Height and width are axes 1 and 2: a height of 1 is too small, a
  // channel count of 1 is not.
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 1, 5, 3}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 5, 3]: too small for \"ksize\" = [2, "
                        "2] with paddings [0, 0, 0, 0] and strides [2, 2]; "
                        "expected a positive output height and width, got "
                        "[0, 2]"));
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 4, 0, 3}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 4, 0, 3]: expected a positive height and "
                        "width"));
}

TEST(Pool2dNhwcErrorTest, IndicesNeedNchw) {
  absl::Status status = PrepareOp(
      "type: \"pool2d\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"y\" } outputs { slot: \"Indices\" vars: \"i\" } " +
          Type("max") + Ints("ksize", {2, 2}) + kNhwc,
      {{"x", MakeTensor<float>({1, 2, 2, 3}, Iota(12))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d): output \"Indices\" (variable \"i\") "
                        "holds offsets into NCHW tensors: expected "
                        "data_format \"NCHW\", got \"NHWC\""));
}

TEST(Pool2dNhwcErrorTest, DataFormatMustBeKnown) {
  absl::Status status =
      PrepareOp(PoolOp(Type("max") + Ints("ksize", {2, 2}) +
                       "attrs { name: \"data_format\" s: \"NCWH\" } "),
                {{"x", OneToNine()}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d): attribute \"data_format\" must be "
                        "one of NCHW, NHWC, NCHW8c, NCHW16c, got \"NCWH\""));
}

// Channel-blocked (data_format "NCHW8c" [N, C / 8, H, W, 8] or "NCHW16c"
// [N, C / 16, H, W, 16]): the same pooling as channels first, checked
// against the NCHW op run on the input blocked and its result blocked.

// The data_format attribute naming `format`.
std::string DataFormat(const std::string& format) {
  return absl::StrCat("attrs { name: \"data_format\" s: \"", format, "\" } ");
}

TEST(Pool2dBlockedTest, ToBlockedGroupsEightChannelsPerPixel) {
  // [1, 16, 1, 2]: channel c holds 2c (w = 0) and 2c + 1 (w = 1).
  const Tensor blocked =
      ToChannelBlocks<float>(MakeTensor<float>({1, 16, 1, 2}, Iota(32)));
  EXPECT_THAT(blocked.dims(), ElementsAre(1, 2, 1, 2, 8));
  EXPECT_THAT(Values<float>(blocked),
              ElementsAre(0, 2, 4, 6, 8, 10, 12, 14,         // block 0, w 0
                          1, 3, 5, 7, 9, 11, 13, 15,         // block 0, w 1
                          16, 18, 20, 22, 24, 26, 28, 30,    // block 1, w 0
                          17, 19, 21, 23, 25, 27, 29, 31));  // block 1, w 1
}

TEST(Pool2dBlockedTest, ToBlockedGroupsSixteenChannelsPerPixel) {
  // [1, 32, 1, 2]: channel c holds 2c (w = 0) and 2c + 1 (w = 1).
  const Tensor blocked =
      InFormat<float>(MakeTensor<float>({1, 32, 1, 2}, Iota(64)), "NCHW16c");
  EXPECT_THAT(blocked.dims(), ElementsAre(1, 2, 1, 2, 16));
  std::vector<float> want;
  for (int block = 0; block < 2; ++block) {
    for (int w = 0; w < 2; ++w) {
      for (int k = 0; k < 16; ++k) want.push_back(2 * (16 * block + k) + w);
    }
  }
  EXPECT_THAT(Values<float>(blocked), ElementsAreArray(want));
}

// The NHWC cases with their channels rounded up to whole blocks of
// `format`.
std::vector<LayoutCase> BlockedCases(const std::string& format) {
  const int64_t b = BlockIn(format);
  std::vector<LayoutCase> cases = LayoutCases();
  for (LayoutCase& c : cases) c.nchw[1] = (c.nchw[1] + b - 1) / b * b;
  return cases;
}

// Each window of each channel sums in the same order in both layouts, so
// even the averages agree exactly.
template <typename T>
void ExpectBlockedMatchesNchw(const LayoutCase& c, const std::string& format,
                              uint32_t seed) {
  const Tensor x = RandomTensor<T>(c.nchw, seed);
  auto nchw = RunOp(PoolOp(c.attrs), {{"x", x}}, {"y"});
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  auto blocked = RunOp(PoolOp(c.attrs + DataFormat(format)),
                       {{"x", InFormat<T>(x, format)}}, {"y"});
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  const Tensor expected = InFormat<T>((*nchw)[0], format);
  EXPECT_EQ((*blocked)[0].dtype(), DataTypeOf<T>());
  EXPECT_THAT((*blocked)[0].dims(), ElementsAreArray(expected.dims()));
  EXPECT_THAT(Values<T>((*blocked)[0]), ElementsAreArray(Values<T>(expected)));
}

TEST(Pool2dBlockedTest, MatchesBlockedNchwFloat32) {
  uint32_t seed = 300;
  for (const char* format : kBlockedFormats) {
    for (const LayoutCase& c : BlockedCases(format)) {
      SCOPED_TRACE(absl::StrCat(format, " ", c.name));
      ExpectBlockedMatchesNchw<float>(c, format, ++seed);
    }
  }
}

TEST(Pool2dBlockedTest, MatchesBlockedNchwFloat64) {
  uint32_t seed = 400;
  for (const char* format : kBlockedFormats) {
    for (const LayoutCase& c : BlockedCases(format)) {
      SCOPED_TRACE(absl::StrCat(format, " ", c.name));
      ExpectBlockedMatchesNchw<double>(c, format, ++seed);
    }
  }
}

// Rows of windows spread over threads (where more than one is available).
TEST(Pool2dBlockedTest, LargeInputsMatchBlockedNchw) {
  const Tensor x = RandomTensor<float>({3, 32, 41, 40}, 7);
  const std::string window = Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
                             Ints("paddings", {1, 1});
  for (const char* type : {"max", "avg"}) {
    auto nchw = RunOp(PoolOp(Type(type) + window), {{"x", x}}, {"y"});
    ASSERT_TRUE(nchw.ok()) << nchw.status();
    for (const char* format : kBlockedFormats) {
      SCOPED_TRACE(absl::StrCat(type, " ", format));
      const int64_t b = BlockIn(format);
      auto blocked = RunOp(PoolOp(Type(type) + window + DataFormat(format)),
                           {{"x", InFormat<float>(x, format)}}, {"y"});
      ASSERT_TRUE(blocked.ok()) << blocked.status();
      EXPECT_THAT((*blocked)[0].dims(), ElementsAre(3, 32 / b, 21, 20, b));
      EXPECT_THAT(
          Values<float>((*blocked)[0]),
          ElementsAreArray(Values<float>(InFormat<float>((*nchw)[0], format))));
    }
  }
}

TEST(Pool2dBlockedTest, HandValues) {
  // [1, 1, 2, 2, 8]: channel k of pixel (h, w) holds (k + 1) * (1 + 2h + w),
  // so channel k's image is (k + 1) * [[1, 2], [3, 4]].
  std::vector<float> values;
  for (int pixel = 1; pixel <= 4; ++pixel) {
    for (int k = 0; k < 8; ++k) values.push_back((k + 1) * pixel);
  }
  const Tensor x = MakeTensor<float>({1, 1, 2, 2, 8}, values);
  // Rows' maxima: (k + 1) * 2 and (k + 1) * 4.
  auto max =
      RunOp(PoolOp(Type("max") + Ints("ksize", {1, 2}) + kChannelBlockedAttr),
            {{"x", x}}, {"y"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT((*max)[0].dims(), ElementsAre(1, 1, 2, 1, 8));
  EXPECT_THAT(Values<float>((*max)[0]),
              ElementsAre(2, 4, 6, 8, 10, 12, 14, 16,  //
                          4, 8, 12, 16, 20, 24, 28, 32));
  // One 3x3 window padded by 1 over all four pixels: (k + 1) * 10 divided
  // by 4 (exclusive) or by 9.
  const std::string avg3x3 = Type("avg") + Ints("ksize", {3, 3}) +
                             Ints("paddings", {1, 1}) +
                             Ints("strides", {2, 2}) + kChannelBlockedAttr;
  auto exclusive = RunOp(PoolOp(avg3x3), {{"x", x}}, {"y"});
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  EXPECT_THAT((*exclusive)[0].dims(), ElementsAre(1, 1, 1, 1, 8));
  EXPECT_THAT(Values<float>((*exclusive)[0]),
              Pointwise(FloatEq(), std::vector<float>{2.5, 5, 7.5, 10, 12.5, 15,
                                                      17.5, 20}));
  auto padded = RunOp(PoolOp(avg3x3 + kNotExclusive), {{"x", x}}, {"y"});
  ASSERT_TRUE(padded.ok()) << padded.status();
  std::vector<float> want;
  for (int k = 0; k < 8; ++k) want.push_back((k + 1) * 10.f / 9);
  EXPECT_THAT(Values<float>((*padded)[0]), Pointwise(FloatEq(), want));
}

TEST(Pool2dBlockedTest, HandValuesSixteen) {
  // [1, 1, 2, 2, 16]: channel k of pixel (h, w) holds (k + 1) * (1 + 2h + w)
  // with channels 8 to 15 negated, so channel k's image is
  // +-(k + 1) * [[1, 2], [3, 4]]: the negated channels peak at the pixel
  // where the others have their least.
  std::vector<float> values;
  for (int pixel = 1; pixel <= 4; ++pixel) {
    for (int k = 0; k < 16; ++k) {
      values.push_back((k < 8 ? 1 : -1) * (k + 1) * pixel);
    }
  }
  const std::string blocked16 = DataFormat("NCHW16c");
  const Tensor x = MakeTensor<float>({1, 1, 2, 2, 16}, values);
  // Rows' maxima: (k + 1) * 2 and (k + 1) * 4, or -(k + 1) and
  // -(k + 1) * 3 for the negated channels.
  auto max = RunOp(PoolOp(Type("max") + Ints("ksize", {1, 2}) + blocked16),
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT((*max)[0].dims(), ElementsAre(1, 1, 2, 1, 16));
  EXPECT_THAT(Values<float>((*max)[0]),
              ElementsAre(2, 4, 6, 8, 10, 12, 14, 16,             // h 0
                          -9, -10, -11, -12, -13, -14, -15, -16,  //
                          4, 8, 12, 16, 20, 24, 28, 32,           // h 1
                          -27, -30, -33, -36, -39, -42, -45, -48));
  // One 3x3 window padded by 1 over all four pixels: +-(k + 1) * 10
  // divided by 4 (exclusive) or by 9.
  const std::string avg3x3 = Type("avg") + Ints("ksize", {3, 3}) +
                             Ints("paddings", {1, 1}) +
                             Ints("strides", {2, 2}) + blocked16;
  auto exclusive = RunOp(PoolOp(avg3x3), {{"x", x}}, {"y"});
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  EXPECT_THAT((*exclusive)[0].dims(), ElementsAre(1, 1, 1, 1, 16));
  EXPECT_THAT(
      Values<float>((*exclusive)[0]),
      Pointwise(FloatEq(),
                std::vector<float>{2.5, 5, 7.5, 10, 12.5, 15, 17.5, 20, -22.5,
                                   -25, -27.5, -30, -32.5, -35, -37.5, -40}));
  auto padded = RunOp(PoolOp(avg3x3 + kNotExclusive), {{"x", x}}, {"y"});
  ASSERT_TRUE(padded.ok()) << padded.status();
  std::vector<float> want;
  for (int k = 0; k < 16; ++k) {
    want.push_back((k < 8 ? 1 : -1) * (k + 1) * 10.f / 9);
  }
  EXPECT_THAT(Values<float>((*padded)[0]), Pointwise(FloatEq(), want));
}

TEST(Pool2dBlockedTest, MaxNaNWinsAsInNchw) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> values = Iota(2 * 16 * 3 * 4);
  for (size_t i = 0; i < values.size(); i += 5) values[i] = nan;
  const Tensor x = MakeTensor<float>({2, 16, 3, 4}, values);
  const std::string max2x2 = Type("max") + Ints("ksize", {2, 2});
  auto nchw = RunOp(PoolOp(max2x2), {{"x", x}}, {"y"});
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  for (const char* format : kBlockedFormats) {
    SCOPED_TRACE(format);
    auto blocked = RunOp(PoolOp(max2x2 + DataFormat(format)),
                         {{"x", InFormat<float>(x, format)}}, {"y"});
    ASSERT_TRUE(blocked.ok()) << blocked.status();
    EXPECT_THAT(Values<float>((*blocked)[0]),
                Pointwise(NanSensitiveFloatEq(),
                          Values<float>(InFormat<float>((*nchw)[0], format))));
  }
}

// pool2d of 2x2 windows, stride 2, max, on X in blocked `format`.
std::string BlockedMax2x2(const std::string& format) {
  return PoolOp(Type("max") + Ints("ksize", {2, 2}) + Ints("strides", {2, 2}) +
                DataFormat(format));
}

TEST(Pool2dBlockedTest, InfersShapes) {
  for (const char* format : kBlockedFormats) {
    SCOPED_TRACE(format);
    const int64_t b = BlockIn(format);
    const std::string max2x2 = BlockedMax2x2(format);
    auto y = InferAtPrepare(max2x2, {{"x", kFloat32, {2, 3, 8, 6, b}}}, "y");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(y->dims, ElementsAre(2, 3, 4, 3, b));
    // An unknown last dim is the block's.
    y = InferAtPrepare(max2x2, {{"x", kFloat64, {-1, 3, -1, 6, -1}}}, "y");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->dtype, kFloat64);
    EXPECT_THAT(y->dims, ElementsAre(-1, 3, -1, 3, b));
    y = InferAtPrepare(max2x2, {{"x", kFloat32, {}}}, "y");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(y->dims, ElementsAre(-1, -1, -1, -1, b));
    const std::string global = PoolOp(Type("avg") + Ints("ksize", {2, 2}) +
                                      kGlobal + DataFormat(format));
    y = InferAtPrepare(global, {{"x", kFloat32, {5, 2, 7, 9, b}}}, "y");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(y->dims, ElementsAre(5, 2, 1, 1, b));
  }
}

TEST(Pool2dBlockedErrorTest, XMustBeBlocked) {
  const std::string max2x2 =
      PoolOp(Type("max") + Ints("ksize", {2, 2}) + kChannelBlockedAttr);
  // Rank 4 (an NCHW image), and rank 5 with a last dim other than 8.
  auto y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 8, 4, 4}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 8, 4, 4]: expected rank 5 [N, C / 8, H, W, "
                        "8] for data_format \"NCHW8c\""));
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 2, 4, 4, 4}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 2, 4, 4, 4]: expected rank 5 [N, C / 8, H, "
                        "W, 8] for data_format \"NCHW8c\""));
  // NCHW16c's blocks are no NCHW8c ones.
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 1, 4, 4, 16}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 4, 4, 16]: expected rank 5 [N, C / 8, "
                        "H, W, 8] for data_format \"NCHW8c\""));
  absl::Status status = PrepareOp(
      max2x2, {{"x", MakeTensor<float>({1, 1, 4, 4, 8, 1}, Iota(128))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 1, 4, 4, 8, 1]: expected rank 5"));
}

TEST(Pool2dBlockedErrorTest, XMustBeBlockedBySixteen) {
  const std::string max2x2 =
      PoolOp(Type("max") + Ints("ksize", {2, 2}) + DataFormat("NCHW16c"));
  auto y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 16, 4, 4}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 16, 4, 4]: expected rank 5 [N, C / 16, H, "
                        "W, 16] for data_format \"NCHW16c\""));
  // NCHW8c's blocks are no NCHW16c ones.
  y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 2, 4, 4, 8}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 2, 4, 4, 8]: expected rank 5 [N, C / 16, "
                        "H, W, 16] for data_format \"NCHW16c\""));
  absl::Status status =
      PrepareOp(max2x2, {{"x", MakeTensor<float>({1, 2, 4, 4, 8}, Iota(256))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool2d): input \"X\" (variable \"x\") has "
                        "shape [1, 2, 4, 4, 8]: expected rank 5 [N, C / 16, "
                        "H, W, 16] for data_format \"NCHW16c\""));
}

TEST(Pool2dBlockedErrorTest, SpatialAxesAreTwoAndThree) {
  for (const char* format : kBlockedFormats) {
    SCOPED_TRACE(format);
    const int64_t b = BlockIn(format);
    const std::string max2x2 = BlockedMax2x2(format);
    auto y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 2, 1, 5, b}}}, "y");
    EXPECT_THAT(y.status().message(),
                HasSubstr(absl::StrCat(
                    "op 0 (pool2d): input \"X\" (variable \"x\") has shape "
                    "[1, 2, 1, 5, ",
                    b,
                    "]: too small for \"ksize\" = [2, 2] with paddings [0, 0, "
                    "0, 0] and strides [2, 2]; expected a positive output "
                    "height and width, got [0, 2]")));
    y = InferAtPrepare(max2x2, {{"x", kFloat32, {1, 2, 4, 0, b}}}, "y");
    EXPECT_THAT(y.status().message(),
                HasSubstr(absl::StrCat(
                    "op 0 (pool2d): input \"X\" (variable \"x\") has shape "
                    "[1, 2, 4, 0, ",
                    b, "]: expected a positive height and width")));
  }
}

TEST(Pool2dBlockedErrorTest, IndicesNeedNchw) {
  for (const char* format : kBlockedFormats) {
    SCOPED_TRACE(format);
    const int64_t b = BlockIn(format);
    absl::Status status = PrepareOp(
        "type: \"pool2d\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
        "\"Out\" vars: \"y\" } outputs { slot: \"Indices\" vars: \"i\" } " +
            Type("max") + Ints("ksize", {2, 2}) + DataFormat(format),
        {{"x", MakeTensor<float>({1, 1, 2, 2, b}, Iota(4 * b))}});
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrCat(
                    "op 0 (pool2d): output \"Indices\" (variable \"i\") holds "
                    "offsets into NCHW tensors: expected data_format "
                    "\"NCHW\", got \"",
                    format, "\"")));
  }
}

}  // namespace
}  // namespace scopeflow
