// conv2d and conv2d_grad with data_format "NCHW8c" and "NCHW16c" (channel
// blocks of 8 and 16): each result equals the NCHW op's on the same values,
// blocked; and each format's shapes and errors.
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/channel_blocks_testing.h"

namespace scopeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct BlockedCase {
  std::string name;
  Dims input;   // [N, C, H, W]
  Dims filter;  // [M, C / groups, kH, kW]
  std::vector<int32_t> strides = {1, 1};
  std::vector<int32_t> paddings = {0, 0};
  int groups = 1;
  bool bias = false;
  // The blocked op reads Input as NCHW (rank 4) instead of blocked.
  bool nchw_input = false;
  bool fuse_relu = false;
};

// A case in one of the blocked data_formats.
struct BlockedParam {
  BlockedCase c;
  std::string format;
};

void PrintTo(const BlockedParam& p, std::ostream* os) {
  *os << p.c.name << " in " << p.format;
}

std::string IntsAttr(const std::string& name,
                     const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } }");
}

// The attributes of `c` with data_format `format` (empty: left out, NCHW).
std::string Attrs(const BlockedCase& c, const std::string& format) {
  return absl::StrCat(
      IntsAttr("strides", c.strides), " ", IntsAttr("paddings", c.paddings),
      " attrs { name: \"groups\" i: ", c.groups, " }",
      format.empty() ? ""
                     : absl::StrCat(" attrs { name: \"data_format\" s: \"",
                                    format, "\" }"));
}

std::string ConvOp(const BlockedCase& c, const std::string& format) {
  return absl::StrCat(
      "type: \"conv2d\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Output\" vars: \"y\" } ", Attrs(c, format),
      c.fuse_relu ? " attrs { name: \"fuse_relu\" b: true }" : "");
}

std::string ConvGradOp(const BlockedCase& c, const std::string& format) {
  return absl::StrCat(
      "type: \"conv2d_grad\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "inputs { slot: \"Output@GRAD\" vars: \"dy\" } ",
      "outputs { slot: \"Input@GRAD\" vars: \"dx\" } ",
      "outputs { slot: \"Filter@GRAD\" vars: \"dw\" } ",
      c.bias ? "outputs { slot: \"Bias@GRAD\" vars: \"db\" } " : "",
      Attrs(c, format));
}

template <typename T>
Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> values(NumElements(dims));
  for (T& v : values) v = static_cast<T>(dist(engine));
  return MakeTensor<T>(dims, values);
}

template <typename T>
void ExpectNear(const Tensor& got, const Tensor& expected, double tolerance) {
  ASSERT_EQ(got.dims(), expected.dims());
  const std::vector<T> g = Values<T>(got);
  const std::vector<T> e = Values<T>(expected);
  for (size_t i = 0; i < e.size(); ++i) {
    ASSERT_NEAR(g[i], e[i], tolerance) << "at " << i;
  }
}

template <typename T>
Tensor Relu(const Tensor& tensor) {
  std::vector<T> values = Values<T>(tensor);
  for (T& v : values) v = v > 0 ? v : T{0};
  return MakeTensor<T>(tensor.dims(), values);
}

class Conv2dBlockedTest : public ::testing::TestWithParam<BlockedParam> {
 protected:
  // The NCHW feeds as given, and as the blocked op takes them.
  template <typename T>
  void MakeFeeds(std::vector<Feed>& nchw, std::vector<Feed>& blocked) {
    const BlockedParam& p = GetParam();
    const Tensor x = Random<T>(p.c.input, 1);
    nchw = {{"x", x}, {"w", Random<T>(p.c.filter, 2)}};
    if (p.c.bias) nchw.push_back({"b", Random<T>({p.c.filter[0]}, 3)});
    blocked = nchw;
    if (!p.c.nchw_input) blocked[0].tensor = InFormat<T>(x, p.format);
  }

