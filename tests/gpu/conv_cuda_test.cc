// CUDA kernels of conv2d and conv2d_grad against their CPU kernels: strides,
// padding (asymmetric too), dilation, groups, NCHW, NHWC, NCHW8c and
// NCHW16c (with a blocked or an NCHW Input), bias and fuse_relu, empty and
// large shapes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/cuda_test_util.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

struct ConvCase {
  std::string name;
  Dims input;   // [N, C, H, W]: the other layouts' runs reorder it
  Dims filter;  // [M, C / groups, kH, kW]
  std::vector<int32_t> strides = {1, 1};
  std::vector<int32_t> paddings = {0, 0};
  std::vector<int32_t> dilations = {1, 1};
  int groups = 1;
};

std::string IntsAttr(const std::string& name,
                     const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

// How a run lays out its images: the op's data_format, and for a blocked
// one ("NCHW8c", "NCHW16c") whether Input is NCHW (rank 4, a first
// convolution) rather than blocked.
struct Layout {
  std::string format;
  bool nchw_input = false;

  std::string Name() const {
    return absl::StrCat(format, nchw_input ? " (NCHW Input)" : "");
  }
};

const std::vector<Layout>& PlainLayouts() {
  static const auto* layouts = new std::vector<Layout>{{"NCHW"}, {"NHWC"}};
  return *layouts;
}

std::string Attrs(const ConvCase& c, const Layout& layout) {
  return absl::StrCat(
      IntsAttr("strides", c.strides), IntsAttr("paddings", c.paddings),
      IntsAttr("dilations", c.dilations),
      "attrs { name: \"groups\" i: ", c.groups, " } ",
      "attrs { name: \"data_format\" s: \"", layout.format, "\" }");
}

std::string ConvOp(const ConvCase& c, const Layout& layout, bool bias,
                   bool relu) {
  return absl::StrCat(
      "type: \"conv2d\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Output\" vars: \"y\" } ", Attrs(c, layout),
      " attrs { name: \"fuse_relu\" b: ", relu ? "true" : "false", " }");
}

// conv2d_grad writing the gradients of the inputs in `outputs` ("Input",
// "Filter", "Bias") to dx, dw and db.
std::string ConvGradOp(const ConvCase& c, const Layout& layout, bool bias,
                       const std::vector<std::string>& outputs) {
  std::string op = absl::StrCat(
      "type: \"conv2d_grad\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "inputs { slot: \"Output@GRAD\" vars: \"dy\" } ", Attrs(c, layout));
  for (const std::string& slot : outputs) {
    const std::string var =
        slot == "Input" ? "dx" : (slot == "Filter" ? "dw" : "db");
    absl::StrAppend(&op, " outputs { slot: \"", slot, "@GRAD\" vars: \"", var,
                    "\" }");
  }
  return op;
}

// Channels per block of data_format `format`: 8 or 16 where blocked, else
// 0.
int64_t BlockOf(const std::string& format) {
  if (format == "NCHW8c") return 8;
  if (format == "NCHW16c") return 16;
  return 0;
}

// [N, C, H, W] as data_format `format` holds it.
Dims InFormat(const Dims& nchw, const std::string& format) {
  if (format == "NHWC") return {nchw[0], nchw[2], nchw[3], nchw[1]};
  const int64_t block = BlockOf(format);
  if (block > 0) {
    return {nchw[0], nchw[1] / block, nchw[2], nchw[3], block};
  }
  return nchw;
}

// Output in [N, M, H, W] order.
Dims OutputNchw(const ConvCase& c) {
  const bool four = c.paddings.size() == 4;
  const int64_t pads[2] = {
      c.paddings[0] + (four ? c.paddings[1] : c.paddings[0]),
      (four ? c.paddings[2] : c.paddings[1]) +
          (four ? c.paddings[3] : c.paddings[1])};
  Dims out = {c.input[0], c.filter[0], 0, 0};
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t extent = c.dilations[axis] * (c.filter[2 + axis] - 1) + 1;
    out[2 + axis] =
        (c.input[2 + axis] + pads[axis] - extent) / c.strides[axis] + 1;
  }
  return out;
}

// Convolution outputs and gradients are sums of `terms` products of values
// in [-1, 1], of magnitude about sqrt(terms) / 3. cuDNN's algorithms
// (implicit GEMM, FFT, Winograd, all without TF32) round otherwise than the
// CPU's direct sums: FFT and Winograd by up to about 1e-5 of that
// magnitude in float32. So the tolerance is 1e-4 relative and 1e-4 *
// sqrt(terms) absolute in float32 (1e-10 in float64); a wrong index or a
// lost term is off by orders of magnitude more.
double Tolerance(DataType dtype, int64_t terms) {
  const double unit = dtype == kFloat32 ? 1e-4 : 1e-10;
  return unit * std::sqrt(static_cast<double>(std::max<int64_t>(terms, 1)));
}

// Terms of an output, an input gradient and a filter gradient.
int64_t ForwardTerms(const ConvCase& c) {
  return c.filter[1] * c.filter[2] * c.filter[3];
}
int64_t InputGradTerms(const ConvCase& c) {
  return c.filter[0] / c.groups * c.filter[2] * c.filter[3];
}
int64_t FilterGradTerms(const ConvCase& c) {
  const Dims out = OutputNchw(c);
  return out[0] * out[2] * out[3];
}

const std::vector<ConvCase>& Cases() {
  static const auto* cases = new std::vector<ConvCase>{
      {"basic", {2, 3, 7, 7}, {4, 3, 3, 3}, {1, 1}, {1, 1}},
      {"strided", {2, 3, 9, 8}, {5, 3, 3, 3}, {2, 2}, {1, 1}},
      {"dilated", {1, 2, 10, 9}, {3, 2, 3, 2}, {1, 1}, {2, 1}, {2, 3}},
      {"asymmetric_padding", {2, 3, 7, 8}, {4, 3, 3, 3}, {1, 1}, {0, 1, 2, 1}},
      {"asymmetric_strided", {1, 2, 8, 8}, {2, 2, 4, 4}, {2, 2}, {1, 2, 2, 1}},
      {"groups", {2, 4, 6, 6}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2},
      {"depthwise", {2, 8, 9, 9}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 8},
      {"pointwise", {3, 16, 5, 5}, {8, 16, 1, 1}},
      {"filter_past_input", {1, 2, 3, 4}, {3, 2, 5, 5}, {1, 1}, {3, 3}},
      {"wide", {2, 64, 14, 14}, {32, 64, 3, 3}, {1, 1}, {1, 1}},
      {"odd", {3, 5, 17, 13}, {7, 5, 2, 3}, {1, 2}, {0, 1, 1, 0}},
      {"no_channels", {2, 0, 5, 5}, {3, 0, 3, 3}, {1, 1}, {1, 1}},
      {"only_padding", {1, 2, 0, 3}, {3, 2, 1, 1}, {1, 1}, {1, 1}},
      {"no_samples", {0, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}},
  };
  return *cases;
}

std::vector<Feed> ConvFeeds(DataType dtype, const ConvCase& c,
                            const Layout& layout, bool bias, bool grad) {
  const Dims input =
      layout.nchw_input ? c.input : InFormat(c.input, layout.format);
  std::vector<Feed> feeds = {{"x", RandomTensor(dtype, input, 1)},
                             {"w", RandomTensor(dtype, c.filter, 2)}};
  if (bias) feeds.push_back({"b", RandomTensor(dtype, {c.filter[0]}, 3)});
  if (grad) {
    feeds.push_back(
        {"dy", RandomTensor(dtype, InFormat(OutputNchw(c), layout.format), 4)});
  }
  return feeds;
}

void ExpectForwardMatches(const ConvCase& c,
                          const std::vector<Layout>& layouts) {
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const Layout& layout : layouts) {
      // No bias or relu, both, and each alone.
      for (int variant = 0; variant < 4; ++variant) {
        const bool bias = variant % 2 == 1, relu = variant >= 2;
        SCOPED_TRACE(absl::StrCat(c.name, " ", layout.Name(),
                                  dtype == kFloat32 ? " float32" : " float64",
                                  bias ? " bias" : "", relu ? " relu" : ""));
        const double tol = Tolerance(dtype, ForwardTerms(c) + 1);
        EXPECT_TRUE(MatchesOnCuda(ConvOp(c, layout, bias, relu),
                                  ConvFeeds(dtype, c, layout, bias, false),
                                  {"y"}, tol, tol));
      }
    }
  }
}

