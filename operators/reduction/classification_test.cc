#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pointwise;

constexpr char kCrossEntropy[] =
    R"pb(type: "softmax_with_cross_entropy"
         inputs { slot: "Logits" vars: "logits" }
         inputs { slot: "Label" vars: "label" }
         outputs { slot: "Softmax" vars: "softmax" }
         outputs { slot: "Loss" vars: "loss" })pb";

constexpr char kAccuracy[] =
    R"pb(type: "accuracy"
         inputs { slot: "Out" vars: "scores" }
         inputs { slot: "Label" vars: "label" }
         outputs { slot: "Accuracy" vars: "accuracy" })pb";

absl::StatusOr<std::vector<Tensor>> RunCrossEntropy(
    const Tensor& logits, const Tensor& label, const std::string& attrs = "") {
  return RunOp(absl::StrCat(kCrossEntropy, attrs),
               {{"logits", logits}, {"label", label}}, {"softmax", "loss"});
}

absl::Status PrepareCrossEntropy(const Tensor& logits, const Tensor& label,
                                 const std::string& attrs = "") {
  return PrepareOp(absl::StrCat(kCrossEntropy, attrs),
                   {{"logits", logits}, {"label", label}});
}

absl::StatusOr<Tensor> RunAccuracy(const Tensor& scores, const Tensor& label) {
  auto out =
      RunOp(kAccuracy, {{"scores", scores}, {"label", label}}, {"accuracy"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(SoftmaxWithCrossEntropyTest, SoftmaxAndLoss) {
  Tensor logits = MakeTensor<float>({2, 3}, {1, 2, 3, 1, 1, 1});
  for (const Tensor& label : {MakeTensor<int64_t>({2}, {2, 0}),
                              MakeTensor<int64_t>({2, 1}, {2, 0})}) {
    auto out = RunCrossEntropy(logits, label);
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& softmax = (*out)[0];
    const Tensor& loss = (*out)[1];
    EXPECT_THAT(softmax.dims(), ElementsAre(2, 3));
    EXPECT_THAT(Values<float>(softmax),
                Pointwise(FloatNear(3e-7), {0.0900306f, 0.2447285f, 0.6652410f,
                                            1.0f / 3, 1.0f / 3, 1.0f / 3}));
    EXPECT_THAT(loss.dims(), ElementsAre(2, 1));
    // -log(0.6652410) and log(3).
    EXPECT_THAT(Values<float>(loss),
                Pointwise(FloatNear(1e-6), {0.4076059f, 1.0986123f}));
  }
  auto out64 = RunCrossEntropy(MakeTensor<double>({1, 3}, {1, 2, 3}),
                               MakeTensor<int64_t>({1}, {0}),
                               R"pb(attrs { name: "axis" i: 1 })pb");
  ASSERT_TRUE(out64.ok()) << out64.status();
  EXPECT_EQ((*out64)[1].dtype(), kFloat64);
  EXPECT_THAT(Values<double>((*out64)[1]),
              Pointwise(DoubleNear(1e-14), {2.40760596444438}));
}

TEST(SoftmaxWithCrossEntropyTest, LargeLogitsGiveFiniteLoss) {
  // exp(1000) overflows; the loss of a label given probability e^-1000
  // (0 as a float) is still 1000.
  auto out = RunCrossEntropy(
      MakeTensor<float>({3, 2}, {1000, 0, 0, 1000, -1e30f, 1e30f}),
      MakeTensor<int64_t>({3}, {1, 1, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 0, 0, 1, 0, 1));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1000, 0, 2e30f));
}

TEST(SoftmaxWithCrossEntropyTest, LabelOutOfRangeNamesRowAndValue) {
  Tensor logits = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto high = RunCrossEntropy(logits, MakeTensor<int64_t>({2}, {0, 3}));
  EXPECT_EQ(high.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(high.status().message(),
              HasSubstr("op 0 (softmax_with_cross_entropy): input \"Label\" "
                        "holds 3 at row 1 (expected a class in [0, 3))"));
  auto negative = RunCrossEntropy(logits, MakeTensor<int64_t>({2, 1}, {-1, 0}));
  EXPECT_THAT(negative.status().message(),
              HasSubstr("input \"Label\" holds -1 at row 0"));
}

TEST(SoftmaxWithCrossEntropyTest, InputErrorsNameOpAndVariable) {
  Tensor logits = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor label = MakeTensor<int64_t>({2}, {0, 1});
  EXPECT_THAT(
      PrepareCrossEntropy(logits, MakeTensor<int32_t>({2}, {0, 1})).message(),
      HasSubstr("op 0 (softmax_with_cross_entropy): input \"Label\" (variable "
                "\"label\") has dtype int32: expected int64"));
  EXPECT_THAT(
      PrepareCrossEntropy(MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}),
                          label)
          .message(),
      HasSubstr("op 0 (softmax_with_cross_entropy): input \"Logits\" "
                "(variable \"logits\") has dtype int64: expected float32 or "
                "float64"));
  EXPECT_THAT(
      PrepareCrossEntropy(MakeTensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                          MakeTensor<int64_t>({1}, {0}))
          .message(),
      HasSubstr("op 0 (softmax_with_cross_entropy): input \"Logits\" "
                "(variable \"logits\") has shape [1, 2, 3]: expected rank 2"));
  EXPECT_THAT(
      PrepareCrossEntropy(logits, MakeTensor<int64_t>({2, 2}, {0, 1, 0, 1}))
          .message(),
      HasSubstr("op 0 (softmax_with_cross_entropy): input \"Label\" (variable "
                "\"label\", shape [2, 2]): expected shape [N] or [N, 1], one "
                "label per row of input \"Logits\""));
  EXPECT_THAT(
      PrepareCrossEntropy(logits, MakeTensor<int64_t>({3}, {0, 1, 2}))
          .message(),
      HasSubstr("op 0 (softmax_with_cross_entropy): input \"Label\" (variable "
                "\"label\", shape [3]) has 3 labels but input \"Logits\" "
                "(variable \"logits\", shape [2, 3]) has 2 rows (expected one "
                "label per row)"));
  EXPECT_THAT(
      PrepareCrossEntropy(logits, label, R"pb(attrs { name: "axis" i: 0 })pb")
          .message(),
      HasSubstr("op 0 (softmax_with_cross_entropy): attribute \"axis\" = 0: "
                "expected the last axis of input \"Logits\" (variable "
                "\"logits\", shape [2, 3]), 1 or -1"));
  EXPECT_THAT(
      PrepareCrossEntropy(MakeTensor<float>({2, 0}, {}), label).message(),
      HasSubstr("op 0 (softmax_with_cross_entropy): input \"Logits\" "
                "(variable \"logits\", shape [2, 0]) has no classes"));
}

TEST(AccuracyTest, FractionOfRowsWhoseArgMaxIsTheLabel) {
  // Row 2 ties: its argmax is 0, the label.
  Tensor scores = MakeTensor<float>(
      {4, 2}, {0.1f, 0.9f, 0.8f, 0.2f, 0.5f, 0.5f, 0.3f, 0.7f});
  auto y = RunAccuracy(scores, MakeTensor<int64_t>({4}, {1, 1, 0, 0}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->dtype(), kFloat32);
  EXPECT_THAT(y->dims(), IsEmpty());
  EXPECT_THAT(Values<float>(*y), ElementsAre(0.5f));
  auto all = RunAccuracy(MakeTensor<double>({3, 1}, {1, 2, 3}),
                         MakeTensor<int64_t>({3, 1}, {0, 0, 0}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Values<float>(*all), ElementsAre(1.0f));
  // A label outside [0, C) is never the argmax.
  auto outside = RunAccuracy(MakeTensor<int32_t>({3, 2}, {1, 0, 0, 1, 5, 4}),
                             MakeTensor<int64_t>({3}, {0, 7, -1}));
  ASSERT_TRUE(outside.ok()) << outside.status();
  EXPECT_THAT(Values<float>(*outside), Pointwise(FloatNear(1e-7), {1.0f / 3}));
  auto none =
      RunAccuracy(MakeTensor<float>({0, 2}, {}), MakeTensor<int64_t>({0}, {}));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(Values<float>(*none), ElementsAre(0.0f));
}

TEST(AccuracyTest, InputErrorsNameOpAndVariable) {
  Tensor scores = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  auto prepare = [](const Tensor& s, const Tensor& l) {
    return PrepareOp(kAccuracy, {{"scores", s}, {"label", l}});
  };
  EXPECT_THAT(prepare(scores, MakeTensor<float>({2}, {0, 1})).message(),
              HasSubstr("op 0 (accuracy): input \"Label\" (variable "
                        "\"label\") has dtype float32: expected int64"));
  EXPECT_THAT(prepare(MakeTensor<float>({4}, {1, 2, 3, 4}),
                      MakeTensor<int64_t>({4}, {0, 1, 0, 1}))
                  .message(),
              HasSubstr("op 0 (accuracy): input \"Out\" (variable \"scores\") "
                        "has shape [4]: expected rank 2"));
  EXPECT_THAT(prepare(scores, MakeTensor<int64_t>({1}, {0})).message(),
              HasSubstr("op 0 (accuracy): input \"Label\" (variable "
                        "\"label\", shape [1]) has 1 labels but input \"Out\" "
                        "(variable \"scores\", shape [2, 2]) has 2 rows"));
  EXPECT_THAT(
      prepare(MakeTensor<bool>({1, 2}, {true, false}),
              MakeTensor<int64_t>({1}, {0}))
          .message(),
      HasSubstr("op 0 (accuracy): input \"Out\" (variable \"scores\") has "
                "dtype bool: expected float32, float64, int32 or int64"));
}

}  // namespace
}  // namespace scopeflow
