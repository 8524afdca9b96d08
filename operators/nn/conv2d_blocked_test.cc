// conv2d and conv2d_grad with data_format "NCHW8c" (channel blocks of 8):
// each result equals the NCHW op's on the same values, blocked; and the
// format's shapes and errors.
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
  Dims filter;  // [M, C / groups, kH, kW], M a multiple of 8
  std::vector<int32_t> strides = {1, 1};
  std::vector<int32_t> paddings = {0, 0};
  int groups = 1;
  bool bias = false;
  // The blocked op reads Input as NCHW (rank 4) instead of blocked.
  bool nchw_input = false;
  bool fuse_relu = false;
};

void PrintTo(const BlockedCase& c, std::ostream* os) { *os << c.name; }

std::string IntsAttr(const std::string& name,
                     const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } }");
}

std::string Attrs(const BlockedCase& c, bool blocked) {
  return absl::StrCat(
      IntsAttr("strides", c.strides), " ", IntsAttr("paddings", c.paddings),
      " attrs { name: \"groups\" i: ", c.groups, " }",
      blocked ? " attrs { name: \"data_format\" s: \"NCHW8c\" }" : "");
}

std::string ConvOp(const BlockedCase& c, bool blocked) {
  return absl::StrCat(
      "type: \"conv2d\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Output\" vars: \"y\" } ", Attrs(c, blocked),
      c.fuse_relu ? " attrs { name: \"fuse_relu\" b: true }" : "");
}