void ExpectGradMatches(const ConvCase& c, const std::vector<Layout>& layouts) {
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const Layout& layout : layouts) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", layout.Name(),
                                dtype == kFloat32 ? " float32" : " float64"));
      const std::vector<Feed> feeds = ConvFeeds(dtype, c, layout, true, true);
      const double dx_tol = Tolerance(dtype, InputGradTerms(c));
      const double dw_tol = Tolerance(dtype, FilterGradTerms(c));
      const double tol = std::max(dx_tol, dw_tol);
      EXPECT_TRUE(MatchesOnCuda(
          ConvGradOp(c, layout, true, {"Input", "Filter", "Bias"}), feeds,
          {"dx", "dw", "db"}, tol, tol));
      // Each gradient alone, and the two without the bias.
      EXPECT_TRUE(MatchesOnCuda(ConvGradOp(c, layout, true, {"Input"}), feeds,
                                {"dx"}, dx_tol, dx_tol));
      EXPECT_TRUE(MatchesOnCuda(ConvGradOp(c, layout, true, {"Filter"}), feeds,
                                {"dw"}, dw_tol, dw_tol));
      EXPECT_TRUE(MatchesOnCuda(ConvGradOp(c, layout, true, {"Bias"}), feeds,
                                {"db"}, dw_tol, dw_tol));
      const std::vector<Feed> no_bias =
          ConvFeeds(dtype, c, layout, false, true);
      EXPECT_TRUE(
          MatchesOnCuda(ConvGradOp(c, layout, false, {"Input", "Filter"}),
                        no_bias, {"dx", "dw"}, tol, tol));
    }
  }
}

