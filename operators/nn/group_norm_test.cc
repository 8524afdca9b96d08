// instance_norm and group_norm: values against torch 1.13's
// instance_norm and group_norm, numeric gradients, and errors.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string NormOp(const std::string& type, const std::string& attrs) {
  return absl::StrCat("type: \"", type, R"pb(" inputs { slot: "X" vars: "x" }
                      inputs { slot: "Scale" vars: "s" }
                      inputs { slot: "Bias" vars: "b" }
                      outputs { slot: "Y" vars: "y" } )pb",
                      attrs);
}

std::string GroupNormOp(int groups, float epsilon) {
  return NormOp("group_norm",
                absl::StrCat("attrs { name: \"groups\" i: ", groups,
                             " } attrs { name: \"epsilon\" f: ", epsilon,
                             " }"));
}

// x[i] = sin(1.7 i) + 0.1 i, shape [2, 4, 3]: the input the torch values
// below were computed from (in float64).
Tensor TestInput() {
  std::vector<double> values(24);
  for (int i = 0; i < 24; ++i) values[i] = std::sin(1.7 * i) + 0.1 * i;
  return MakeTensor<double>({2, 4, 3}, values);
}

TEST(InstanceNormTest, MatchesTorch) {
  // torch.nn.functional.instance_norm(x, weight=s, bias=b, eps=1e-5).
  auto out = RunOp(NormOp("instance_norm", ""),
                   {{"x", TestInput()},
                    {"s", MakeTensor<double>({4}, {0.5, -1.0, 2.0, 1.5})},
                    {"b", MakeTensor<double>({4}, {0.1, 0.2, -0.3, 0.0})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> torch = {
      -0.226933, 0.806442,  -0.279509, 1.585839,  -0.248861, -0.736979,
      -1.938032, -1.477867, 2.515899,  1.511029,  -2.044884, 0.533855,
      0.738590,  0.043660,  -0.482250, 0.125639,  -0.985850, 1.460211,
      -3.119014, 1.308892,  0.910123,  -1.615745, -0.382497, 1.998243};
  EXPECT_THAT(Values<double>((*out)[0]), Pointwise(DoubleNear(2e-6), torch));
  // No samples, or no channels: nothing to normalize.
  const Tensor none = MakeTensor<double>({0}, {});
  out = RunOp(NormOp("instance_norm", ""),
              {{"x", MakeTensor<double>({2, 0, 3}, {})}, {"s", none},
               {"b", none}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].numel(), 0);
}

TEST(GroupNormTest, PerChannelAndPerGroupScaleMatchTorch) {
  // torch.nn.functional.group_norm(x, 2, weight, bias, eps=1e-3).
  auto out = RunOp(GroupNormOp(2, 1e-3f),
                   {{"x", TestInput()},
                    {"s", MakeTensor<double>({4}, {0.5, -1.0, 2.0, 1.5})},
                    {"b", MakeTensor<double>({4}, {0.1, 0.2, -0.3, 0.0})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> per_channel = {
      -0.209409, 0.569190,  -0.249022, 1.711506,  -0.456585, -1.033401,
      -2.511964, -1.979135, 2.645289,  1.412040,  -1.354476, 0.651794,
      0.565569,  -0.151816, -0.694721, -0.246348, -1.128775, 0.813187,
      -2.891631, 1.109013,  0.748722,  -1.721371, -0.381953, 2.203745};
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(2e-6), per_channel));
  // Per group (ONNX opset 18): torch with each group's value repeated over
  // its channels.
  out = RunOp(GroupNormOp(2, 1e-3f),
              {{"x", TestInput()},
               {"s", MakeTensor<double>({2}, {0.5, 2.0})},
               {"b", MakeTensor<double>({2}, {0.1, -0.3})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> per_group = {
      -0.209409, 0.569190,  -0.249022, -0.655753, 0.428292,  0.716701,
      -2.511964, -1.979135, 2.645289,  1.582720,  -2.105968, 0.569059,
      0.565569,  -0.151816, -0.694721, 0.323174,  0.764388,  -0.206594,
      -2.891631, 1.109013,  0.748722,  -2.595161, -0.809270, 2.638326};
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(2e-6), per_group));
}

TEST(GroupNormTest, GradientsOfXScaleAndBias) {
  const Tensor x = MakeTensor<double>({2, 6, 2, 2}, RandomValues(48, 3));
  const std::vector<std::string> inputs = {"x", "s", "b"};
  GradCheckOptions options;
  options.rtol = 1e-5;
  absl::Status status = CheckGradientTogetherAndAlone(
      GroupNormOp(3, 1e-5f),
      {{"x", x},
       {"s", MakeTensor<double>({6}, RandomValues(6, 4))},
       {"b", MakeTensor<double>({6}, RandomValues(6, 5))}},
      inputs, options);
  EXPECT_TRUE(status.ok()) << status;
  status = CheckGradientTogetherAndAlone(
      GroupNormOp(2, 1e-5f),
      {{"x", x},
       {"s", MakeTensor<double>({2}, {0.75, -1.25})},
       {"b", MakeTensor<double>({2}, {0.5, 0.25})}},
      inputs, options);
  EXPECT_TRUE(status.ok()) << status;
  status = CheckGradientTogetherAndAlone(
      NormOp("instance_norm", ""),
      {{"x", x},
       {"s", MakeTensor<double>({6}, RandomValues(6, 6))},
       {"b", MakeTensor<double>({6}, RandomValues(6, 7))}},
      inputs, options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(GroupNormTest, BadShapesNameTheVariable) {
  const Tensor x = MakeTensor<float>({1, 6, 2}, std::vector<float>(12, 1));
  const Tensor six = MakeTensor<float>({6}, std::vector<float>(6, 1));
  absl::Status status =
      PrepareOp(GroupNormOp(4, 1e-5f), {{"x", x}, {"s", six}, {"b", six}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (group_norm): attribute \"groups\" = 4: "
                        "expected it to divide the 6 channels of input \"X\" "
                        "(variable \"x\", shape [1, 6, 2])"));
  const Tensor four = MakeTensor<float>({4}, std::vector<float>(4, 1));
  status =
      PrepareOp(GroupNormOp(3, 1e-5f), {{"x", x}, {"s", four}, {"b", six}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"Scale\" (variable \"s\", shape [4]): "
                        "expected 6 values (one per channel of input \"X\" "
                        "(variable \"x\", shape [1, 6, 2])) or 3 (one per "
                        "group, attribute \"groups\" = 3)"));
  status = PrepareOp(NormOp("instance_norm", ""),
                     {{"x", x}, {"s", six}, {"b", four}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (instance_norm): input \"Bias\" (variable "
                        "\"b\", shape [4]): expected 6 values, one per "
                        "channel of input \"X\""));
  status = PrepareOp(NormOp("instance_norm", ""),
                     {{"x", MakeTensor<int32_t>({1, 6, 2},
                                                std::vector<int32_t>(12, 1))},
                      {"s", six},
                      {"b", six}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"X\" (variable \"x\") has dtype int32"));
  status = PrepareOp(NormOp("instance_norm", ""),
                     {{"x", six}, {"s", six}, {"b", six}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"X\" (variable \"x\") has shape [6]: expected "
                        "rank 2 to 64"));
}

}  // namespace
}  // namespace scopeflow
