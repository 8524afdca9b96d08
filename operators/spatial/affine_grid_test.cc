// affine_grid against PyTorch 1.13's torch.nn.functional.affine_grid (2-D
// and 3-D, both align_corners), its gradient by central differences, and
// its errors.
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

std::string AffineGrid(bool align_corners, const std::string& size_attr = "") {
  return absl::StrCat(
      "type: \"affine_grid\" inputs { slot: \"Theta\" vars: \"theta\" } ",
      size_attr.empty() ? "inputs { slot: \"Size\" vars: \"size\" } " : "",
      "outputs { slot: \"Out\" vars: \"grid\" } "
      "attrs { name: \"align_corners\" b: ",
      align_corners ? "true" : "false", " } ", size_attr);
}

const Tensor Theta2d() {
  return MakeTensor<double>({1, 2, 3}, {1, -0.5, 0.2, 0.3, 0.8, -0.1});
}

const Tensor Theta3d() {
  return MakeTensor<double>(
      {1, 3, 4}, {1, -0.5, 0.2, 0.1, 0.3, 0.8, -0.1, 0, 0.25, 0.5, 1.5, -0.3});
}

TEST(AffineGridTest, MatchesTorch2d) {
  const std::vector<std::vector<double>> expected = {
      {-0.216666667, -0.7, 0.45, -0.5, 1.11666667, -0.3, -0.716666667, 0.1,
       -0.05, 0.3, 0.616666667, 0.5},
      {-0.3, -1.2, 0.7, -0.9, 1.7, -0.6, -1.3, 0.4, -0.3, 0.7, 0.7, 1}};
  for (bool align : {false, true}) {
    SCOPED_TRACE(align);
    auto grid = RunOp(AffineGrid(align),
                      {{"theta", Theta2d()},
                       {"size", MakeTensor<int64_t>({4}, {1, 5, 2, 3})}},
                      {"grid"});
    ASSERT_TRUE(grid.ok()) << grid.status();
    EXPECT_EQ((*grid)[0].dims(), Dims({1, 2, 3, 2}));
    EXPECT_THAT(Values<double>((*grid)[0]),
                Pointwise(DoubleNear(1e-8), expected[align]));
  }
}

// An axis of one cell (H here) sits at 0 with align_corners too.
TEST(AffineGridTest, MatchesTorch3d) {
  const std::vector<std::vector<double>> expected = {
      {-0.5, -0.1, -1.175, 0.5, 0.2, -0.925, -0.3, -0.2, 0.325, 0.7, 0.1,
       0.575},
      {-1.1, -0.2, -2.05, 0.9, 0.4, -1.55, -0.7, -0.4, 0.95, 1.3, 0.2, 1.45}};
  for (bool align : {false, true}) {
    SCOPED_TRACE(align);
    auto grid = RunOp(
        AffineGrid(align,
                   "attrs { name: \"size\" i64s { values: [1, 1, 2, 1, 2] } }"),
        {{"theta", Theta3d()}}, {"grid"});
    ASSERT_TRUE(grid.ok()) << grid.status();
    EXPECT_EQ((*grid)[0].dims(), Dims({1, 2, 1, 2, 3}));
    EXPECT_THAT(Values<double>((*grid)[0]),
                Pointwise(DoubleNear(1e-8), expected[align]));
  }
}

TEST(AffineGridTest, GradientMatchesCentralDifferences) {
  GradCheckOptions options;
  options.wrt = {"theta"};
  for (bool align : {false, true}) {
    absl::Status status = CheckGradient(
        AffineGrid(align),
        {{"theta", MakeTensor<double>({2, 2, 3}, {1, -0.5, 0.2, 0.3, 0.8, -0.1,
                                                  0.4, 0.9, -1, 2, 0.1, 0.7})},
         {"size", MakeTensor<int64_t>({4}, {2, 1, 3, 4})}},
        options);
    EXPECT_TRUE(status.ok()) << status;
    status = CheckGradient(
        AffineGrid(align,
                   "attrs { name: \"size\" i64s { values: [1, 2, 2, 3, 2] } }"),
        {{"theta", Theta3d()}}, options);
    EXPECT_TRUE(status.ok()) << status;
  }
}

// The size is read at run time: RunOp's status holds the errors.
absl::Status RunGrid(const std::string& op, const std::vector<Feed>& feeds) {
  return RunOp(op, feeds, {"grid"}).status();
}

TEST(AffineGridTest, ErrorsNameTheInputs) {
  absl::Status status = RunGrid(
      AffineGrid(false), {{"theta", MakeTensor<float>({1, 2, 2}, {0, 0, 0, 0})},
                          {"size", MakeTensor<int64_t>({4}, {1, 1, 2, 2})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Theta\" (variable \"theta\", shape [1, 2, "
                        "2]): expected (N, 2, 3) for 2-D or (N, 3, 4)"));
  status =
      RunGrid(AffineGrid(false),
              {{"theta", MakeTensor<float>({1, 2, 3}, std::vector<float>(6))},
               {"size", MakeTensor<int64_t>({5}, {1, 1, 2, 2, 2})}});
  EXPECT_THAT(status.message(),
              HasSubstr("expected 4 values (N, C and 2 spatial sizes)"));
  status =
      RunGrid(AffineGrid(false),
              {{"theta", MakeTensor<float>({1, 2, 3}, std::vector<float>(6))},
               {"size", MakeTensor<int64_t>({4}, {2, 1, 2, 2})}});
  EXPECT_THAT(status.message(),
              HasSubstr("expected the batch of input \"Size\""));
  status =
      RunGrid(AffineGrid(false),
              {{"theta", MakeTensor<float>({1, 2, 3}, std::vector<float>(6))},
               {"size", MakeTensor<int64_t>({4}, {1, 1, -2, 2})}});
  EXPECT_THAT(status.message(), HasSubstr("expected sizes >= 0"));
}

}  // namespace
}  // namespace scopeflow