TEST(ConvCudaTest, MatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const ConvCase& c : Cases()) ExpectForwardMatches(c, PlainLayouts());
}

TEST(ConvCudaTest, GradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const ConvCase& c : Cases()) ExpectGradMatches(c, PlainLayouts());
}

// One run of the forward op with bias and relu and one of the gradient op
// per dtype and layout, as the CPU's float64 reference takes a while.
void ExpectLargeMatches(const ConvCase& c, const std::vector<Layout>& layouts) {
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const Layout& layout : layouts) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", layout.Name(),
                                dtype == kFloat32 ? " float32" : " float64"));
      const double y_tol = Tolerance(dtype, ForwardTerms(c) + 1);
      EXPECT_TRUE(MatchesOnCuda(ConvOp(c, layout, true, true),
                                ConvFeeds(dtype, c, layout, true, false), {"y"},
                                y_tol, y_tol));
      const double tol = Tolerance(dtype, FilterGradTerms(c));
      EXPECT_TRUE(MatchesOnCuda(
          ConvGradOp(c, layout, true, {"Input", "Filter", "Bias"}),
          ConvFeeds(dtype, c, layout, true, true), {"dx", "dw", "db"}, tol,
          tol));
    }
  }
}

// Past 65535 blocks of 256 threads: the bias and relu pass, the layout
// copies and the bias gradient's sums loop over more than one grid. With
// asymmetric padding, the input is padded in a copy as large.
TEST(ConvCudaTest, LargeMatchesCpu) {
  SF_REQUIRE_CUDA();
  const ConvCase cases[] = {
      {"large", {1, 1, 4200, 4100}, {1, 1, 1, 1}},
      {"large_padded", {1, 1, 4200, 4100}, {2, 1, 2, 2}, {1, 1}, {0, 1, 1, 0}},
  };
  for (const ConvCase& c : cases) {
    ExpectLargeMatches(c, PlainLayouts());
  }
}

