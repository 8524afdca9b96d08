#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct ConvConfig {
  std::string name;
  Dims input;   // [N, C, H, W]
  Dims filter;  // [M, C / groups, kH, kW]
  std::vector<int32_t> strides = {1, 1};
  std::vector<int32_t> paddings = {0, 0};
  std::vector<int32_t> dilations = {1, 1};
  int groups = 1;
  bool bias = false;
  // Empty: the attribute is left out (NCHW).
  std::string data_format = "";
};

void PrintTo(const ConvConfig& c, std::ostream* os) { *os << c.name; }

std::string IntsAttr(const std::string& name,
                     const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } }");
}

std::string ConvOp(const ConvConfig& c) {
  return absl::StrCat(
      "type: \"conv2d\" inputs { slot: \"Input\" vars: \"x\" } ",
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Output\" vars: \"y\" } ",
      IntsAttr("strides", c.strides), IntsAttr("paddings", c.paddings),
      IntsAttr("dilations", c.dilations),
      "attrs { name: \"groups\" i: ", c.groups, " }",
      c.data_format.empty()
          ? ""
          : absl::StrCat(" attrs { name: \"data_format\" s: \"", c.data_format,
                         "\" }"));
}

// [N, C, H, W] to [N, H, W, C].
template <typename T>
std::vector<T> ToNhwc(const std::vector<T>& nchw, const Dims& dims) {
  return Values<T>(Permute4d<T>(MakeTensor<T>(dims, nchw), kNchwToNhwc));
}

Dims NhwcDims(const Dims& nchw) { return {nchw[0], nchw[2], nchw[3], nchw[1]}; }

// Plain nested loops: the definition of the convolution, in double.
std::vector<float> ReferenceConv(const ConvConfig& c,
                                 const std::vector<float>& x,
                                 const std::vector<float>& w,
                                 const std::vector<float>& b, Dims& out_dims) {
  const int64_t n = c.input[0], ch = c.input[1], h = c.input[2],
                wd = c.input[3];
  const int64_t m = c.filter[0], cg = c.filter[1], kh = c.filter[2],
                kw = c.filter[3];
  const int64_t pt = c.paddings[0],
                pb = c.paddings.size() == 4 ? c.paddings[1] : c.paddings[0];
  const int64_t pl = c.paddings.size() == 4 ? c.paddings[2] : c.paddings[1],
                pr = c.paddings.size() == 4 ? c.paddings[3] : c.paddings[1];
  const int64_t sh = c.strides[0], sw = c.strides[1];
  const int64_t dh = c.dilations[0], dw = c.dilations[1];
  const int64_t oh = (h + pt + pb - dh * (kh - 1) - 1) / sh + 1;
  const int64_t ow = (wd + pl + pr - dw * (kw - 1) - 1) / sw + 1;
  const int64_t mg = m / c.groups;
  out_dims = {n, m, oh, ow};
  std::vector<float> out(n * m * oh * ow);
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t om = 0; om < m; ++om) {
      const int64_t group = om / mg;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo) {
          double sum = c.bias ? b[om] : 0.0;
          for (int64_t ic = 0; ic < cg; ++ic) {
            const int64_t channel = group * cg + ic;
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t hy = y * sh - pt + i * dh;
                const int64_t wx = xo * sw - pl + j * dw;
                if (hy < 0 || hy >= h || wx < 0 || wx >= wd) continue;
                sum += static_cast<double>(
                           x[((in * ch + channel) * h + hy) * wd + wx]) *
                       w[((om * cg + ic) * kh + i) * kw + j];
              }
            }
          }
          out[((in * m + om) * oh + y) * ow + xo] = static_cast<float>(sum);
        }
      }
    }
  }
  (void)ch;
  return out;
}

class Conv2dReferenceTest : public ::testing::TestWithParam<ConvConfig> {};

