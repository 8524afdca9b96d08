// prelu and selu: hand-computed values, prelu's slope broadcast and its
// refusal to widen X, and both gradients checked numerically.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr char kPRelu[] = R"pb(type: "prelu"
                               inputs { slot: "X" vars: "x" }
                               inputs { slot: "Slope" vars: "slope" }
                               outputs { slot: "Out" vars: "out" })pb";

std::string SeluOp(const std::string& attrs = "") {
  return absl::StrFormat(
      "type: \"selu\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" } %s",
      attrs);
}

TEST(PReluTest, SlopePerChannel) {
  // x [2, 2, 2] (N, C, W) with slope [2, 1]: channel 0 scales by 0.5,
  // channel 1 by -2, only where x < 0.
  auto out = RunOp(
      kPRelu,
      {{"x", MakeTensor<float>({2, 2, 2}, {-2, 3, -1, 4, 0, -4, 5, -0.5f})},
       {"slope", MakeTensor<float>({2, 1}, {0.5f, -2})}},
      {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-1, 3, 2, 4, 0, -2, 5, 1));
}

TEST(PReluTest, ScalarSlope) {
  auto out = RunOp(kPRelu,
                   {{"x", MakeTensor<double>({3}, {-3, 0, 2})},
                    {"slope", MakeTensor<double>({}, {0.25})}},
                   {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(-0.75, 0, 2));
}

TEST(PReluTest, SlopeMayNotWidenX) {
  absl::Status status = PrepareOp(
      kPRelu, {{"x", MakeTensor<float>({3}, {1, 2, 3})},
               {"slope", MakeTensor<float>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Slope\" (variable \"slope\", shape [2, 3]) "
                        "must broadcast to the shape of \"X\" (variable "
                        "\"x\", shape [3])"));
}

TEST(PReluTest, GradientChecksNumerically) {
  const Tensor x = MakeTensor<double>(
      {2, 3, 2},
      {-1.3, 0.7, 2.1, -0.4, -2.2, 1.1, 0.3, -0.9, 1.7, -1.6, -0.2, 0.8});
  const Tensor slope = MakeTensor<double>({3, 1}, {0.25, -0.5, 1.5});
  absl::Status status = CheckGradientTogetherAndAlone(
      kPRelu, {{"x", x}, {"slope", slope}}, {"x", "slope"});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(SeluTest, Values) {
  auto out = RunOp(SeluOp("attrs { name: \"alpha\" f: 2 } attrs { name: "
                          "\"gamma\" f: 3 }"),
                   {{"x", MakeTensor<double>({3}, {-1, 0, 1.5})}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  // 3 * 2 * (e^-1 - 1), 0, 3 * 1.5.
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-12),
                        std::vector<double>{6 * (std::exp(-1.0) - 1), 0, 4.5}));
  auto defaults =
      RunOp(SeluOp(), {{"x", MakeTensor<float>({2}, {-1, 1})}}, {"out"});
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  // ONNX's test_selu_default values.
  EXPECT_THAT(
      Values<float>((*defaults)[0]),
      Pointwise(DoubleNear(1e-6), std::vector<float>{-1.1113307f, 1.050701f}));
}

TEST(SeluTest, IntegerInputIsRefused) {
  absl::Status status =
      PrepareOp(SeluOp(), {{"x", MakeTensor<int32_t>({1}, {1})}});
  EXPECT_THAT(status.message(), HasSubstr("op 0 (selu)"));
  EXPECT_FALSE(status.ok());
}

TEST(SeluTest, GradientChecksNumerically) {
  absl::Status status = CheckGradient(
      SeluOp(
          "attrs { name: \"alpha\" f: 1.5 } attrs { name: \"gamma\" f: 0.75 }"),
      {{"x", MakeTensor<double>({2, 3}, {-1.2, -0.3, 0.4, 1.1, -2.0, 0.2})}});
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace scopeflow