// data_format "NCHW8c" and "NCHW16c", of B = 8 and 16 channels a block:
// Output [N, M / B, OH, OW, B]; Input blocked where its channels fill
// blocks, and NCHW (rank 4) always. cuDNN computes in NCHW, so every
// blocked tensor goes through a reordering copy. Each case runs in each
// format whose block divides its output channels (BlockedLayouts).
const std::vector<ConvCase>& BlockedCases() {
  static const auto* cases = new std::vector<ConvCase>{
      // One block of 8: NCHW8c only.
      {"blocked_eight", {2, 8, 7, 7}, {8, 8, 3, 3}, {1, 1}, {1, 1}},
      {"blocked", {2, 16, 7, 7}, {16, 16, 3, 3}, {1, 1}, {1, 1}},
      {"blocked_strided", {3, 16, 9, 8}, {16, 16, 3, 3}, {2, 2}, {1, 1}},
      // The copy that makes the padding symmetric reorders too.
      {"blocked_asymmetric_padding",
       {1, 16, 7, 8},
       {16, 16, 3, 3},
       {1, 1},
       {0, 1, 2, 1}},
      {"blocked_dilated",
       {1, 16, 10, 9},
       {16, 16, 3, 2},
       {1, 1},
       {2, 1},
       {2, 3}},
      {"blocked_groups",
       {3, 16, 6, 6},
       {16, 8, 3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       2},
      {"blocked_groups_strided",
       {1, 32, 9, 9},
       {16, 16, 3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       2},
      // Groups that fill blocks of 16.
      {"blocked_groups_filling",
       {2, 64, 6, 6},
       {32, 32, 3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       2},
      {"blocked_depthwise",
       {2, 32, 9, 9},
       {32, 1, 3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       32},
      // Three output blocks from four input blocks of 16 (six from eight
      // of 8).
      {"blocked_pointwise", {2, 64, 5, 5}, {48, 64, 1, 1}},
      // Three blocks of 8 from four: NCHW8c only.
      {"blocked_pointwise_eight", {2, 32, 5, 5}, {24, 32, 1, 1}},
      // A 1 x 1 Output: the bias gradient's rows are whole samples.
      {"blocked_one_pixel", {3, 16, 3, 3}, {16, 16, 3, 3}},
      // First convolutions: channels that fill no block, so NCHW Input only.
      {"first", {2, 3, 9, 9}, {8, 3, 3, 3}, {1, 1}, {1, 1}},
      {"first_strided", {3, 3, 11, 10}, {16, 3, 3, 3}, {2, 2}, {1, 1}},
      {"first_asymmetric_strided",
       {1, 3, 8, 7},
       {16, 3, 4, 4},
       {2, 2},
       {1, 2, 2, 1}},
      {"first_one_channel", {1, 1, 6, 5}, {8, 1, 2, 2}, {1, 1}, {1, 0}},
      // Outputs of the bias alone (or zeros), and no samples.
      {"blocked_no_channels", {2, 0, 5, 5}, {16, 0, 3, 3}, {1, 1}, {1, 1}},
      {"blocked_only_padding", {1, 16, 0, 3}, {16, 16, 1, 1}, {1, 1}, {1, 1}},
      {"blocked_no_samples", {0, 16, 5, 5}, {16, 16, 3, 3}, {1, 1}, {1, 1}},
  };
  return *cases;
}

// Each blocked format whose block divides the output channels: both
// Inputs where the channels fill blocks, otherwise the NCHW one.
std::vector<Layout> BlockedLayouts(const ConvCase& c) {
  std::vector<Layout> layouts;
  for (const char* format : {"NCHW8c", "NCHW16c"}) {
    const int64_t block = BlockOf(format);
    if (c.filter[0] % block != 0) continue;
    if (c.input[1] % block == 0) layouts.push_back({format});
    layouts.push_back({format, /*nchw_input=*/true});
  }
  return layouts;
}

TEST(ConvCudaTest, BlockedMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const ConvCase& c : BlockedCases()) {
    ExpectForwardMatches(c, BlockedLayouts(c));
  }
}

TEST(ConvCudaTest, BlockedGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const ConvCase& c : BlockedCases()) {
    ExpectGradMatches(c, BlockedLayouts(c));
  }
}

// Past 65535 blocks of 256 threads in NCHW8c and NCHW16c: the bias and
// relu pass steps through positions and channel blocks over more than one
// grid, and the output's copies reorder more than one grid's worth.
TEST(ConvCudaTest, BlockedLargeMatchesCpu) {
  SF_REQUIRE_CUDA();
  const ConvCase cases[] = {
      {"large_blocked", {1, 16, 1100, 1000}, {16, 16, 1, 1}},
      {"large_first_padded",
       {1, 3, 1100, 1000},
       {16, 3, 2, 2},
       {1, 1},
       {0, 1, 1, 0}},
  };
  for (const ConvCase& c : cases) ExpectLargeMatches(c, BlockedLayouts(c));
}

}  // namespace
}  // namespace scopeflow