  template <typename T>
  void ExpectForwardMatchesNchw(double tolerance) {
    const BlockedParam& p = GetParam();
    std::vector<Feed> nchw, blocked;
    MakeFeeds<T>(nchw, blocked);
    BlockedCase plain = p.c;
    plain.fuse_relu = false;
    auto expected = RunOp(ConvOp(plain, ""), nchw, {"y"});
    ASSERT_TRUE(expected.ok()) << expected.status();
    Tensor y = (*expected)[0];
    if (p.c.fuse_relu) y = Relu<T>(y);
    auto got = RunOp(ConvOp(p.c, p.format), blocked, {"y"});
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectNear<T>((*got)[0], InFormat<T>(y, p.format), tolerance);
  }

  template <typename T>
  void ExpectGradMatchesNchw(double tolerance) {
    const BlockedParam& p = GetParam();
    const BlockedCase& c = p.c;
    std::vector<Feed> nchw, blocked;
    MakeFeeds<T>(nchw, blocked);
    BlockedCase plain = c;
    plain.fuse_relu = false;
    auto y = RunOp(ConvOp(plain, ""), nchw, {"y"});
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor dy = Random<T>((*y)[0].dims(), 4);
    nchw.push_back({"dy", dy});
    blocked.push_back({"dy", InFormat<T>(dy, p.format)});
    std::vector<std::string> fetches = {"dx", "dw"};
    if (c.bias) fetches.push_back("db");
    auto expected = RunOp(ConvGradOp(c, ""), nchw, fetches);
    ASSERT_TRUE(expected.ok()) << expected.status();
    auto got = RunOp(ConvGradOp(c, p.format), blocked, fetches);
    ASSERT_TRUE(got.ok()) << got.status();
    {
      SCOPED_TRACE("Input@GRAD");
      ExpectNear<T>(
          (*got)[0],
          c.nchw_input ? (*expected)[0] : InFormat<T>((*expected)[0], p.format),
          tolerance);
    }
    for (size_t i = 1; i < fetches.size(); ++i) {
      SCOPED_TRACE(fetches[i]);
      ExpectNear<T>((*got)[i], (*expected)[i], tolerance);
    }
  }
};

TEST_P(Conv2dBlockedTest, Float32MatchesNchw) {
  ExpectForwardMatchesNchw<float>(1e-4);
}

TEST_P(Conv2dBlockedTest, Float64MatchesNchw) {
  ExpectForwardMatchesNchw<double>(1e-12);
}

TEST_P(Conv2dBlockedTest, Float32GradMatchesNchw) {
  ExpectGradMatchesNchw<float>(1e-3);
}

TEST_P(Conv2dBlockedTest, Float64GradMatchesNchw) {
  ExpectGradMatchesNchw<double>(1e-12);
}

