#include <cmath>
#include <string>
#include <vector>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// Gradients a [2, 2] and b [1] with global norm sqrt(9 + 16) = 5, clipped
// in place.
std::string InPlaceClip(float max_norm) {
  return "type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: \"a\" "
         "vars: \"b\" } outputs { slot: \"Out\" vars: \"a\" vars: \"b\" } "
         "outputs { slot: \"GlobalNorm\" vars: \"norm\" } "
         "attrs { name: \"max_norm\" f: " +
         std::to_string(max_norm) + " }";
}

std::vector<Feed> Gradients() {
  return {{"a", MakeTensor<float>({2, 2}, {3, 0, 0, 0})},
          {"b", MakeTensor<float>({1}, {-4})}};
}

TEST(ClipByGlobalNormTest, BelowTheThresholdNothingChanges) {
  auto out = RunOp(InPlaceClip(10), Gradients(), {"a", "b", "norm"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 0, 0, 0));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(-4));
  EXPECT_THAT((*out)[2].dims(), ElementsAre(1));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(5));
}

TEST(ClipByGlobalNormTest, AtTheThresholdNothingChanges) {
  auto out = RunOp(InPlaceClip(5), Gradients(), {"a", "b"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 0, 0, 0));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(-4));
}

TEST(ClipByGlobalNormTest, AboveTheThresholdAllScaleTogether) {
  const std::vector<Feed> feeds = Gradients();
  auto out = RunOp(InPlaceClip(1), feeds, {"a", "b", "norm"});
  ASSERT_TRUE(out.ok()) << out.status();
  // Scale 1 / 5: the new global norm is max_norm.
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatNear(1e-7), {0.6f, 0.0f, 0.0f, 0.0f}));
  EXPECT_THAT(Values<float>((*out)[1]), Pointwise(FloatNear(1e-7), {-0.8f}));
  // GlobalNorm is the norm before clipping.
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(5));
  // The in-place update went to the net's copy, not the caller's feeds.
  EXPECT_THAT(Values<float>(feeds[0].tensor), ElementsAre(3, 0, 0, 0));
}

TEST(ClipByGlobalNormTest, OutputsMayBeNewVariablesAndGlobalNormOptional) {
  auto out = RunOp(
      "type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: \"a\" vars: "
      "\"b\" } outputs { slot: \"Out\" vars: \"ca\" vars: \"cb\" } "
      "attrs { name: \"max_norm\" f: 2.5 }",
      Gradients(), {"a", "ca", "cb"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 0, 0, 0));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[1]),
              Pointwise(FloatNear(1e-7), {1.5f, 0.0f, 0.0f, 0.0f}));
  EXPECT_THAT(Values<float>((*out)[2]), Pointwise(FloatNear(1e-7), {-2.0f}));
}

TEST(ClipByGlobalNormTest, Float64) {
  auto out = RunOp(
      "type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: \"a\" } "
      "outputs { slot: \"Out\" vars: \"a\" } "
      "outputs { slot: \"GlobalNorm\" vars: \"norm\" } "
      "attrs { name: \"max_norm\" f: 1 }",
      {{"a", MakeTensor<double>({3}, {1, 2, 2})}}, {"a", "norm"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-12), {1 / 3.0, 2 / 3.0, 2 / 3.0}));
  EXPECT_THAT(Values<double>((*out)[1]), ElementsAre(3));
}

TEST(ClipByGlobalNormTest, ErrorsNameTheOpAndTheVariable) {
  EXPECT_THAT(
      PrepareOp("type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: "
                "\"a\" vars: \"b\" } outputs { slot: \"Out\" vars: \"a\" } "
                "attrs { name: \"max_norm\" f: 1 }",
                Gradients())
          .message(),
      HasSubstr("op 0 (clip_by_global_norm): output \"Out\" has 1 "
                "variable(s) but input \"X\" has 2: one output per gradient"));
  EXPECT_THAT(
      PrepareOp("type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: "
                "\"a\" vars: \"b\" } outputs { slot: \"Out\" vars: \"a\" "
                "vars: \"b\" } attrs { name: \"max_norm\" f: 1 }",
                {{"a", MakeTensor<float>({1}, {1})},
                 {"b", MakeTensor<double>({1}, {1})}})
          .message(),
      HasSubstr("op 0 (clip_by_global_norm): input \"X\" #1 (variable \"b\") "
                "has dtype float64 but #0 (variable \"a\") has float32"));
  EXPECT_THAT(
      PrepareOp("type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: "
                "\"a\" } outputs { slot: \"Out\" vars: \"a\" } "
                "attrs { name: \"max_norm\" f: 1 }",
                {{"a", MakeTensor<int32_t>({1}, {1})}})
          .message(),
      HasSubstr("op 0 (clip_by_global_norm): input \"X\" #0 (variable \"a\") "
                "has dtype int32: expected float32 or float64"));
  EXPECT_THAT(
      PrepareOp("type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: "
                "\"a\" vars: \"a\" } outputs { slot: \"Out\" vars: \"c\" "
                "vars: \"d\" } attrs { name: \"max_norm\" f: 1 }",
                {{"a", MakeTensor<float>({1}, {1})}})
          .message(),
      HasSubstr("op 0 (clip_by_global_norm): input \"X\" lists variable "
                "\"a\" twice (#0 and #1)"));
  EXPECT_THAT(
      PrepareOp("type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: "
                "\"a\" } outputs { slot: \"Out\" vars: \"a\" } "
                "attrs { name: \"max_norm\" f: 0 }",
                {{"a", MakeTensor<float>({1}, {1})}})
          .message(),
      HasSubstr("op 0 (clip_by_global_norm): attribute \"max_norm\" must be "
                "positive"));
  EXPECT_THAT(
      PrepareOp("type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: "
                "\"a\" } outputs { slot: \"Out\" vars: \"a\" }",
                {{"a", MakeTensor<float>({1}, {1})}})
          .message(),
      HasSubstr("op 0 (clip_by_global_norm): missing required attribute "
                "\"max_norm\""));
}

}  // namespace
}  // namespace scopeflow
