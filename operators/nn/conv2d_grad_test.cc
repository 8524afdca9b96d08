// conv2d's gradient: numeric checks of the float64 reference, the float32
// oneDNN gradients against it, and conv2d_grad's shapes and errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct ConvCase {
  std::string name;
  // [N, C, H, W], or [N, H, W, C] with data_format "NHWC", or
  // [N, C / B, H, W, B] with a blocked one (B its block)
  Dims input;
  Dims filter;  // [M, C / groups, kH, kW]
  std::vector<int32_t> strides = {1, 1};
  std::vector<int32_t> paddings = {0, 0};
  std::vector<int32_t> dilations = {1, 1};
  int groups = 1;
  bool bias = false;
  // Empty: the attribute is left out (NCHW).
  std::string data_format = "";
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

std::string IntsAttr(const std::string& name,
                     const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } }");
}

std::string Attrs(const ConvCase& c) {
  return absl::StrCat(IntsAttr("strides", c.strides), " ",
                      IntsAttr("paddings", c.paddings), " ",
                      IntsAttr("dilations", c.dilations),
                      " attrs { name: \"groups\" i: ", c.groups, " }",
                      c.data_format.empty()
                          ? ""
                          : absl::StrCat(" attrs { name: \"data_format\" s: \"",
                                         c.data_format, "\" }"));
}

std::string ConvOp(const ConvCase& c) {
  return absl::StrCat(
      "type: \"conv2d\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Output\" vars: \"y\" } ", Attrs(c));
}