std::vector<BlockedCase> Cases() {
  return {
      {"Plain", {2, 16, 6, 5}, {16, 16, 3, 3}},
      // One block of NCHW8c's; too few channels for NCHW16c.
      {"EightChannels", {2, 8, 6, 5}, {8, 8, 3, 3}},
      {"PaddedWithBias",
       {1, 16, 7, 7},
       {16, 16, 3, 3},
       {1, 1},
       {1, 1},
       1,
       true},
      {"Stride2", {2, 32, 9, 8}, {16, 32, 3, 3}, {2, 2}, {1, 1}, 1, true},
      // Groups within a block of 16 (each a block of 8).
      {"Groups2", {1, 16, 6, 6}, {16, 8, 3, 3}, {1, 1}, {1, 1}, 2, true},
      // Each group's channels fill blocks of either size.
      {"Groups2FillBlocks",
       {1, 32, 6, 6},
       {32, 16, 3, 3},
       {1, 1},
       {1, 1},
       2,
       true},
      {"Groups4FillBlocks",
       {2, 64, 5, 5},
       {64, 16, 3, 3},
       {1, 1},
       {1, 1},
       4,
       true},
      {"Depthwise", {2, 32, 7, 7}, {32, 1, 3, 3}, {1, 1}, {1, 1}, 32, true},
      {"DepthwiseStride2",
       {1, 16, 9, 9},
       {16, 1, 3, 3},
       {2, 2},
       {1, 1},
       16,
       true},
      {"Pointwise", {3, 32, 4, 4}, {16, 32, 1, 1}, {1, 1}, {0, 0}, 1, true},
      {"FusedRelu",
       {2, 16, 6, 6},
       {16, 16, 3, 3},
       {1, 1},
       {1, 1},
       1,
       true,
       false,
       true},
      // Winograd's algorithm where the CPU has it (conv_onednn.h).
      {"WinogradFusedRelu",
       {2, 32, 9, 9},
       {64, 32, 3, 3},
       {1, 1},
       {1, 1},
       1,
       true,
       false,
       true},
      // 32 -> 32 channels, 3x3 of stride 1: Winograd's on AVX-512 CPUs in
      // either blocked layout, which for NCHW16c are its own (no reorders).
      {"Winograd32To32",
       {2, 32, 9, 9},
       {32, 32, 3, 3},
       {1, 1},
       {1, 1},
       1,
       true},
      // Unpadded and odd-sized: partial tiles.
      {"Winograd32To32Unpadded", {1, 32, 11, 13}, {32, 32, 3, 3}},
      // First convolutions: an image's channels, NCHW, into blocks.
      {"NchwInput",
       {2, 3, 10, 9},
       {16, 3, 3, 3},
       {1, 1},
       {1, 1},
       1,
       true,
       true},
      {"NchwInputEightFilters",
       {2, 3, 10, 9},
       {8, 3, 3, 3},
       {1, 1},
       {1, 1},
       1,
       true,
       true},
      {"NchwInputStride2Relu",
       {1, 3, 11, 11},
       {16, 3, 3, 3},
       {2, 2},
       {1, 1},
       1,
       true,
       true,
       true},
      {"NchwInputThirtyTwoFiltersRelu",
       {2, 3, 8, 8},
       {32, 3, 3, 3},
       {1, 1},
       {1, 1},
       1,
       true,
       true,
       true},
      // More NCHW channels than the first-convolution kernels read (an
      // EfficientNet's 24): oneDNN reorders them into its blocks instead
      // of running its reference kernel.
      {"WideNchwInputPointwise",
       {1, 24, 6, 6},
       {32, 24, 1, 1},
       {1, 1},
       {0, 0},
       1,
       true,
       true},
  };
}