TEST_P(Conv2dReferenceTest, MatchesNestedLoops) {
  const ConvConfig& c = GetParam();
  const std::vector<float> x = RandomFloats(NumElements(c.input), 1);
  const std::vector<float> w = RandomFloats(NumElements(c.filter), 2);
  const std::vector<float> b = RandomFloats(c.filter[0], 3);
  std::vector<Feed> feeds = {{"x", MakeTensor<float>(c.input, x)},
                             {"w", MakeTensor<float>(c.filter, w)}};
  if (c.bias) feeds.push_back({"b", MakeTensor<float>({c.filter[0]}, b)});
  auto out = RunOp(ConvOp(c), feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  Dims expected_dims;
  const std::vector<float> expected = ReferenceConv(c, x, w, b, expected_dims);
  ASSERT_EQ((*out)[0].dims(), expected_dims);
  const std::vector<float> got = Values<float>((*out)[0]);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(got[i], expected[i], 1e-4) << "at " << i;
  }
}

// data_format "NHWC" on the transposed input gives the nested loops'
// result transposed, in float32 (oneDNN) and float64 (the reference).
TEST_P(Conv2dReferenceTest, NhwcMatchesNestedLoopsTransposed) {
  ConvConfig c = GetParam();
  const std::vector<float> x = RandomFloats(NumElements(c.input), 21);
  const std::vector<float> w = RandomFloats(NumElements(c.filter), 22);
  const std::vector<float> b = RandomFloats(c.filter[0], 23);
  Dims nchw_out;
  const std::vector<float> expected =
      ToNhwc(ReferenceConv(c, x, w, b, nchw_out), nchw_out);
  c.data_format = "NHWC";
  const std::vector<float> x_nhwc = ToNhwc(x, c.input);
  {
    SCOPED_TRACE("float32");
    std::vector<Feed> feeds = {
        {"x", MakeTensor<float>(NhwcDims(c.input), x_nhwc)},
        {"w", MakeTensor<float>(c.filter, w)}};
    if (c.bias) feeds.push_back({"b", MakeTensor<float>({c.filter[0]}, b)});
    auto out = RunOp(ConvOp(c), feeds, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dims(), NhwcDims(nchw_out));
    const std::vector<float> got = Values<float>((*out)[0]);
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_NEAR(got[i], expected[i], 1e-4) << "at " << i;
    }
  }
  {
    SCOPED_TRACE("float64");
    std::vector<Feed> feeds = {
        {"x",
         MakeTensor<double>(NhwcDims(c.input),
                            std::vector<double>(x_nhwc.begin(), x_nhwc.end()))},
        {"w", MakeTensor<double>(c.filter,
                                 std::vector<double>(w.begin(), w.end()))}};
    if (c.bias) {
      feeds.push_back(
          {"b", MakeTensor<double>({c.filter[0]},
                                   std::vector<double>(b.begin(), b.end()))});
    }
    auto out = RunOp(ConvOp(c), feeds, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dims(), NhwcDims(nchw_out));
    const std::vector<double> got = Values<double>((*out)[0]);
    for (size_t i = 0; i < expected.size(); ++i) {
      // The nested loops round their double sums to float.
      ASSERT_NEAR(got[i], expected[i], 1e-5) << "at " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, Conv2dReferenceTest,
    ::testing::Values(
        ConvConfig{"plain", {2, 3, 7, 6}, {4, 3, 3, 3}},
        ConvConfig{"bias",
                   {2, 3, 7, 6},
                   {4, 3, 3, 3},
                   {1, 1},
                   {0, 0},
                   {1, 1},
                   1,
                   true},
        ConvConfig{"stride2_pad1",
                   {2, 3, 9, 8},
                   {5, 3, 3, 3},
                   {2, 2},
                   {1, 1},
                   {1, 1},
                   1,
                   true},
        ConvConfig{
            "dilation2", {1, 4, 10, 9}, {3, 4, 3, 3}, {1, 1}, {2, 2}, {2, 2}},
        ConvConfig{"groups2",
                   {2, 4, 6, 7},
                   {6, 2, 3, 3},
                   {1, 1},
                   {1, 1},
                   {1, 1},
                   2,
                   true},
        ConvConfig{"depthwise",
                   {2, 5, 8, 8},
                   {5, 1, 3, 3},
                   {1, 1},
                   {1, 1},
                   {1, 1},
                   5,
                   false},
        ConvConfig{"depthwise_multiplier",
                   {1, 3, 6, 6},
                   {6, 1, 3, 3},
                   {2, 1},
                   {1, 1},
                   {1, 1},
                   3,
                   true},
        ConvConfig{"asymmetric",
                   {1, 3, 7, 9},
                   {4, 3, 3, 2},
                   {2, 1},
                   {1, 0, 2, 1},
                   {1, 2}},
        ConvConfig{"pointwise",
                   {3, 16, 5, 5},
                   {8, 16, 1, 1},
                   {1, 1},
                   {0, 0},
                   {1, 1},
                   1,
                   true},
        ConvConfig{"wide",
                   {1, 32, 12, 12},
                   {32, 32, 3, 3},
                   {1, 1},
                   {1, 1},
                   {1, 1},
                   1,
                   true},
        // Channels enough for Winograd's algorithm (conv_onednn.h) where
        // the CPU has it: images of tiles cut short at their edges, a
        // batch, and channels not a multiple of oneDNN's blocks of 16.
        ConvConfig{"winograd_one_image",
                   {1, 32, 13, 11},
                   {64, 32, 3, 3},
                   {1, 1},
                   {1, 1},
                   {1, 1},
                   1,
                   true},
        ConvConfig{"winograd_batch",
                   {5, 64, 9, 10},
                   {64, 64, 3, 3},
                   {1, 1},
                   {1, 1},
                   {1, 1},
                   1,
                   true},
        ConvConfig{
            "winograd_unpadded_odd_channels", {2, 48, 8, 7}, {72, 48, 3, 3}},
        ConvConfig{"padding_beyond_filter",
                   {1, 2, 4, 4},
                   {3, 2, 1, 1},
                   {1, 1},
                   {2, 2},
                   {1, 1},
                   1,
                   true},
        ConvConfig{"stride_beyond_filter",
                   {2, 3, 10, 11},
                   {4, 3, 2, 2},
                   {3, 3},
                   {0, 0},
                   {1, 1},
                   1,
                   true}),
    [](const ::testing::TestParamInfo<ConvConfig>& info) {
      return info.param.name;
    });

// Kernels share nothing between runs but oneDNN's thread-safe caches: one
// op runs on several threads at once.
TEST(Conv2dTest, RunsOnManyThreadsAtOnce) {
  const ConvConfig c{
      "threads", {2, 8, 9, 9}, {8, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true};
  const std::vector<float> x = RandomFloats(NumElements(c.input), 4);
  const std::vector<float> w = RandomFloats(NumElements(c.filter), 5);
  const std::vector<float> b = RandomFloats(c.filter[0], 6);
  Dims dims;
  const std::vector<float> expected = ReferenceConv(c, x, w, b, dims);
  std::vector<std::string> failures(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto out = RunOp(ConvOp(c),
                         {{"x", MakeTensor<float>(c.input, x)},
                          {"w", MakeTensor<float>(c.filter, w)},
                          {"b", MakeTensor<float>({c.filter[0]}, b)}},
                         {"y"});
        if (!out.ok()) {
          failures[t] = std::string(out.status().message());
          return;
        }
        const std::vector<float> got = Values<float>((*out)[0]);
        for (size_t j = 0; j < expected.size(); ++j) {
          if (std::abs(got[j] - expected[j]) > 1e-4) {
            failures[t] = absl::StrCat("mismatch at ", j);
            return;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(failures, ::testing::Each(""));
}

// Runs `c` with values drawn from `seed` and compares with the nested
// loops; "" when they agree, else what went wrong.
std::string RunAndCompare(const ConvConfig& c, uint32_t seed) {
  const std::vector<float> x = RandomFloats(NumElements(c.input), seed);
  const std::vector<float> w = RandomFloats(NumElements(c.filter), seed + 1);
  const std::vector<float> b = RandomFloats(c.filter[0], seed + 2);
  std::vector<Feed> feeds = {{"x", MakeTensor<float>(c.input, x)},
                             {"w", MakeTensor<float>(c.filter, w)}};
  if (c.bias) feeds.push_back({"b", MakeTensor<float>({c.filter[0]}, b)});
  auto out = RunOp(ConvOp(c), feeds, {"y"});
  if (!out.ok()) return std::string(out.status().message());
  Dims dims;
  const std::vector<float> expected = ReferenceConv(c, x, w, b, dims);
  const std::vector<float> got = Values<float>((*out)[0]);
  for (size_t j = 0; j < expected.size(); ++j) {
    if (std::abs(got[j] - expected[j]) > 1e-4) {
      return absl::StrCat(c.name, ": mismatch at ", j);
    }
  }
  return "";
}

// The kernel keeps its oneDNN set-up per thread and shape: a repeated shape
// must still read the new weights, input and bias, and more shapes than
// the set-ups kept must come back right after being dropped.
TEST(Conv2dTest, RepeatedShapesReadNewValues) {
  std::vector<ConvConfig> configs;
  for (int i = 1; i <= 40; ++i) {
    configs.push_back({absl::StrCat("width", i),
                       {1, 3, 5, 4 + i},
                       {4, 3, 3, 3},
                       {1, 1},
                       {1, 1},
                       {1, 1},
                       1,
                       i % 2 == 0});
  }
  for (uint32_t round = 0; round < 2; ++round) {
    for (size_t i = 0; i < configs.size(); ++i) {
      EXPECT_EQ(RunAndCompare(configs[i], 10 * i + 1000 * round), "");
    }
    // The same shape twice in a row, with other values.
    EXPECT_EQ(RunAndCompare(configs[0], 7 + round), "");
  }
}

// Threads running the same shape with different values at once: each
// thread's set-up and scratch buffers are its own.
TEST(Conv2dTest, ConcurrentRunsOfOneShapeKeepTheirValues) {
  const ConvConfig c{
      "threads", {2, 16, 10, 10}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1,
      true};
  std::vector<std::string> failures(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < 10 && failures[t].empty(); ++i) {
        failures[t] = RunAndCompare(c, 100 * t + 3 * i);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(failures, ::testing::Each(""));
}

TEST(Conv2dTest, HandComputed) {
  // [[1 2 3] [4 5 6] [7 8 9]] * [[1 0] [0 1]]: each output is the sum of a
  // cell and its lower-right neighbour, plus the bias 10.
  auto out = RunOp(
      R"pb(type: "conv2d"
           inputs { slot: "Input" vars: "x" }
           inputs { slot: "Filter" vars: "w" }
           inputs { slot: "Bias" vars: "b" }
           outputs { slot: "Output" vars: "y" })pb",
      {{"x", MakeTensor<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
       {"w", MakeTensor<float>({1, 1, 2, 2}, {1, 0, 0, 1})},
       {"b", MakeTensor<float>({1}, {10})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(16, 18, 22, 24));
}

TEST(Conv2dTest, PaddingAndStrideByHand) {
  // A 3x3 box of ones over a 3x3 input with padding 1 and stride 2: the
  // four corner windows each see a 2x2 corner of the input.
  auto out = RunOp(
      R"pb(type: "conv2d"
           inputs { slot: "Input" vars: "x" }
           inputs { slot: "Filter" vars: "w" }
           outputs { slot: "Output" vars: "y" }
           attrs {
             name: "strides"
             ints { values: [ 2, 2 ] }
           }
           attrs {
             name: "paddings"
             ints { values: [ 1, 1 ] }
           })pb",
      {{"x", MakeTensor<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
       {"w", MakeTensor<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(12, 16, 24, 28));
}

TEST(Conv2dTest, EmptyBatch) {
  auto out = RunOp(
      R"pb(type: "conv2d"
           inputs { slot: "Input" vars: "x" }
           inputs { slot: "Filter" vars: "w" }
           outputs { slot: "Output" vars: "y" })pb",
      {{"x", MakeTensor<float>({0, 2, 4, 4}, {})},
       {"w", MakeTensor<float>({3, 2, 3, 3}, std::vector<float>(54, 1.0f))}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 3, 2, 2));
}

TEST(Conv2dTest, WindowsOfOnlyPaddingGiveTheBias) {
  // An empty image padded by 1: each output cell sees only padding.
  auto out = RunOp(R"pb(type: "conv2d"
                        inputs { slot: "Input" vars: "x" }
                        inputs { slot: "Filter" vars: "w" }
                        inputs { slot: "Bias" vars: "b" }
                        outputs { slot: "Output" vars: "y" }
                        attrs {
                          name: "paddings"
                          ints { values: [ 1, 1 ] }
                        })pb",
                   {{"x", MakeTensor<float>({1, 2, 0, 1}, {})},
                    {"w", MakeTensor<float>({2, 2, 1, 1}, {1, 1, 1, 1})},
                    {"b", MakeTensor<float>({2}, {0.5, -3})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 2, 3));
  EXPECT_THAT(
      Values<float>((*out)[0]),
      ElementsAre(0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -3, -3, -3, -3, -3, -3));
}

TEST(Conv2dNhwcTest, HandComputed) {
  // Two channels at each of two positions, [1, 10] and [2, 20]; the
  // filters pick channel 0, channel 1, and their sum plus the bias 100.
  for (const bool f64 : {false, true}) {
    SCOPED_TRACE(f64 ? "float64" : "float32");
    const std::vector<double> x = {1, 10, 2, 20};
    const std::vector<double> w = {1, 0, 0, 1, 1, 1};
    const std::vector<double> b = {0, 0, 100};
    auto out = RunOp(
        R"pb(type: "conv2d"
             inputs { slot: "Input" vars: "x" }
             inputs { slot: "Filter" vars: "w" }
             inputs { slot: "Bias" vars: "b" }
             outputs { slot: "Output" vars: "y" }
             attrs { name: "data_format" s: "NHWC" })pb",
        {{"x", f64 ? MakeTensor<double>({1, 1, 2, 2}, x)
                   : MakeTensor<float>({1, 1, 2, 2}, {1, 10, 2, 20})},
         {"w", f64 ? MakeTensor<double>({3, 2, 1, 1}, w)
                   : MakeTensor<float>({3, 2, 1, 1}, {1, 0, 0, 1, 1, 1})},
         {"b", f64 ? MakeTensor<double>({3}, b)
                   : MakeTensor<float>({3}, {0, 0, 100})}},
        {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 3));
    if (f64) {
      EXPECT_THAT(Values<double>((*out)[0]),
                  ElementsAre(1, 10, 111, 2, 20, 122));
    } else {
      EXPECT_THAT(Values<float>((*out)[0]),
                  ElementsAre(1, 10, 111, 2, 20, 122));
    }
  }
}

TEST(Conv2dNhwcTest, WindowsOfOnlyPaddingGiveTheBiasPerChannel) {
  // As WindowsOfOnlyPaddingGiveTheBias, channels last: the bias alternates.
  auto out = RunOp(R"pb(type: "conv2d"
                        inputs { slot: "Input" vars: "x" }
                        inputs { slot: "Filter" vars: "w" }
                        inputs { slot: "Bias" vars: "b" }
                        outputs { slot: "Output" vars: "y" }
                        attrs {
                          name: "paddings"
                          ints { values: [ 1, 1 ] }
                        }
                        attrs { name: "data_format" s: "NHWC" })pb",
                   {{"x", MakeTensor<float>({1, 0, 1, 2}, {})},
                    {"w", MakeTensor<float>({2, 2, 1, 1}, {1, 1, 1, 1})},
                    {"b", MakeTensor<float>({2}, {0.5, -3})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 3, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.5, -3, 0.5, -3, 0.5, -3,
                                                    0.5, -3, 0.5, -3, 0.5, -3));
}

// The kernel keeps its oneDNN set-up per shape: one convolution in both
// formats, in turn on one thread, must each get a set-up of its own.
TEST(Conv2dNhwcTest, FormatsOfOneShapeAlternate) {
  ConvConfig c{"alternate", {2, 16, 7, 9}, {16, 16, 3, 3},
               {1, 1},      {1, 1},        {1, 1},
               1,           true};
  const std::vector<float> x = RandomFloats(NumElements(c.input), 31);
  const std::vector<float> w = RandomFloats(NumElements(c.filter), 32);
  const std::vector<float> b = RandomFloats(c.filter[0], 33);
  Dims out_dims;
  const std::vector<float> nchw = ReferenceConv(c, x, w, b, out_dims);
  const std::vector<float> nhwc = ToNhwc(nchw, out_dims);
  ConvConfig c_nhwc = c;
  c_nhwc.data_format = "NHWC";
  for (int round = 0; round < 2; ++round) {
    for (const bool channels_last : {false, true}) {
      SCOPED_TRACE(channels_last ? "NHWC" : "NCHW");
      auto out = RunOp(
          ConvOp(channels_last ? c_nhwc : c),
          {{"x", channels_last
                     ? MakeTensor<float>(NhwcDims(c.input), ToNhwc(x, c.input))
                     : MakeTensor<float>(c.input, x)},
           {"w", MakeTensor<float>(c.filter, w)},
           {"b", MakeTensor<float>({c.filter[0]}, b)}},
          {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<float>& expected = channels_last ? nhwc : nchw;
      const std::vector<float> got = Values<float>((*out)[0]);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_NEAR(got[i], expected[i], 1e-4) << "at " << i;
      }
    }
  }
}

constexpr char kConvOp[] = R"pb(type: "conv2d"
                                inputs { slot: "Input" vars: "x" }
                                inputs { slot: "Filter" vars: "w" }
                                outputs { slot: "Output" vars: "y" })pb";

// Prepare infers what it can from a net declaring unknown dimensions; Run
// the rest.
TEST(Conv2dTest, InfersUnknownDimensions) {
  const std::string op = absl::StrCat(
      kConvOp, " attrs { name: \"paddings\" ints { values: [1, 1] } }");
  auto y = InferAtPrepare(
      op, {{"x", kFloat32, {-1, 2, -1, -1}}, {"w", kFloat32, {3, 2, 3, 3}}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 3, -1, -1));
  y = InferAtPrepare(op, {{"x", kFloat32, {}}, {"w", kFloat32, {}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, -1, -1, -1));
  y = InferAtPrepare(
      op, {{"x", kFloat32, {-1, 2, 7, -1}}, {"w", kFloat32, {-1, -1, 3, 3}}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, -1, 7, -1));
  // What is known is still checked.
  y = InferAtPrepare(
      op, {{"x", kFloat32, {-1, 2, -1, -1}}, {"w", kFloat32, {3, 4, -1, -1}}},
      "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("expected the filter's dimension 1 to be channels / "
                        "groups = 2 / 1 = 2"));

  auto out = RunOp(
      op,
      {{"x", MakeTensor<float>({2, 2, 5, 4}, std::vector<float>(80, 1.0f))},
       {"w", MakeTensor<float>({3, 2, 3, 3}, std::vector<float>(54, 1.0f))}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3, 5, 4));
  // The centre sees 2 channels x 3 x 3 ones, a corner 2 x 2 x 2.
  EXPECT_EQ(Values<float>((*out)[0])[1 * 4 + 1], 18.0f);
  EXPECT_EQ(Values<float>((*out)[0])[0], 8.0f);
}

TEST(Conv2dErrorTest, ChannelMismatch) {
  absl::Status status =
      PrepareOp(kConvOp, {{"x", MakeTensor<float>({1, 3, 5, 5}, {})},
                          {"w", MakeTensor<float>({2, 2, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("op 0 (conv2d): input \"Input\" (variable "
                              "\"x\") has shape [1, 3, 5, 5] but \"Filter\" "
                              "(variable \"w\") has shape [2, 2, 3, 3]"),
                    HasSubstr("channels / groups = 3 / 1 = 3")));
}

TEST(Conv2dErrorTest, GroupsMustDivideChannels) {
  absl::Status status =
      PrepareOp(absl::StrCat(kConvOp, " attrs { name: \"groups\" i: 2 }"),
                {{"x", MakeTensor<float>({1, 3, 5, 5}, {})},
                 {"w", MakeTensor<float>({4, 1, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): input \"Input\" (variable \"x\") has "
                        "shape [1, 3, 5, 5]: its 3 channels are not divisible "
                        "by groups = 2"));
  status = PrepareOp(absl::StrCat(kConvOp, " attrs { name: \"groups\" i: 2 }"),
                     {{"x", MakeTensor<float>({1, 4, 5, 5}, {})},
                      {"w", MakeTensor<float>({3, 2, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): input \"Filter\" (variable \"w\") has "
                        "shape [3, 2, 3, 3]: its 3 output channels are not "
                        "divisible by groups = 2"));
  status = PrepareOp(absl::StrCat(kConvOp, " attrs { name: \"groups\" i: 0 }"),
                     {{"x", MakeTensor<float>({1, 4, 5, 5}, {})},
                      {"w", MakeTensor<float>({3, 2, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): attribute \"groups\" must be "
                        "positive, got 0"));
}

TEST(Conv2dErrorTest, NonPositiveOutputSize) {
  absl::Status status =
      PrepareOp(kConvOp, {{"x", MakeTensor<float>({1, 1, 2, 5}, {})},
                          {"w", MakeTensor<float>({1, 1, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("op 0 (conv2d): input \"Input\" (variable "
                              "\"x\") has shape [1, 1, 2, 5]: too small for "
                              "\"Filter\" (variable \"w\", shape [1, 1, 3, "
                              "3])"),
                    HasSubstr("got [0, 3]")));
  // Dilation makes a 3x3 filter span 5x5.
  status =
      PrepareOp(absl::StrCat(kConvOp,
                             " attrs { name: \"dilations\" ints { values: [2, "
                             "2] } }"),
                {{"x", MakeTensor<float>({1, 1, 4, 4}, {})},
                 {"w", MakeTensor<float>({1, 1, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("op 0 (conv2d): input \"Input\" (variable "
                              "\"x\") has shape [1, 1, 4, 4]"),
                    HasSubstr("dilations [2, 2]")));
}

TEST(Conv2dErrorTest, BiasShape) {
  absl::Status status = PrepareOp(
      R"pb(type: "conv2d"
           inputs { slot: "Input" vars: "x" }
           inputs { slot: "Filter" vars: "w" }
           inputs { slot: "Bias" vars: "b" }
           outputs { slot: "Output" vars: "y" })pb",
      {{"x", MakeTensor<float>({1, 2, 5, 5}, {})},
       {"w", MakeTensor<float>({4, 2, 3, 3}, {})},
       {"b", MakeTensor<float>({3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): input \"Bias\" (variable \"b\") has "
                        "shape [3]: expected [4]"));
}

TEST(Conv2dErrorTest, RankDtypeAndAttributes) {
  absl::Status rank =
      PrepareOp(kConvOp, {{"x", MakeTensor<float>({3, 5, 5}, {})},
                          {"w", MakeTensor<float>({1, 3, 3, 3}, {})}});
  EXPECT_THAT(rank.message(),
              HasSubstr("op 0 (conv2d): input \"Input\" (variable \"x\") has "
                        "shape [3, 5, 5]: expected rank 4"));
  absl::Status dtype =
      PrepareOp(kConvOp, {{"x", MakeTensor<float>({1, 3, 5, 5}, {})},
                          {"w", MakeTensor<double>({1, 3, 3, 3}, {})}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (conv2d): inputs \"Input\" (variable \"x\", "
                        "float32) and \"Filter\" (variable \"w\", float64) "
                        "must have one dtype"));
  absl::Status no_kernel =
      PrepareOp(kConvOp, {{"x", MakeTensor<int32_t>({1, 3, 5, 5}, {})},
                          {"w", MakeTensor<int32_t>({1, 3, 3, 3}, {})}});
  EXPECT_THAT(no_kernel.message(),
              HasSubstr("op 0 (conv2d): no kernel for dtype int32"));
  absl::Status strides = PrepareOp(
      absl::StrCat(kConvOp,
                   " attrs { name: \"strides\" ints { values: [1, 1, 1] } }"),
      {{"x", MakeTensor<float>({1, 3, 5, 5}, {})},
       {"w", MakeTensor<float>({1, 3, 3, 3}, {})}});
  EXPECT_THAT(strides.message(),
              HasSubstr("op 0 (conv2d): attribute \"strides\" must hold 2 "
                        "values [h, w], got [1, 1, 1]"));
  absl::Status paddings = PrepareOp(
      absl::StrCat(kConvOp,
                   " attrs { name: \"paddings\" ints { values: [1, -1] } }"),
      {{"x", MakeTensor<float>({1, 3, 5, 5}, {})},
       {"w", MakeTensor<float>({1, 3, 3, 3}, {})}});
  EXPECT_THAT(paddings.message(),
              HasSubstr("op 0 (conv2d): attribute \"paddings\" must be "
                        "non-negative, got [1, -1]"));
}

TEST(Conv2dNhwcTest, InfersOutputInNhwc) {
  const std::string op =
      absl::StrCat(kConvOp,
                   " attrs { name: \"paddings\" ints { values: [1, 0] } }"
                   " attrs { name: \"strides\" ints { values: [1, 2] } }"
                   " attrs { name: \"data_format\" s: \"NHWC\" }");
  // [2, 7, 9, 4] (NHWC): height 7 + 2 - 2 = 7, width (9 - 3) / 2 + 1 = 4.
  auto y = InferAtPrepare(
      op, {{"x", kFloat32, {2, 7, 9, 4}}, {"w", kFloat32, {6, 4, 3, 3}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(2, 7, 4, 6));
  y = InferAtPrepare(
      op, {{"x", kFloat32, {-1, 7, -1, 4}}, {"w", kFloat32, {6, 4, 3, 3}}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 7, -1, 6));
  y = InferAtPrepare(
      op, {{"x", kFloat32, {-1, -1, -1, 4}}, {"w", kFloat32, {-1, 4, 3, 3}}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, -1, -1, -1));
  // Too small along the width, the axis 2 of NHWC.
  y = InferAtPrepare(
      op, {{"x", kFloat32, {1, 5, 2, 4}}, {"w", kFloat32, {6, 4, 3, 3}}}, "y");
  EXPECT_THAT(y.status().message(),
              AllOf(HasSubstr("op 0 (conv2d): input \"Input\" (variable "
                              "\"x\") has shape [1, 5, 2, 4] (data_format "
                              "\"NHWC\"): too small"),
                    HasSubstr("got [5, 0]")));
}

TEST(Conv2dErrorTest, NhwcChannelMismatch) {
  // Read as NCHW, [1, 2, 6, 3] has the filter's 2 channels; as NHWC, 3.
  absl::Status status = PrepareOp(
      absl::StrCat(kConvOp, " attrs { name: \"data_format\" s: \"NHWC\" }"),
      {{"x", MakeTensor<float>({1, 2, 6, 3}, {})},
       {"w", MakeTensor<float>({4, 2, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("op 0 (conv2d): input \"Input\" (variable "
                              "\"x\") has shape [1, 2, 6, 3] (data_format "
                              "\"NHWC\") but \"Filter\" (variable \"w\") "
                              "has shape [4, 2, 3, 3]"),
                    HasSubstr("channels / groups = 3 / 1 = 3")));
}

TEST(Conv2dErrorTest, InvalidDataFormat) {
  absl::Status status = PrepareOp(
      absl::StrCat(kConvOp, " attrs { name: \"data_format\" s: \"NCWH\" }"),
      {{"x", MakeTensor<float>({1, 2, 5, 5}, {})},
       {"w", MakeTensor<float>({4, 2, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): attribute \"data_format\" must be "
                        "one of NCHW, NHWC, NCHW8c, NCHW16c, got \"NCWH\""));
}

// Sizes beyond int64 are errors naming the inputs and attributes: the
// dilated filter, channels / groups, the padded input.
TEST(Conv2dTest, SizesBeyondInt64AreErrors) {
  auto y = InferAtPrepare(
      absl::StrCat(kConvOp,
                   " attrs { name: \"dilations\" ints { values: [4, 1] } }"),
      {{"x", kFloat32, {1, 1, 8, 8}},
       {"w", kFloat32, {1, 1, 4611686018427387904, 1}}},
      "y");
  EXPECT_THAT(
      y.status().message(),
      AllOf(HasSubstr("op 0 (conv2d): input \"Input\" (variable \"x\") has "
                      "shape [1, 1, 8, 8] and \"Filter\" (variable \"w\") "
                      "shape [1, 1, 4611686018427387904, 1]; with paddings "
                      "[0, 0, 0, 0], strides [1, 1] and dilations [4, 1]"),
            HasSubstr("along the height, dilation 4 spreads the filter's "
                      "4611686018427387904 cells over more than int64 "
                      "holds")));
  y = InferAtPrepare(absl::StrCat(kConvOp, " attrs { name: \"groups\" i: 4 }"),
                     {{"x", kFloat32, {1, 4, 8, 8}},
                      {"w", kFloat32, {0, 4611686018427387904, 1, 1}}},
                     "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("expected the filter's dimension 1 to be channels / "
                        "groups = 4 / 4 = 1"));
  y = InferAtPrepare(
      absl::StrCat(kConvOp,
                   " attrs { name: \"paddings\" ints { values: [1, 0] } }"),
      {{"x", kFloat32, {1, 1, 9223372036854775807, 1}},
       {"w", kFloat32, {1, 1, 1, 1}}},
      "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("along the height, a window of 1 cells moving by 1 "
                        "over 9223372036854775807 cells padded by 1 and 1 "
                        "makes sizes beyond int64"));
}

}  // namespace
}  // namespace scopeflow
