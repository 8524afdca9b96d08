// conv2d_transpose and conv3d_transpose: hand-computed outputs, a direct
// scatter loop as the reference for strides, paddings, dilations, groups,
// output_padding and output_size, shape inference and the errors.
#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

struct Case {
  std::string name;
  Dims input;   // [N, C, spatial...]
  Dims filter;  // [C, M / groups, k...]
  std::vector<int32_t> strides;
  std::vector<int32_t> paddings;
  std::vector<int32_t> dilations;
  int groups = 1;
  bool bias = false;
  std::vector<int32_t> output_padding = {};
  std::vector<int32_t> output_size = {};
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<int64_t> Shape(const Dims& dims) {
  return std::vector<int64_t>(dims.begin(), dims.end());
}

std::string IntsAttr(const std::string& name,
                     const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Op(const Case& c) {
  const bool three = c.input.size() == 5;
  std::string op =
      absl::StrCat("type: \"", three ? "conv3d_transpose" : "conv2d_transpose",
                   "\" inputs { slot: \"Input\" vars: \"x\" } "
                   "inputs { slot: \"Filter\" vars: \"w\" } ",
                   c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
                   "outputs { slot: \"Output\" vars: \"y\" } ");
  if (!c.strides.empty()) op += IntsAttr("strides", c.strides);
  if (!c.paddings.empty()) op += IntsAttr("paddings", c.paddings);
  if (!c.dilations.empty()) op += IntsAttr("dilations", c.dilations);
  if (!c.output_padding.empty()) {
    op += IntsAttr("output_padding", c.output_padding);
  }
  if (!c.output_size.empty()) op += IntsAttr("output_size", c.output_size);
  return absl::StrCat(op, "attrs { name: \"groups\" i: ", c.groups, " }");
}

// A spatial list of the case as three values, a 2-D one after a 1.
std::array<int64_t, 3> Three(const std::vector<int32_t>& values, int spatial,
                             int64_t fill) {
  std::array<int64_t, 3> out = {fill, fill, fill};
  for (int i = 0; i < spatial; ++i) {
    if (!values.empty()) out[3 - spatial + i] = values[i];
  }
  return out;
}

// The definition: every input cell adds its value times the filter into
// the output cells in * stride - pad_begin + k * dilation.
std::vector<double> Reference(const Case& c, const Dims& out_dims,
                              const std::vector<double>& x,
                              const std::vector<double>& w,
                              const std::vector<double>& b) {
  const int spatial = static_cast<int>(c.input.size()) - 2;
  std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1};
  for (int i = 0; i < spatial; ++i) {
    in[3 - spatial + i] = c.input[2 + i];
    k[3 - spatial + i] = c.filter[2 + i];
    out[3 - spatial + i] = out_dims[2 + i];
  }
  const auto stride = Three(c.strides, spatial, 1);
  const auto dilation = Three(c.dilations, spatial, 1);
  std::array<int64_t, 3> pad{0, 0, 0};
  for (int i = 0; i < spatial; ++i) {
    if (c.paddings.empty()) continue;
    pad[3 - spatial + i] = static_cast<int>(c.paddings.size()) == spatial
                               ? c.paddings[i]
                               : c.paddings[2 * i];
  }
  const int64_t batch = c.input[0], channels = c.input[1];
  const int64_t group_filters = c.filter[1];
  const int64_t filters = group_filters * c.groups;
  const int64_t group_channels = channels / c.groups;
  const int64_t out_plane = out[0] * out[1] * out[2];
  std::vector<double> y(batch * filters * out_plane, 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < filters; ++m) {
      for (int64_t p = 0; p < out_plane; ++p) {
        y[(n * filters + m) * out_plane + p] = b.empty() ? 0.0 : b[m];
      }
    }
  }
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t ci = 0; ci < channels; ++ci) {
      const int64_t group = ci / group_channels;
      for (int64_t ml = 0; ml < group_filters; ++ml) {
        const int64_t m = group * group_filters + ml;
        for (int64_t i0 = 0; i0 < in[0]; ++i0) {
          for (int64_t i1 = 0; i1 < in[1]; ++i1) {
            for (int64_t i2 = 0; i2 < in[2]; ++i2) {
              const double xv =
                  x[(((n * channels + ci) * in[0] + i0) * in[1] + i1) * in[2] +
                    i2];
              for (int64_t k0 = 0; k0 < k[0]; ++k0) {
                for (int64_t k1 = 0; k1 < k[1]; ++k1) {
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t o0 =
                        i0 * stride[0] - pad[0] + k0 * dilation[0];
                    const int64_t o1 =
                        i1 * stride[1] - pad[1] + k1 * dilation[1];
                    const int64_t o2 =
                        i2 * stride[2] - pad[2] + k2 * dilation[2];
                    if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] ||
                        o2 < 0 || o2 >= out[2]) {
                      continue;
                    }
                    const double wv =
                        w[(((ci * group_filters + ml) * k[0] + k0) * k[1] +
                           k1) *
                              k[2] +
                          k2];
                    y[(n * filters + m) * out_plane +
                      (o0 * out[1] + o1) * out[2] + o2] += xv * wv;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return y;
}

std::vector<Case> Cases() {
  return {
      {"Plain3x3WithBias", {2, 2, 3, 4}, {2, 3, 3, 3}, {}, {}, {}, 1, true},
      {"Stride2Padding1OutputPadding1",
       {1, 2, 3, 3},
       {2, 2, 3, 3},
       {2, 2},
       {1, 1},
       {},
       1,
       false,
       {1, 1}},
      {"Dilation2", {1, 1, 3, 4}, {1, 2, 2, 2}, {}, {}, {2, 2}, 1, true},
      {"Groups2", {2, 4, 3, 3}, {4, 3, 2, 2}, {1, 2}, {}, {}, 2, true},
      // Four-sided padding, everything non-square.
      {"NonSquare",
       {1, 2, 4, 3},
       {2, 1, 3, 2},
       {3, 2},
       {1, 0, 2, 1},
       {1, 2},
       2,
       true},
      // output_size picks one of the stride's possible sizes.
      {"OutputSize",
       {1, 1, 3, 3},
       {1, 2, 3, 3},
       {2, 3},
       {1, 1},
       {},
       1,
       false,
       {},
       {6, 8}},
      {"ThreeD",
       {2, 2, 2, 3, 2},
       {2, 2, 2, 2, 3},
       {2, 1, 2},
       {0, 1, 1, 0, 0, 1},
       {1, 2, 1},
       1,
       true},
      {"ThreeDGroupsOutputPadding",
       {1, 4, 2, 2, 2},
       {4, 1, 2, 2, 2},
       {2, 2, 2},
       {},
       {},
       2,
       false,
       {1, 0, 1}},
  };
}

class ConvTransposeTest : public ::testing::TestWithParam<Case> {};

template <typename T>
void CheckAgainstReference(const Case& c, double tolerance) {
  const std::vector<double> x = RandomValues(NumElements(c.input), 1);
  const std::vector<double> w = RandomValues(NumElements(c.filter), 2);
  const std::vector<double> b =
      c.bias ? RandomValues(c.filter[1] * c.groups, 3) : std::vector<double>{};
  std::vector<Feed> feeds = {
      {"x", MakeTensor<T>(c.input, std::vector<T>(x.begin(), x.end()))},
      {"w", MakeTensor<T>(c.filter, std::vector<T>(w.begin(), w.end()))}};
  if (c.bias) {
    feeds.push_back({"b", MakeTensor<T>({c.filter[1] * c.groups},
                                        std::vector<T>(b.begin(), b.end()))});
  }
  auto y = RunOp(Op(c), feeds, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<double> want = Reference(c, (*y)[0].dims(), x, w, b);
  const std::vector<T> got = Values<T>((*y)[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tolerance) << "element " << i;
  }
}

TEST_P(ConvTransposeTest, MatchesTheDefinition) {
  CheckAgainstReference<double>(GetParam(), 1e-12);
  CheckAgainstReference<float>(GetParam(), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvTransposeTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Output shapes: (in - 1) * stride + dilation * (k - 1) + 1 - pads +
// output_padding, or output_size.
TEST(ConvTransposeShapeTest, OutputSizes) {
  const std::vector<std::pair<Case, Dims>> cases = {
      {Cases()[0], {2, 3, 5, 6}},    {Cases()[1], {1, 2, 6, 6}},
      {Cases()[2], {1, 2, 5, 6}},    {Cases()[3], {2, 6, 4, 6}},
      {Cases()[4], {1, 2, 11, 4}},   {Cases()[5], {1, 2, 6, 8}},
      {Cases()[6], {2, 2, 3, 4, 4}}, {Cases()[7], {1, 2, 5, 4, 5}},
  };
  for (const auto& [c, dims] : cases) {
    std::vector<VarDecl> vars = {{"x", kFloat32, Shape(c.input)},
                                 {"w", kFloat32, Shape(c.filter)}};
    if (c.bias) vars.push_back({"b", kFloat32, {c.filter[1] * c.groups}});
    auto y = InferAtPrepare(Op(c), vars, "y");
    ASSERT_TRUE(y.ok()) << c.name << ": " << y.status();
    EXPECT_EQ(y->dims, dims) << c.name;
  }
}

TEST(ConvTransposeShapeTest, UnknownDims) {
  const Case c = Cases()[1];
  auto y = InferAtPrepare(
      Op(c),
      {{"x", kFloat32, {-1, 2, -1, 3}}, {"w", kFloat32, Shape(c.filter)}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 2, -1, 6));
  Case sized = Cases()[5];
  y = InferAtPrepare(
      Op(sized), {{"x", kFloat32, {}}, {"w", kFloat32, Shape(sized.filter)}},
      "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(-1, 2, 6, 8));
}

// ONNX's ConvTranspose example: a 3x3 ramp under a 3x3 filter of ones,
// each output cell the sum of the input cells whose window covers it.
TEST(ConvTransposeValueTest, HandComputed) {
  const Case c = {"Hand", {1, 1, 3, 3}, {1, 2, 3, 3}, {}, {}, {}};
  auto y = RunOp(
      Op(c),
      {{"x", MakeTensor<float>({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})},
       {"w", MakeTensor<float>({1, 2, 3, 3}, std::vector<float>(18, 1))}},
      {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<float> plane = {0,  1,  3,  3,  2,  3,  8, 15, 12,
                                    7,  9,  21, 36, 27, 15, 9, 20, 33,
                                    24, 13, 6,  13, 21, 15, 8};
  std::vector<float> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  EXPECT_THAT((*y)[0].dims(), ElementsAre(1, 2, 5, 5));
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAreArray(want));
}

// Stride 2 spreads the filter copies apart; output_padding adds a cell
// only the bias reaches.
TEST(ConvTransposeValueTest, StrideAndOutputPadding) {
  const Case c = {"Stride", {1, 1, 1, 2}, {1, 1, 1, 2}, {1, 2}, {}, {},
                  1,        true,         {0, 1}};
  auto y = RunOp(Op(c),
                 {{"x", MakeTensor<float>({1, 1, 1, 2}, {1, 2})},
                  {"w", MakeTensor<float>({1, 1, 1, 2}, {1, 10})},
                  {"b", MakeTensor<float>({1}, {0.5})}},
                 {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(1.5, 10.5, 2.5, 20.5, 0.5));
}

TEST(ConvTransposeValueTest, EmptyBatch) {
  const Case c = Cases()[0];
  auto y = RunOp(Op(c),
                 {{"x", MakeTensor<float>({0, 2, 3, 4}, {})},
                  {"w", MakeTensor<float>(c.filter, std::vector<float>(54, 1))},
                  {"b", MakeTensor<float>({3}, {1, 2, 3})}},
                 {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT((*y)[0].dims(), ElementsAre(0, 3, 5, 6));
}

absl::Status Prepare(const Case& c) {
  std::vector<Feed> feeds = {
      {"x",
       MakeTensor<float>(c.input, std::vector<float>(NumElements(c.input), 0))},
      {"w", MakeTensor<float>(c.filter,
                              std::vector<float>(NumElements(c.filter), 0))}};
  if (c.bias) {
    feeds.push_back({"b", MakeTensor<float>({3}, {0, 0, 0})});
  }
  return PrepareOp(Op(c), feeds);
}

TEST(ConvTransposeErrorTest, Shapes) {
  EXPECT_THAT(
      Prepare({"", {1, 3, 4, 4}, {2, 2, 3, 3}, {}, {}, {}}).message(),
      HasSubstr("op 0 (conv2d_transpose): input \"Input\" (variable \"x\", "
                "shape [1, 3, 4, 4]) but \"Filter\" (variable \"w\") has "
                "shape [2, 2, 3, 3]: expected the filter's dimension 0 to be "
                "the 3 input channels"));
  EXPECT_THAT(
      Prepare({"", {1, 3, 4, 4}, {3, 2, 3, 3}, {}, {}, {}, 2}).message(),
      HasSubstr("its 3 channels are not divisible by groups = 2"));
  EXPECT_THAT(
      Prepare({"", {1, 2, 4, 4}, {2, 2, 3, 3}, {}, {}, {}, 1, true}).message(),
      HasSubstr("input \"Bias\" (variable \"b\") has shape [3]: expected [2], "
                "one value per output channel"));
  EXPECT_THAT(Prepare({"", {1, 2, 4}, {2, 2, 3}, {}, {}, {}}).message(),
              HasSubstr("input \"Input\" (variable \"x\") has shape [1, 2, "
                        "4]: expected rank 4"));
  EXPECT_THAT(Prepare({"", {1, 2, 0, 4}, {2, 2, 3, 3}, {}, {}, {}}).message(),
              HasSubstr("expected positive spatial dims"));
  EXPECT_THAT(Prepare({"", {1, 2, 4, 4}, {2, 2, 0, 3}, {}, {}, {}}).message(),
              HasSubstr("has shape [2, 2, 0, 3]: expected positive kernel "
                        "sizes"));
}

TEST(ConvTransposeErrorTest, Sizes) {
  EXPECT_THAT(
      Prepare({"", {1, 1, 2, 2}, {1, 1, 2, 2}, {}, {2, 1}, {}}).message(),
      HasSubstr("and paddings [2, 1]: the output would be [-1, 1] cells; "
                "expected positive sizes"));
  EXPECT_THAT(Prepare({"",
                       {1, 1, 3, 3},
                       {1, 1, 3, 3},
                       {2, 2},
                       {},
                       {},
                       1,
                       false,
                       {},
                       {6, 8}})
                  .message(),
              HasSubstr("attribute \"output_size\" = [6, 8] is smaller than "
                        "the [7, 7] cells"));
  EXPECT_THAT(Prepare({"",
                       {1, 1, 3, 3},
                       {1, 1, 3, 3},
                       {2, 2},
                       {},
                       {},
                       1,
                       false,
                       {1, 0},
                       {8, 8}})
                  .message(),
              HasSubstr("attributes \"output_size\" and \"output_padding\" "
                        "both given"));
}

TEST(ConvTransposeErrorTest, Attributes) {
  EXPECT_THAT(
      Prepare({"", {1, 1, 3, 3}, {1, 1, 3, 3}, {2}, {}, {}}).message(),
      HasSubstr("attribute \"strides\" must hold 2 values, one per spatial "
                "axis, got [2]"));
  EXPECT_THAT(
      Prepare({"", {1, 1, 3, 3}, {1, 1, 3, 3}, {}, {1, 1, 1}, {}}).message(),
      HasSubstr("attribute \"paddings\" must hold 2 values (each axis padded "
                "alike at both ends) or 4 (a begin and an end per axis), got "
                "[1, 1, 1]"));
  EXPECT_THAT(
      Prepare({"", {1, 1, 3, 3}, {1, 1, 3, 3}, {}, {}, {0, 1}}).message(),
      HasSubstr("attribute \"dilations\" must be positive, got [0, 1]"));
  EXPECT_THAT(
      Prepare({"", {1, 1, 2, 3, 3}, {1, 1, 2, 3, 3}, {1, 1}, {}, {}}).message(),
      HasSubstr("(conv3d_transpose): attribute \"strides\" must hold "
                "3 values"));
}

}  // namespace
}  // namespace scopeflow
