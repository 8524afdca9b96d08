// non_max_suppression: hand-computed selections in both box forms, with
// the limits as attributes and as fed inputs; the count unknown at
// Prepare; no gradient; the errors for bad shapes and limits.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string NmsOp(const std::string& attrs, bool fed_limits = false) {
  std::string op =
      "type: \"non_max_suppression\" inputs { slot: \"Boxes\" vars: \"b\" } "
      "inputs { slot: \"Scores\" vars: \"s\" } ";
  if (fed_limits) {
    op +=
        "inputs { slot: \"MaxOutputBoxesPerClass\" vars: \"m\" } "
        "inputs { slot: \"IouThreshold\" vars: \"iou\" } "
        "inputs { slot: \"ScoreThreshold\" vars: \"st\" } ";
  }
  return op + "outputs { slot: \"Out\" vars: \"y\" } " + attrs;
}

std::string Attrs(int64_t max_boxes, float iou) {
  return "attrs { name: \"max_output_boxes_per_class\" i64: " +
         std::to_string(max_boxes) +
         " } attrs { name: \"iou_threshold\" f: " + std::to_string(iou) + " }";
}

absl::StatusOr<Tensor> Nms(const std::string& op, const Tensor& boxes,
                           const Tensor& scores) {
  auto out = RunOp(op, {{"b", boxes}, {"s", scores}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// Corners (y1, x1, y2, x2): A = [0, 0, 2, 2]; B = [0, 1, 2, 3] overlaps A
// by 2 of its 4, IoU 2 / (4 + 4 - 2) = 1/3; C is A with its corners given
// the other way round (IoU 1 with A); D = [5, 5, 6, 6] overlaps nothing.
const Tensor& CornerBoxes() {
  static const Tensor* boxes = new Tensor(MakeTensor<float>(
      {1, 4, 4}, {0, 0, 2, 2, 0, 1, 2, 3, 2, 2, 0, 0, 5, 5, 6, 6}));
  return *boxes;
}
const Tensor& CornerScores() {
  static const Tensor* scores =
      new Tensor(MakeTensor<float>({1, 1, 4}, {0.9f, 0.8f, 0.95f, 0.1f}));
  return *scores;
}

TEST(NonMaxSuppressionTest, CornerBoxesByIouThreshold) {
  // By score: C, A, B, D. C is kept, A goes (IoU 1 with C); B (IoU 1/3
  // with C) stays under threshold 0.5, goes under 0.3; D always stays.
  auto out = Nms(NmsOp(Attrs(10, 0.5f)), CornerBoxes(), CornerScores());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), kInt64);
  EXPECT_THAT(out->dims(), ElementsAre(3, 3));
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(0, 0, 2, 0, 0, 1, 0, 0, 3));
  out = Nms(NmsOp(Attrs(10, 0.3f)), CornerBoxes(), CornerScores());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(0, 0, 2, 0, 0, 3));
  // At most one a class: the best.
  out = Nms(NmsOp(Attrs(1, 0.5f)), CornerBoxes(), CornerScores());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(0, 0, 2));
  // The default limit is 0 boxes: none.
  out = Nms(NmsOp(""), CornerBoxes(), CornerScores());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(0, 3));
}

TEST(NonMaxSuppressionTest, ScoreThresholdKeepsOnlyScoresAbove) {
  // D's score equals the threshold: not above it, so D goes.
  const std::string attrs =
      Attrs(10, 0.5f) +
      " attrs { name: \"has_score_threshold\" b: true } attrs { "
      "name: \"score_threshold\" f: 0.1 }";
  auto out = Nms(NmsOp(attrs), CornerBoxes(), CornerScores());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(0, 0, 2, 0, 0, 1));
}

// Center form (x_center, y_center, width, height), 2 batches of 2 boxes:
// in batch 0 P spans [0, 2] on both axes and Q [1, 3] in x, [0, 2] in y
// (IoU 1/3); in batch 1 Q lies far from P.
const Tensor& CenterBoxes() {
  static const Tensor* boxes = new Tensor(MakeTensor<float>(
      {2, 2, 4}, {1, 1, 2, 2, 2, 1, 2, 2, 1, 1, 2, 2, 10, 10, 2, 2}));
  return *boxes;
}
const Tensor& CenterScores() {
  // [batch, class, box]; batch 1 class 1 is a tie (lower index first).
  static const Tensor* scores = new Tensor(
      MakeTensor<float>({2, 2, 2}, {0.5f, 0.6f, 0.7f, 0.2f, 0.3f, 0.4f, 0, 0}));
  return *scores;
}
const std::vector<int64_t> kCenterSelected = {0, 0, 1, 0, 1, 0, 1, 0, 1,
                                              1, 0, 0, 1, 1, 0, 1, 1, 1};

TEST(NonMaxSuppressionTest, CenterBoxesBatchesAndClasses) {
  const std::string attrs =
      Attrs(5, 0.2f) + " attrs { name: \"center_point_box\" i64: 1 }";
  auto out = Nms(NmsOp(attrs), CenterBoxes(), CenterScores());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(6, 3));
  EXPECT_THAT(Values<int64_t>(*out), ElementsAreArray(kCenterSelected));
}