// Each case in each blocked format its channels fill: the output channels
// a multiple of the block, and the input channels too where Input is
// blocked.
std::vector<BlockedParam> Params() {
  std::vector<BlockedParam> params;
  for (const BlockedCase& c : Cases()) {
    for (const char* format : kBlockedFormats) {
      const int64_t block = BlockIn(format);
      if (c.filter[0] % block != 0) continue;
      if (!c.nchw_input && c.input[1] % block != 0) continue;
      params.push_back({c, format});
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Conv2dBlockedTest, ::testing::ValuesIn(Params()),
    [](const ::testing::TestParamInfo<BlockedParam>& info) {
      return absl::StrCat(info.param.c.name, "_", info.param.format);
    });

// The shapes and errors of each blocked format, of block B.
class Conv2dBlockedShapeTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::string Format() const { return GetParam(); }
  int64_t Block() const { return BlockIn(GetParam()); }

  // conv2d of Input x, Filter w (and Bias b where `bias`) into y, padded by
  // 1, in the format.
  std::string Conv(bool bias = false) const {
    return absl::StrCat(
        "type: \"conv2d\" inputs { slot: \"Input\" vars: \"x\" } "
        "inputs { slot: \"Filter\" vars: \"w\" } ",
        bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
        "outputs { slot: \"Output\" vars: \"y\" } "
        "attrs { name: \"data_format\" s: \"",
        Format(), "\" } ", IntsAttr("paddings", {1, 1}));
  }
};

TEST_P(Conv2dBlockedShapeTest, InfersBlockedOutput) {
  const int64_t b = Block();
  auto y = InferAtPrepare(Conv(),
                          {{"x", kFloat32, {-1, 2, 7, 9, b}},
                           {"w", kFloat32, {3 * b, 2 * b, 3, 3}}},
                          "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 3, 7, 9, b));
  // An NCHW Input: the output is blocked all the same.
  y = InferAtPrepare(
      Conv(), {{"x", kFloat32, {4, 3, 5, 6}}, {"w", kFloat32, {b, 3, 3, 3}}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(4, 1, 5, 6, b));
  y = InferAtPrepare(
      Conv(),
      {{"x", kFloat32, {4, 2, 5, 6, b}}, {"w", kFloat32, {-1, 2 * b, 3, 3}}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(4, -1, 5, 6, b));
}

TEST_P(Conv2dBlockedShapeTest, ErrorsNameTheFormatAndItsBlock) {
  const int64_t b = Block();
  // Output channels that fill no whole block: 12 for NCHW8c, 24 (whole
  // blocks of 8) for NCHW16c.
  const int64_t filters = b * 3 / 2;
  absl::Status status =
      PrepareOp(Conv(), {{"x", MakeTensor<float>({1, 2, 5, 5, b}, {})},
                         {"w", MakeTensor<float>({filters, 2 * b, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(
                  "op 0 (conv2d): input \"Filter\" (variable \"w\") has shape "
                  "[",
                  filters, ", ", 2 * b, ", 3, 3]: data_format \"", Format(),
                  "\" writes output channels in blocks of ", b,
                  ", but the filter has ", filters, " output channels")));
  // Blocks of the other size (or of none).
  for (const int64_t last : {b / 2, b * 2}) {
    status =
        PrepareOp(Conv(), {{"x", MakeTensor<float>({1, 2, 5, 5, last}, {})},
                           {"w", MakeTensor<float>({b, 2 * b, 3, 3}, {})}});
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrCat(
                    "op 0 (conv2d): input \"Input\" (variable \"x\") has "
                    "shape [1, 2, 5, 5, ",
                    last, "] (data_format \"", Format(),
                    "\"): expected its last dimension to be the ", b,
                    " channels of a block")));
  }
  status = PrepareOp(Conv(), {{"x", MakeTensor<float>({1, 2, 5, 5, b}, {})},
                              {"w", MakeTensor<float>({b, b, 3, 3}, {})}});
  EXPECT_THAT(
      status.message(),
      AllOf(HasSubstr(absl::StrCat(
                "op 0 (conv2d): input \"Input\" (variable \"x\") has shape "
                "[1, 2, 5, 5, ",
                b, "] (data_format \"", Format(),
                "\") but \"Filter\" (variable \"w\") has shape [", b, ", ", b,
                ", 3, 3]")),
            HasSubstr(absl::StrCat("channels / groups = ", 2 * b,
                                   " / 1 = ", 2 * b))));
}

// No input channels: every output cell is its channel's bias.
TEST_P(Conv2dBlockedShapeTest, NoInputChannelsGiveTheBiasPerChannel) {
  const int64_t b = Block();
  std::vector<float> bias(2 * b);
  for (int64_t i = 0; i < 2 * b; ++i) bias[i] = static_cast<float>(i + 1);
  auto out = RunOp(Conv(/*bias=*/true),
                   {{"x", MakeTensor<float>({2, 0, 2, 3}, {})},
                    {"w", MakeTensor<float>({2 * b, 0, 1, 1}, {})},
                    {"b", MakeTensor<float>({2 * b}, bias)}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  // Padded by 1: [2, 2, 4, 5, B].
  ASSERT_THAT((*out)[0].dims(), ElementsAre(2, 2, 4, 5, b));
  const std::vector<float> y = Values<float>((*out)[0]);
  for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
    const int64_t channel = (i / (4 * 5 * b)) % 2 * b + i % b;
    ASSERT_EQ(y[i], bias[channel]) << "at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Conv2dBlockedShapeTest,
                         ::testing::ValuesIn(kBlockedFormats),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// Rank 5 is the blocked formats' alone.
TEST(Conv2dBlockedRankTest, NchwTakesNoBlocks) {
  const absl::Status status =
      PrepareOp(R"pb(type: "conv2d"
                     inputs { slot: "Input" vars: "x" }
                     inputs { slot: "Filter" vars: "w" }
                     outputs { slot: "Output" vars: "y" })pb",
                {{"x", MakeTensor<float>({1, 2, 5, 5, 8}, {})},
                 {"w", MakeTensor<float>({8, 16, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): input \"Input\" (variable \"x\")"));
  EXPECT_THAT(status.message(), HasSubstr("rank 4"));
}

}  // namespace
}  // namespace scopeflow
