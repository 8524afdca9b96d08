// The gradients of conv2d_transpose and conv3d_transpose: numeric checks
// in float64, float32 against float64, hand-computed values, and the
// gradient ops' errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
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

struct Case {
  std::string name;
  Dims input;   // [N, C, spatial...]
  Dims filter;  // [C, M / groups, k...]
  std::string attrs;
  int groups = 1;
  bool bias = true;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string Ints(const std::string& name, const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Type(const Case& c) {
  return c.input.size() == 5 ? "conv3d_transpose" : "conv2d_transpose";
}

std::string Attrs(const Case& c) {
  return absl::StrCat(c.attrs, "attrs { name: \"groups\" i: ", c.groups, " }");
}

std::string Op(const Case& c) {
  return absl::StrCat("type: \"", Type(c),
                      "\" inputs { slot: \"Input\" vars: \"x\" } "
                      "inputs { slot: \"Filter\" vars: \"w\" } ",
                      c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
                      "outputs { slot: \"Output\" vars: \"y\" } ", Attrs(c));
}

// The gradient op writing the gradients of `slots` ("Input", "Filter",
// "Bias") to dx, dw and db.
std::string GradOp(const Case& c, const std::vector<std::string>& slots) {
  std::string op =
      absl::StrCat("type: \"", Type(c),
                   "_grad\" inputs { slot: \"Input\" vars: \"x\" } "
                   "inputs { slot: \"Filter\" vars: \"w\" } ",
                   c.bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
                   "inputs { slot: \"Output@GRAD\" vars: \"dy\" } ", Attrs(c));
  for (const std::string& slot : slots) {
    const std::string var =
        slot == "Input" ? "dx" : (slot == "Filter" ? "dw" : "db");
    absl::StrAppend(&op, " outputs { slot: \"", slot, "@GRAD\" vars: \"", var,
                    "\" }");
  }
  return op;
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
std::vector<Feed> Feeds(const Case& c, uint32_t seed) {
  std::vector<Feed> feeds = {{"x", Random<T>(c.input, seed)},
                             {"w", Random<T>(c.filter, seed + 1)}};
  if (c.bias) {
    feeds.push_back({"b", Random<T>({c.filter[1] * c.groups}, seed + 2)});
  }
  return feeds;
}

std::vector<Case> Cases() {
  return {
      {"Plain", {2, 2, 3, 3}, {2, 3, 2, 2}, ""},
      {"StridePaddingOutputPadding",
       {1, 2, 3, 2},
       {2, 2, 3, 3},
       Ints("strides", {2, 3}) + Ints("paddings", {1, 0, 2, 1}) +
           Ints("output_padding", {1, 2}),
       1,
       false},
      {"DilationGroups",
       {2, 4, 2, 3},
       {4, 2, 2, 2},
       Ints("dilations", {2, 1}) + Ints("strides", {1, 2}),
       2},
      {"OutputSize",
       {1, 1, 2, 2},
       {1, 2, 3, 3},
       Ints("strides", {2, 2}) + Ints("paddings", {1, 1}) +
           Ints("output_size", {4, 5})},
      {"ThreeD",
       {1, 2, 2, 2, 3},
       {2, 2, 2, 3, 2},
       Ints("strides", {2, 1, 2}) + Ints("paddings", {1, 0, 0, 1, 1, 1}) +
           Ints("output_padding", {1, 0, 1})},
      {"ThreeDGroups",
       {2, 2, 2, 2, 2},
       {2, 1, 2, 2, 2},
       Ints("dilations", {1, 2, 1}),
       2},
  };
}

class ConvTransposeGradTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConvTransposeGradTest, Float64MatchesCentralDifferences) {
  const Case& c = GetParam();
  absl::Status status = CheckGradient(Op(c), Feeds<double>(c, 7));
  EXPECT_TRUE(status.ok()) << status;
}

// The float32 kernels (oneDNN's sgemm) against the float64 ones on the
// same float32-representable values.
TEST_P(ConvTransposeGradTest, Float32MatchesFloat64) {
  const Case& c = GetParam();
  auto y = RunOp(Op(c), Feeds<float>(c, 3), {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<Feed> f32 = Feeds<float>(c, 3);
  f32.push_back({"dy", Random<float>((*y)[0].dims(), 4)});
  std::vector<Feed> f64;
  for (const Feed& feed : f32) {
    std::vector<double> values(feed.tensor.data<float>(),
                               feed.tensor.data<float>() + feed.tensor.numel());
    f64.push_back({feed.name, MakeTensor<double>(feed.tensor.dims(), values)});
  }
  std::vector<std::string> slots = {"Input", "Filter"};
  std::vector<std::string> fetches = {"dx", "dw"};
  if (c.bias) {
    slots.push_back("Bias");
    fetches.push_back("db");
  }
  auto single = RunOp(GradOp(c, slots), f32, fetches);
  auto reference = RunOp(GradOp(c, slots), f64, fetches);
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (size_t k = 0; k < fetches.size(); ++k) {
    SCOPED_TRACE(fetches[k]);
    const Tensor& want = (*reference)[k];
    ASSERT_EQ((*single)[k].dims(), want.dims());
    for (int64_t j = 0; j < want.numel(); ++j) {
      ASSERT_NEAR((*single)[k].data<float>()[j], want.data<double>()[j], 1e-4)
          << "element " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvTransposeGradTest,
                         ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Input [1, 2] scattered by filter [1, 10] at stride 2 gives [1, 10, 2,
// 20]: Input@GRAD reads dy back through the filter, Filter@GRAD pairs each
// filter element with the dy cells it reached.
TEST(ConvTransposeGradValueTest, HandComputed) {
  const Case c = {"Hand", {1, 1, 1, 2}, {1, 1, 1, 2}, Ints("strides", {1, 2})};
  auto out = RunOp(GradOp(c, {"Input", "Filter", "Bias"}),
                   {{"x", MakeTensor<float>({1, 1, 1, 2}, {1, 2})},
                    {"w", MakeTensor<float>({1, 1, 1, 2}, {1, 10})},
                    {"b", MakeTensor<float>({1}, {0})},
                    {"dy", MakeTensor<float>({1, 1, 1, 4}, {1, 2, 3, 4})}},
                   {"dx", "dw", "db"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1 + 20, 3 + 40));
  EXPECT_THAT(Values<float>((*out)[1]),
              ElementsAre(1 * 1 + 2 * 3, 1 * 2 + 2 * 4));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(10));
}

TEST(ConvTransposeGradValueTest, OnlyTheRequestedGradients) {
  const Case c = Cases()[2];
  auto y = RunOp(Op(c), Feeds<float>(c, 1), {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<Feed> feeds = Feeds<float>(c, 1);
  feeds.push_back({"dy", Random<float>((*y)[0].dims(), 2)});
  auto all =
      RunOp(GradOp(c, {"Input", "Filter", "Bias"}), feeds, {"dx", "dw", "db"});
  auto filter_only = RunOp(GradOp(c, {"Filter"}), feeds, {"dw"});
  auto input_only = RunOp(GradOp(c, {"Input"}), feeds, {"dx"});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_TRUE(filter_only.ok()) << filter_only.status();
  ASSERT_TRUE(input_only.ok()) << input_only.status();
  EXPECT_EQ(Values<float>((*filter_only)[0]), Values<float>((*all)[1]));
  EXPECT_EQ(Values<float>((*input_only)[0]), Values<float>((*all)[0]));
}

TEST(ConvTransposeGradValueTest, EmptyBatchGivesZeroFilterAndBiasGradients) {
  const Case c = {"Empty", {0, 2, 2, 2}, {2, 3, 2, 2}, ""};
  std::vector<Feed> feeds = Feeds<float>(c, 1);
  feeds.push_back({"dy", MakeTensor<float>({0, 3, 3, 3}, {})});
  auto out =
      RunOp(GradOp(c, {"Input", "Filter", "Bias"}), feeds, {"dx", "dw", "db"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 2, 2, 2));
  EXPECT_THAT(Values<float>((*out)[1]), Each(0.0f));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(0, 0, 0));
}

TEST(ConvTransposeGradErrorTest, OutputGradShapeNamesVariable) {
  const Case c = Cases()[0];  // [2, 2, 3, 3] -> [2, 3, 4, 4]
  std::vector<Feed> feeds = Feeds<float>(c, 1);
  feeds.push_back(
      {"dy", MakeTensor<float>({2, 3, 3, 3}, std::vector<float>(54, 0))});
  EXPECT_THAT(
      PrepareOp(GradOp(c, {"Input"}), feeds).message(),
      HasSubstr("op 0 (conv2d_transpose_grad): input \"Output@GRAD\" "
                "(variable \"dy\") is float32 [2, 3, 3, 3]: expected float32 "
                "[2, 3, 4, 4], as the forward op's output \"Output\""));
}

TEST(ConvTransposeGradErrorTest, BiasGradNeedsBias) {
  Case c = Cases()[1];  // no bias
  std::vector<Feed> feeds = Feeds<float>(c, 1);
  auto y = RunOp(Op(c), feeds, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  feeds.push_back({"dy", Random<float>((*y)[0].dims(), 2)});
  EXPECT_THAT(PrepareOp(GradOp(c, {"Bias"}), feeds).message(),
              HasSubstr("input \"Bias\" is not bound: output \"Bias@GRAD\" "
                        "takes the shape of \"Bias\""));
}

}  // namespace
}  // namespace scopeflow