TEST(NonMaxSuppressionTest, FedLimitsOverrideAttributes) {
  const std::string op =
      NmsOp(Attrs(0, 0.9f) + " attrs { name: \"center_point_box\" i64: 1 }",
            /*fed_limits=*/true);
  auto out = RunOp(op,
                   {{"b", CenterBoxes()},
                    {"s", CenterScores()},
                    {"m", MakeTensor<int64_t>({1}, {5})},
                    {"iou", MakeTensor<float>({1}, {0.2f})},
                    {"st", MakeTensor<float>({}, {-1.0f})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAreArray(kCenterSelected));
  // A score threshold of 0.35 leaves batch 0's class 0 only Q, class 1
  // only P, and batch 1 only its Q of class 0.
  out = RunOp(op,
              {{"b", CenterBoxes()},
               {"s", CenterScores()},
               {"m", MakeTensor<int64_t>({1}, {5})},
               {"iou", MakeTensor<float>({1}, {0.2f})},
               {"st", MakeTensor<float>({1}, {0.35f})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]),
              ElementsAre(0, 0, 1, 0, 1, 0, 1, 0, 1));
}

TEST(NonMaxSuppressionTest, CountUnknownAtPrepareAndNoGradient) {
  auto info = InferAtPrepare(
      NmsOp(Attrs(3, 0.5f)),
      {{"b", kFloat32, {2, 10, 4}}, {"s", kFloat32, {2, 3, 10}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->dtype, kInt64);
  EXPECT_THAT(info->dims, ElementsAre(-1, 3));
  const OpSpec* spec = OpRegistry::Global().Find("non_max_suppression");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->grad(), nullptr);
}

TEST(NonMaxSuppressionTest, BadShapesAreRefused) {
  const std::string op = NmsOp(Attrs(3, 0.5f));
  auto prepare = [&op](std::vector<int64_t> boxes,
                       std::vector<int64_t> scores) {
    return InferAtPrepare(op, {{"b", kFloat32, boxes}, {"s", kFloat32, scores}},
                          "y")
        .status();
  };
  absl::Status status = prepare({10, 4}, {1, 3, 10});
  EXPECT_THAT(status.message(), HasSubstr("non_max_suppression"));
  EXPECT_THAT(status.message(), HasSubstr("input \"Boxes\" (variable \"b\""));
  status = prepare({1, 10, 4}, {3, 10});
  EXPECT_THAT(status.message(), HasSubstr("input \"Scores\" (variable \"s\""));
  status = prepare({1, 10, 5}, {1, 3, 10});
  EXPECT_THAT(status.message(),
              HasSubstr("expected [batch, spatial, 4], 4 coordinates a box"));
  status = prepare({2, 10, 4}, {1, 3, 10});
  EXPECT_THAT(status.message(),
              HasSubstr("expected one batch size (dim 0 of both)"));
  EXPECT_THAT(status.message(), HasSubstr("[2, 10, 4]"));
  status = prepare({1, 10, 4}, {1, 3, 11});
  EXPECT_THAT(status.message(),
              HasSubstr("expected as many boxes (dim 1 of Boxes) as scores a "
                        "class (dim 2 of Scores)"));
  status =
      InferAtPrepare(
          op, {{"b", kFloat32, {1, 10, 4}}, {"s", kFloat64, {1, 3, 10}}}, "y")
          .status();
  EXPECT_THAT(status.message(), HasSubstr("input \"Scores\" (variable \"s\")"));
  EXPECT_THAT(status.message(), HasSubstr("float32"));
}

TEST(NonMaxSuppressionTest, BadLimitsAreRefused) {
  const std::string op = NmsOp(Attrs(3, 0.5f), /*fed_limits=*/true);
  auto run = [&op](Tensor max_boxes, Tensor iou) {
    return RunOp(op,
                 {{"b", CornerBoxes()},
                  {"s", CornerScores()},
                  {"m", max_boxes},
                  {"iou", iou},
                  {"st", MakeTensor<float>({1}, {0.0f})}},
                 {"y"})
        .status();
  };
  absl::Status status =
      run(MakeTensor<int64_t>({1}, {3}), MakeTensor<float>({1}, {1.5f}));
  EXPECT_THAT(status.message(),
              HasSubstr("input \"IouThreshold\" (variable \"iou\") is 1.5: "
                        "expected a value within [0, 1]"));
  status =
      run(MakeTensor<int64_t>({2}, {3, 3}), MakeTensor<float>({1}, {0.5f}));
  EXPECT_THAT(status.message(),
              HasSubstr("input \"MaxOutputBoxesPerClass\" (variable \"m\")"));
  status = run(MakeTensor<int32_t>({1}, {3}), MakeTensor<float>({1}, {0.5f}));
  EXPECT_THAT(status.message(),
              HasSubstr("input \"MaxOutputBoxesPerClass\" (variable \"m\")"));
  status = Nms(NmsOp("attrs { name: \"center_point_box\" i64: 2 }"),
               CornerBoxes(), CornerScores())
               .status();
  EXPECT_THAT(status.message(), HasSubstr("center_point_box"));
}

}  // namespace
}  // namespace scopeflow