// conv2d_grad on Input = x, Filter = w, Bias = b (if c.bias), Output@GRAD =
// dy, writing the gradients the `outputs` name ("Input", "Filter", "Bias")
// to dx, dw and db.
std::string ConvGradOp(const ConvCase& c,
                       const std::vector<std::string>& outputs) {
  std::string op = absl::StrCat(
      "type: \"conv2d_grad\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "inputs { slot: \"Output@GRAD\" vars: \"dy\" } ", Attrs(c));
  for (const std::string& slot : outputs) {
    const std::string var =
        slot == "Input" ? "dx" : (slot == "Filter" ? "dw" : "db");
    absl::StrAppend(&op, " outputs { slot: \"", slot, "@GRAD\" vars: \"", var,
                    "\" }");
  }
  return op;
}

template <typename T>
Tensor Random(const Dims& dims, uint32_t seed) {
  const std::vector<double> values = RandomValues(NumElements(dims), seed);
  return MakeTensor<T>(dims, std::vector<T>(values.begin(), values.end()));
}

template <typename T>
std::vector<Feed> ForwardFeeds(const ConvCase& c, uint32_t seed) {
  std::vector<Feed> feeds = {{"x", Random<T>(c.input, seed)},
                             {"w", Random<T>(c.filter, seed + 1)}};
  if (c.bias) feeds.push_back({"b", Random<T>({c.filter[0]}, seed + 2)});
  return feeds;
}

std::vector<ConvCase> Cases() {
  return {
      {"Plain3x3WithBias",
       {2, 2, 4, 4},
       {3, 2, 3, 3},
       {1, 1},
       {0, 0},
       {1, 1},
       1,
       true},
      {"Stride2Padding1", {1, 2, 5, 5}, {2, 2, 3, 3}, {2, 2}, {1, 1}},
      {"Dilation2",
       {1, 2, 6, 6},
       {2, 2, 2, 2},
       {1, 1},
       {1, 1},
       {2, 2},
       1,
       true},
      {"Groups2", {2, 4, 4, 4}, {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true},
      {"OneByOne", {2, 3, 3, 3}, {4, 3, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},
      // Non-square everything, four-sided padding, and a trailing row the
      // stride skips.
      {"NonSquare",
       {1, 2, 5, 7},
       {2, 1, 2, 3},
       {2, 1},
       {1, 0, 2, 1},
       {1, 2},
       2,
       true},
      // Padding wider than the dilated filter: some windows see only
      // padding, so part of Output depends on nothing but the bias.
      {"WindowsOfOnlyPadding",
       {1, 1, 2, 2},
       {2, 1, 1, 1},
       {2, 2},
       {2, 2},
       {1, 1},
       1,
       true},
  };
}

// `c` with its Input channels last.
ConvCase Nhwc(ConvCase c) {
  c.name += "Nhwc";
  c.input = {c.input[0], c.input[2], c.input[3], c.input[1]};
  c.data_format = "NHWC";
  return c;
}

// `c` with data_format `format`, "NCHW8c" or "NCHW16c": Output, and Input
// unless `nchw_input`, in blocks of 8 or 16 channels.
ConvCase Blocked(ConvCase c, const std::string& format = "NCHW8c",
                 bool nchw_input = false) {
  const int64_t block = format == "NCHW16c" ? 16 : 8;
  c.name += absl::StrCat(format == "NCHW16c" ? "Nchw16c" : "Nchw8c",
                         nchw_input ? "NchwInput" : "");
  if (!nchw_input) {
    c.input = {c.input[0], c.input[1] / block, c.input[2], c.input[3], block};
  }
  c.data_format = format;
  return c;
}

std::vector<ConvCase> NhwcCases() {
  std::vector<ConvCase> cases;
  for (const ConvCase& c : Cases()) cases.push_back(Nhwc(c));
  return cases;
}

class Conv2dGradTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dGradTest, Float64MatchesCentralDifferences) {
  const ConvCase& c = GetParam();
  absl::Status status = CheckGradient(ConvOp(c), ForwardFeeds<double>(c, 7));
  EXPECT_TRUE(status.ok()) << status;
}

// oneDNN's float32 backward primitives against the float64 reference, on
// the same (float32-representable) values.
TEST_P(Conv2dGradTest, OneDnnFloat32MatchesFloat64Reference) {
  const ConvCase& c = GetParam();
  auto y = RunOp(ConvOp(c), ForwardFeeds<double>(c, 11), {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  const Dims out_dims = (*y)[0].dims();
  std::vector<std::string> outputs = {"Input", "Filter"};
  std::vector<std::string> fetches = {"dx", "dw"};
  if (c.bias) {
    outputs.push_back("Bias");
    fetches.push_back("db");
  }
  std::vector<Feed> f32 = ForwardFeeds<float>(c, 11);
  f32.push_back({"dy", Random<float>(out_dims, 12)});
  std::vector<Feed> f64 = ForwardFeeds<double>(c, 11);
  f64.push_back({"dy", Random<double>(out_dims, 12)});
  // The float32 values rounded, so both dtypes see the same numbers.
  for (size_t i = 0; i < f64.size(); ++i) {
    for (int64_t j = 0; j < f64[i].tensor.numel(); ++j) {
      f64[i].tensor.data<double>()[j] = f32[i].tensor.data<float>()[j];
    }
  }
  auto single = RunOp(ConvGradOp(c, outputs), f32, fetches);
  ASSERT_TRUE(single.ok()) << single.status();
  auto reference = RunOp(ConvGradOp(c, outputs), f64, fetches);
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (size_t k = 0; k < fetches.size(); ++k) {
    SCOPED_TRACE(fetches[k]);
    const Tensor& got = (*single)[k];
    const Tensor& want = (*reference)[k];
    ASSERT_EQ(got.dims(), want.dims());
    double largest = 0;
    for (int64_t j = 0; j < want.numel(); ++j) {
      largest = std::max(largest, std::abs(want.data<double>()[j]));
    }
    for (int64_t j = 0; j < want.numel(); ++j) {
      ASSERT_NEAR(got.data<float>()[j], want.data<double>()[j],
                  1e-4 * std::max(largest, 1.0))
          << "element " << j;
    }
  }
}

TEST_P(Conv2dGradTest, Float64ForwardMatchesFloat32) {
  const ConvCase& c = GetParam();
  auto single = RunOp(ConvOp(c), ForwardFeeds<float>(c, 3), {"y"});
  auto reference = RunOp(ConvOp(c), ForwardFeeds<double>(c, 3), {"y"});
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_EQ((*single)[0].dims(), (*reference)[0].dims());
  for (int64_t j = 0; j < (*single)[0].numel(); ++j) {
    ASSERT_NEAR((*single)[0].data<float>()[j],
                (*reference)[0].data<double>()[j], 1e-5)
        << "element " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Conv2dGradTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return info.param.name;
                         });

// The same checks with data_format "NHWC": the numeric check covers the
// float64 reference through its transposes and Bias@GRAD over channels
// last; oneDNN's NHWC gradients are then checked against that reference.
INSTANTIATE_TEST_SUITE_P(NhwcCases, Conv2dGradTest,
                         ::testing::ValuesIn(NhwcCases()),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return info.param.name;
                         });

// The blocked layouts, Input blocked or NCHW (a first convolution): the
// numeric check covers the float64 reference through its copies to and
// from NCHW and Bias@GRAD's sums over blocks; oneDNN's blocked gradients
// are then checked against that reference. Channels fill blocks of 16, so
// that each case runs in both.
std::vector<ConvCase> BlockedCases() {
  const ConvCase padded = {"PaddedWithBias",
                           {2, 16, 4, 5},
                           {16, 16, 3, 3},
                           {1, 1},
                           {1, 1},
                           {1, 1},
                           1,
                           true};
  const ConvCase groups = {"Groups2Stride2",
                           {1, 32, 5, 5},
                           {32, 16, 3, 3},
                           {2, 2},
                           {1, 1},
                           {1, 1},
                           2,
                           true};
  const ConvCase depthwise = {"Depthwise", {1, 16, 5, 4}, {16, 1, 3, 3},
                              {1, 1},      {1, 1},        {1, 1},
                              16,          true};
  const ConvCase first = {
      "First", {2, 3, 5, 5}, {16, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true};
  std::vector<ConvCase> cases;
  for (const char* format : {"NCHW8c", "NCHW16c"}) {
    for (const ConvCase& c : {padded, groups, depthwise}) {
      cases.push_back(Blocked(c, format));
    }
    cases.push_back(Blocked(first, format, /*nchw_input=*/true));
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(BlockedCases, Conv2dGradTest,
                         ::testing::ValuesIn(BlockedCases()),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return info.param.name;
                         });

// NHWC gradients are the NCHW ones with Input@GRAD transposed, and the same
// Filter@GRAD and Bias@GRAD, in both dtypes; on shapes large enough for
// oneDNN's channels-last kernels.
template <typename T>
void ExpectNhwcGradsMatchNchw(const ConvCase& c, double tolerance) {
  auto y = RunOp(ConvOp(c), ForwardFeeds<T>(c, 41), {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<Feed> nchw = ForwardFeeds<T>(c, 41);
  nchw.push_back({"dy", Random<T>((*y)[0].dims(), 42)});
  std::vector<Feed> nhwc;
  for (const Feed& feed : nchw) {
    const bool data = feed.name == "x" || feed.name == "dy";
    nhwc.push_back({feed.name, data ? Permute4d<T>(feed.tensor, kNchwToNhwc)
                                    : feed.tensor});
  }
  const std::vector<std::string> fetches = {"dx", "dw", "db"};
  const std::vector<std::string> outputs = {"Input", "Filter", "Bias"};
  auto want = RunOp(ConvGradOp(c, outputs), nchw, fetches);
  auto got = RunOp(ConvGradOp(Nhwc(c), outputs), nhwc, fetches);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<Tensor> expected = {Permute4d<T>((*want)[0], kNchwToNhwc),
                                        (*want)[1], (*want)[2]};
  for (size_t k = 0; k < fetches.size(); ++k) {
    SCOPED_TRACE(fetches[k]);
    ASSERT_EQ((*got)[k].dims(), expected[k].dims());
    for (int64_t j = 0; j < expected[k].numel(); ++j) {
      ASSERT_NEAR((*got)[k].data<T>()[j], expected[k].data<T>()[j], tolerance)
          << "element " << j;
    }
  }
}

TEST(Conv2dGradNhwcTest, MatchesNchwTransposed) {
  const ConvCase cases[] = {
      {"Blocked",
       {2, 16, 9, 11},
       {32, 8, 3, 3},
       {2, 1},
       {1, 2},
       {1, 2},
       2,
       true},
      {"Wide", {2, 32, 8, 8}, {32, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {"Depthwise",
       {1, 16, 7, 7},
       {16, 1, 3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       16,
       true},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.name);
    {
      SCOPED_TRACE("float32");
      ExpectNhwcGradsMatchNchw<float>(c, 1e-3);
    }
    {
      SCOPED_TRACE("float64");
      ExpectNhwcGradsMatchNchw<double>(c, 1e-10);
    }
  }
}

// oneDNN's float32 gradients of `c` against the float64 reference on the
// same (float32-representable) values, each to 1e-4 of its largest
// magnitude: for shapes larger than the numeric checks afford.
void ExpectOneDnnMatchesReference(const ConvCase& c, uint32_t seed) {
  auto y = RunOp(ConvOp(c), ForwardFeeds<double>(c, seed), {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<Feed> f32 = ForwardFeeds<float>(c, seed);
  f32.push_back({"dy", Random<float>((*y)[0].dims(), seed + 1)});
  std::vector<Feed> f64;
  for (const Feed& feed : f32) {
    std::vector<double> values(feed.tensor.data<float>(),
                               feed.tensor.data<float>() + feed.tensor.numel());
    f64.push_back({feed.name, MakeTensor<double>(feed.tensor.dims(), values)});
  }
  std::vector<std::string> outputs = {"Input", "Filter"};
  std::vector<std::string> fetches = {"dx", "dw"};
  if (c.bias) {
    outputs.push_back("Bias");
    fetches.push_back("db");
  }
  auto single = RunOp(ConvGradOp(c, outputs), f32, fetches);
  auto reference = RunOp(ConvGradOp(c, outputs), f64, fetches);
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (size_t k = 0; k < fetches.size(); ++k) {
    const Tensor& got = (*single)[k];
    const Tensor& want = (*reference)[k];
    ASSERT_EQ(got.dims(), want.dims()) << fetches[k];
    double largest = 0;
    for (int64_t j = 0; j < want.numel(); ++j) {
      largest = std::max(largest, std::abs(want.data<double>()[j]));
    }
    for (int64_t j = 0; j < want.numel(); ++j) {
      ASSERT_NEAR(got.data<float>()[j], want.data<double>()[j], 1e-4 * largest)
          << fetches[k] << " element " << j;
    }
  }
}

// Larger shapes than the numeric checks afford, where oneDNN picks blocked
// layouts and reorders around its primitives.
TEST(Conv2dGradLargeTest, OneDnnMatchesReferenceOnBlockedShapes) {
  ExpectOneDnnMatchesReference(
      {"Large", {2, 16, 9, 11}, {32, 8, 3, 3}, {2, 1}, {1, 2}, {1, 2}, 2, true},
      5);
}

// Shapes for which Winograd's algorithm pays (WinogradPays, conv_onednn.h):
// on AVX-512 CPUs oneDNN's Winograd backward-data and backward-weights
// kernels compute them, reordered to and from each layout; elsewhere the
// direct ones. An odd-sized unpadded image leaves partial tiles and an
// Output plane that is not a multiple of BiasGrad's lanes. 32 -> 32
// channels take Winograd's in NCHW, NCHW8c and NCHW16c only (direct on
// NHWC); in NCHW16c, Winograd's own layout, without reorders.
TEST(Conv2dGradWinogradTest, OneDnnMatchesReference) {
  const ConvCase padded = {
      "Padded", {2, 32, 10, 10}, {64, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1,
      true};
  const ConvCase unpadded = {
      "UnpaddedOdd", {2, 32, 11, 13}, {64, 32, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1,
      true};
  const ConvCase narrow = {"ThirtyTwoToThirtyTwo",
                           {2, 32, 11, 9},
                           {32, 32, 3, 3},
                           {1, 1},
                           {1, 1},
                           {1, 1},
                           1,
                           true};
  for (const ConvCase& c :
       {padded, unpadded, Nhwc(padded), Nhwc(unpadded), Blocked(padded),
        Blocked(unpadded), Blocked(padded, "NCHW16c"),
        Blocked(unpadded, "NCHW16c"), narrow, Nhwc(narrow), Blocked(narrow),
        Blocked(narrow, "NCHW16c")}) {
    SCOPED_TRACE(c.name);
    ExpectOneDnnMatchesReference(c, 21);
  }
}

// One input channel and filter of ones: Filter@GRAD is a window sum of X,
// Input@GRAD counts the windows each cell is in, Bias@GRAD sums Out@GRAD.
TEST(Conv2dGradValueTest, HandComputed) {
  const ConvCase c = {
      "Hand", {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 1}, {0, 0}, {1, 1}, 1, true};
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
      {"w", MakeTensor<float>({1, 1, 2, 2}, {1, 1, 1, 1})},
      {"b", MakeTensor<float>({1}, {0.5})},
      {"dy", MakeTensor<float>({1, 1, 2, 2}, {1, 1, 1, 1})}};
  auto out = RunOp(ConvGradOp(c, {"Input", "Filter", "Bias"}), feeds,
                   {"dx", "dw", "db"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 1, 2, 4, 2, 1, 2, 1));
  // Each filter element meets the 2x2 block of X at its offset.
  EXPECT_THAT(
      Values<float>((*out)[1]),
      ElementsAre(1 + 2 + 4 + 5, 2 + 3 + 5 + 6, 4 + 5 + 7 + 8, 5 + 6 + 8 + 9));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(4));
}

TEST(Conv2dGradValueTest, OnlyTheRequestedGradients) {
  const ConvCase c = Cases()[3];  // Groups2, with bias
  auto y = RunOp(ConvOp(c), ForwardFeeds<float>(c, 1), {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<Feed> feeds = ForwardFeeds<float>(c, 1);
  feeds.push_back({"dy", Random<float>((*y)[0].dims(), 2)});
  auto all = RunOp(ConvGradOp(c, {"Input", "Filter", "Bias"}), feeds,
                   {"dx", "dw", "db"});
  auto filter_only = RunOp(ConvGradOp(c, {"Filter"}), feeds, {"dw"});
  auto input_only = RunOp(ConvGradOp(c, {"Input"}), feeds, {"dx"});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_TRUE(filter_only.ok()) << filter_only.status();
  ASSERT_TRUE(input_only.ok()) << input_only.status();
  EXPECT_EQ(Values<float>((*filter_only)[0]), Values<float>((*all)[1]));
  EXPECT_EQ(Values<float>((*input_only)[0]), Values<float>((*all)[0]));
}

// Bias@GRAD of an Output@GRAD large enough to be summed over threads (in
// parts, where the machine has several), against the sums per channel in
// double, in each layout.
TEST(Conv2dGradValueTest, BiasGradOfALargeOutputSumsEachChannel) {
  const ConvCase nchw = {
      "Large", {4, 16, 32, 32}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1,
      true};
  for (const ConvCase& c : {nchw, Nhwc(nchw), Blocked(nchw, "NCHW16c")}) {
    SCOPED_TRACE(c.data_format);
    auto y = RunOp(ConvOp(c), ForwardFeeds<float>(c, 3), {"y"});
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor dy = Random<float>((*y)[0].dims(), 4);
    std::vector<Feed> feeds = ForwardFeeds<float>(c, 3);
    feeds.push_back({"dy", dy});
    auto db = RunOp(ConvGradOp(c, {"Bias"}), feeds, {"db"});
    ASSERT_TRUE(db.ok()) << db.status();
    // Output@GRAD [4, 32, 32, 32] in NCHW, [4, 32, 32, 32] channels last,
    // [4, 2, 32, 32, 16] in blocks.
    constexpr int64_t kChannels = 32, kPlane = 32 * 32;
    std::vector<double> expected(kChannels, 0.0);
    for (int64_t i = 0; i < dy.numel(); ++i) {
      const int64_t channel =
          c.data_format == "NHWC" ? i % kChannels
          : c.data_format == "NCHW16c"
              ? i / (kPlane * 16) % (kChannels / 16) * 16 + i % 16
              : i / kPlane % kChannels;
      expected[channel] += dy.data<float>()[i];
    }
    const std::vector<float> got = Values<float>((*db)[0]);
    ASSERT_EQ(got.size(), expected.size());
    for (int64_t m = 0; m < kChannels; ++m) {
      EXPECT_NEAR(got[m], expected[m], 1e-4) << "channel " << m;
    }
  }
}

TEST(Conv2dGradValueTest, EmptyBatchGivesZeroFilterAndBiasGradients) {
  const ConvCase c = {
      "Empty", {0, 2, 4, 4}, {3, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true};
  for (bool f64 : {false, true}) {
    std::vector<Feed> feeds =
        f64 ? ForwardFeeds<double>(c, 1) : ForwardFeeds<float>(c, 1);
    feeds.push_back({"dy", f64 ? MakeTensor<double>({0, 3, 2, 2}, {})
                               : MakeTensor<float>({0, 3, 2, 2}, {})});
    auto out = RunOp(ConvGradOp(c, {"Input", "Filter", "Bias"}), feeds,
                     {"dx", "dw", "db"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 2, 4, 4));
    EXPECT_THAT((*out)[1].dims(), ElementsAre(3, 2, 3, 3));
    if (f64) {
      EXPECT_THAT(Values<double>((*out)[1]), Each(0.0));
      EXPECT_THAT(Values<double>((*out)[2]), ElementsAre(0, 0, 0));
    } else {
      EXPECT_THAT(Values<float>((*out)[1]), Each(0.0f));
      EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(0, 0, 0));
    }
  }
}

// fuse_relu writes relu(convolution): the unfused result with its negative
// values at 0, in both formats and dtypes (oneDNN's post-op for float32).
template <typename T>
void ExpectFusedIsReluOfUnfused(const ConvCase& c) {
  const std::vector<Feed> feeds = ForwardFeeds<T>(c, 11);
  absl::StatusOr<std::vector<Tensor>> plain = RunOp(ConvOp(c), feeds, {"y"});
  absl::StatusOr<std::vector<Tensor>> fused =
      RunOp(ConvOp(c) + " attrs { name: \"fuse_relu\" b: true }", feeds, {"y"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(fused.ok()) << fused.status();
  const std::vector<T> expected = Values<T>((*plain)[0]);
  const std::vector<T> actual = Values<T>((*fused)[0]);
  ASSERT_EQ(actual.size(), expected.size());
  int negatives = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    negatives += expected[i] < 0;
    EXPECT_NEAR(actual[i], std::max<T>(expected[i], 0), 1e-5) << i;
  }
  EXPECT_GT(negatives, 0) << "the case tests nothing of the relu";
}

TEST(Conv2dFuseReluTest, IsReluOfTheConvolution) {
  for (const ConvCase& c : {Cases()[0], Cases()[3], Nhwc(Cases()[1])}) {
    SCOPED_TRACE(c.name);
    ExpectFusedIsReluOfUnfused<float>(c);
    ExpectFusedIsReluOfUnfused<double>(c);
  }
}

// The gradient runs relu_grad on Output, then conv2d_grad.
TEST(Conv2dFuseReluTest, GradientMatchesCentralDifferences) {
  for (const ConvCase& c : {Cases()[0], Nhwc(Cases()[3])}) {
    SCOPED_TRACE(c.name);
    absl::Status status =
        CheckGradient(ConvOp(c) + " attrs { name: \"fuse_relu\" b: true }",
                      ForwardFeeds<double>(c, 7));
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(Conv2dGradErrorTest, OutputGradShapeNamesVariable) {
  const ConvCase c = Cases()[1];  // [1, 2, 5, 5] -> [1, 2, 3, 3]
  std::vector<Feed> feeds = ForwardFeeds<float>(c, 1);
  feeds.push_back({"dy", MakeTensor<float>({1, 2, 4, 4}, {})});
  absl::Status status = PrepareOp(ConvGradOp(c, {"Input"}), feeds);
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d_grad): input \"Output@GRAD\" (variable "
                        "\"dy\") is float32 [1, 2, 4, 4]: expected float32 "
                        "[1, 2, 3, 3], as the forward op's output \"Output\""));
}

TEST(Conv2dGradErrorTest, NhwcOutputGradInNchwNamesExpectedShape) {
  const ConvCase c = Nhwc(Cases()[1]);  // [1, 5, 5, 2] -> [1, 3, 3, 2]
  std::vector<Feed> feeds = ForwardFeeds<float>(c, 1);
  feeds.push_back({"dy", MakeTensor<float>({1, 2, 3, 3}, {})});
  absl::Status status = PrepareOp(ConvGradOp(c, {"Input"}), feeds);
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d_grad): input \"Output@GRAD\" (variable "
                        "\"dy\") is float32 [1, 2, 3, 3]: expected float32 "
                        "[1, 3, 3, 2], as the forward op's output \"Output\""));
}

TEST(Conv2dGradErrorTest, InvalidDataFormat) {
  ConvCase c = Cases()[1];
  c.data_format = "nhwc";
  std::vector<Feed> feeds = ForwardFeeds<float>(c, 1);
  feeds.push_back({"dy", MakeTensor<float>({1, 2, 3, 3}, {})});
  absl::Status status = PrepareOp(ConvGradOp(c, {"Input"}), feeds);
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d_grad): attribute \"data_format\" must "
                        "be one of NCHW, NHWC, NCHW8c, NCHW16c, got \"nhwc\""));
}

TEST(Conv2dGradErrorTest, BiasGradNeedsBias) {
  const ConvCase c = Cases()[1];
  std::vector<Feed> feeds = ForwardFeeds<float>(c, 1);
  feeds.push_back({"dy", MakeTensor<float>({1, 2, 3, 3}, {})});
  absl::Status status = PrepareOp(ConvGradOp(c, {"Bias"}), feeds);
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d_grad): input \"Bias\" is not bound: "
                        "output \"Bias@GRAD\" takes the shape of \"Bias\""));
}

}  // namespace
}  // namespace scopeflow