std::string ConvGradOp(const BlockedCase& c, bool blocked) {
  return absl::StrCat(
      "type: \"conv2d_grad\" inputs { slot: \"Input\" vars: \"x\" } "
      "inputs { slot: \"Filter\" vars: \"w\" } ",
      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "inputs { slot: \"Output@GRAD\" vars: \"dy\" } ",
      "outputs { slot: \"Input@GRAD\" vars: \"dx\" } ",
      "outputs { slot: \"Filter@GRAD\" vars: \"dw\" } ",
      c.bias ? "outputs { slot: \"Bias@GRAD\" vars: \"db\" } " : "",
      Attrs(c, blocked));
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

class Conv2dBlockedTest : public ::testing::TestWithParam<BlockedCase> {
 protected:
  // The NCHW feeds as given, and as the blocked op takes them.
  template <typename T>
  void MakeFeeds(std::vector<Feed>& nchw, std::vector<Feed>& blocked) {
    const BlockedCase& c = GetParam();
    const Tensor x = Random<T>(c.input, 1);
    nchw = {{"x", x}, {"w", Random<T>(c.filter, 2)}};
    if (c.bias) nchw.push_back({"b", Random<T>({c.filter[0]}, 3)});
    blocked = nchw;
    if (!c.nchw_input) blocked[0].tensor = ToChannelBlocks<T>(x);
  }

  template <typename T>
  void ExpectForwardMatchesNchw(double tolerance) {
    const BlockedCase& c = GetParam();
    std::vector<Feed> nchw, blocked;
    MakeFeeds<T>(nchw, blocked);
    BlockedCase plain = c;
    plain.fuse_relu = false;
    auto expected = RunOp(ConvOp(plain, false), nchw, {"y"});
    ASSERT_TRUE(expected.ok()) << expected.status();
    Tensor y = (*expected)[0];
    if (c.fuse_relu) y = Relu<T>(y);
    auto got = RunOp(ConvOp(c, true), blocked, {"y"});
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectNear<T>((*got)[0], ToChannelBlocks<T>(y), tolerance);
  }

  template <typename T>
  void ExpectGradMatchesNchw(double tolerance) {
    const BlockedCase& c = GetParam();
    std::vector<Feed> nchw, blocked;
    MakeFeeds<T>(nchw, blocked);
    BlockedCase plain = c;
    plain.fuse_relu = false;
    auto y = RunOp(ConvOp(plain, false), nchw, {"y"});
    ASSERT_TRUE(y.ok()) << y.status();
    const Tensor dy = Random<T>((*y)[0].dims(), 4);
    nchw.push_back({"dy", dy});
    blocked.push_back({"dy", ToChannelBlocks<T>(dy)});
    std::vector<std::string> fetches = {"dx", "dw"};
    if (c.bias) fetches.push_back("db");
    auto expected = RunOp(ConvGradOp(c, false), nchw, fetches);
    ASSERT_TRUE(expected.ok()) << expected.status();
    auto got = RunOp(ConvGradOp(c, true), blocked, fetches);
    ASSERT_TRUE(got.ok()) << got.status();
    {
      SCOPED_TRACE("Input@GRAD");
      ExpectNear<T>(
          (*got)[0],
          c.nchw_input ? (*expected)[0] : ToChannelBlocks<T>((*expected)[0]),
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

INSTANTIATE_TEST_SUITE_P(
    Cases, Conv2dBlockedTest,
    ::testing::Values(
        BlockedCase{"Plain", {2, 8, 6, 5}, {8, 8, 3, 3}},
        BlockedCase{"PaddedWithBias",
                    {1, 16, 7, 7},
                    {16, 16, 3, 3},
                    {1, 1},
                    {1, 1},
                    1,
                    true},
        BlockedCase{
            "Stride2", {2, 16, 9, 8}, {8, 16, 3, 3}, {2, 2}, {1, 1}, 1, true},
        BlockedCase{
            "Groups2", {1, 16, 6, 6}, {16, 8, 3, 3}, {1, 1}, {1, 1}, 2, true},
        BlockedCase{"Pointwise",
                    {3, 32, 4, 4},
                    {16, 32, 1, 1},
                    {1, 1},
                    {0, 0},
                    1,
                    true},
        BlockedCase{"FusedRelu",
                    {2, 8, 6, 6},
                    {16, 8, 3, 3},
                    {1, 1},
                    {1, 1},
                    1,
                    true,
                    false,
                    true},
        // Winograd's algorithm where the CPU has it (conv_onednn.h).
        BlockedCase{"WinogradFusedRelu",
                    {2, 32, 9, 9},
                    {64, 32, 3, 3},
                    {1, 1},
                    {1, 1},
                    1,
                    true,
                    false,
                    true},
        BlockedCase{"NchwInput",
                    {2, 3, 10, 9},
                    {8, 3, 3, 3},
                    {1, 1},
                    {1, 1},
                    1,
                    true,
                    true},
        BlockedCase{"NchwInputStride2Relu",
                    {1, 3, 11, 11},
                    {16, 3, 3, 3},
                    {2, 2},
                    {1, 1},
                    1,
                    true,
                    true,
                    true}),
    [](const ::testing::TestParamInfo<BlockedCase>& info) {
      return info.param.name;
    });

constexpr char kBlockedConv[] = R"pb(type: "conv2d"
                                     inputs { slot: "Input" vars: "x" }
                                     inputs { slot: "Filter" vars: "w" }
                                     outputs { slot: "Output" vars: "y" }
                                     attrs { name: "data_format" s: "NCHW8c" }
                                     attrs {
                                       name: "paddings"
                                       ints { values: [ 1, 1 ] }
                                     })pb";

TEST(Conv2dBlockedShapeTest, InfersBlockedOutput) {
  auto y = InferAtPrepare(
      kBlockedConv,
      {{"x", kFloat32, {-1, 2, 7, 9, 8}}, {"w", kFloat32, {24, 16, 3, 3}}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 3, 7, 9, 8));
  // An NCHW Input: the output is blocked all the same.
  y = InferAtPrepare(
      kBlockedConv,
      {{"x", kFloat32, {4, 3, 5, 6}}, {"w", kFloat32, {8, 3, 3, 3}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(4, 1, 5, 6, 8));
  y = InferAtPrepare(
      kBlockedConv,
      {{"x", kFloat32, {4, 2, 5, 6, 8}}, {"w", kFloat32, {-1, 16, 3, 3}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(4, -1, 5, 6, 8));
}

TEST(Conv2dBlockedShapeTest, ErrorsNameTheFormat) {
  absl::Status status =
      PrepareOp(kBlockedConv, {{"x", MakeTensor<float>({1, 2, 5, 5, 8}, {})},
                               {"w", MakeTensor<float>({12, 16, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): input \"Filter\" (variable \"w\") has "
                        "shape [12, 16, 3, 3]: data_format \"NCHW8c\" writes "
                        "output channels in blocks of 8, but the filter has 12 "
                        "output channels"));
  status =
      PrepareOp(kBlockedConv, {{"x", MakeTensor<float>({1, 2, 5, 5, 4}, {})},
                               {"w", MakeTensor<float>({8, 16, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): input \"Input\" (variable \"x\") has "
                        "shape [1, 2, 5, 5, 4] (data_format \"NCHW8c\"): "
                        "expected its last dimension to be the 8 channels of "
                        "a block"));
  status =
      PrepareOp(kBlockedConv, {{"x", MakeTensor<float>({1, 2, 5, 5, 8}, {})},
                               {"w", MakeTensor<float>({8, 8, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("op 0 (conv2d): input \"Input\" (variable "
                              "\"x\") has shape [1, 2, 5, 5, 8] (data_format "
                              "\"NCHW8c\") but \"Filter\" (variable \"w\") "
                              "has shape [8, 8, 3, 3]"),
                    HasSubstr("channels / groups = 16 / 1 = 16")));
  // Rank 5 is the blocked format's alone.
  status = PrepareOp(R"pb(type: "conv2d"
                          inputs { slot: "Input" vars: "x" }
                          inputs { slot: "Filter" vars: "w" }
                          outputs { slot: "Output" vars: "y" })pb",
                     {{"x", MakeTensor<float>({1, 2, 5, 5, 8}, {})},
                      {"w", MakeTensor<float>({8, 16, 3, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (conv2d): input \"Input\" (variable \"x\")"));
  EXPECT_THAT(status.message(), HasSubstr("rank 4"));
}

// No input channels: every output cell is its channel's bias.
TEST(Conv2dBlockedShapeTest, NoInputChannelsGiveTheBiasPerChannel) {
  std::vector<float> bias(16);
  for (int i = 0; i < 16; ++i) bias[i] = static_cast<float>(i + 1);
  auto out = RunOp(
      R"pb(type: "conv2d"
           inputs { slot: "Input" vars: "x" }
           inputs { slot: "Filter" vars: "w" }
           inputs { slot: "Bias" vars: "b" }
           outputs { slot: "Output" vars: "y" }
           attrs { name: "data_format" s: "NCHW8c" })pb",
      {{"x", MakeTensor<float>({2, 0, 2, 3}, {})},
       {"w", MakeTensor<float>({16, 0, 1, 1}, {})},
       {"b", MakeTensor<float>({16}, bias)}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_THAT((*out)[0].dims(), ElementsAre(2, 2, 2, 3, 8));
  const std::vector<float> y = Values<float>((*out)[0]);
  for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
    const int64_t channel = (i / (2 * 3 * 8)) % 2 * 8 + i % 8;
    ASSERT_EQ(y[i], bias[channel]) << "at " << i;
  }
}

}  // namespace
}  // namespace scopeflow
