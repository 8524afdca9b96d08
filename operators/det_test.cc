#include <cstdint>
#include <string>
#include <vector>

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

constexpr char kDetOp[] = R"pb(type: "det"
                               inputs { slot: "X" vars: "x" }
                               outputs { slot: "Out" vars: "y" })pb";

constexpr char kDetGradOp[] = R"pb(type: "det_grad"
                                   inputs { slot: "X" vars: "x" }
                                   inputs { slot: "Out@GRAD" vars: "g" }
                                   outputs { slot: "X@GRAD" vars: "dx" })pb";

TEST(DetTest, MatchesTorchDet) {
  // torch.det (torch 1.13) of a 3x3 matrix (24) and of two 2x2 ones.
  auto square = RunOp(kDetOp,
                      {{"x", MakeTensor<double>(
                                 {3, 3}, {2, -1, 0, 1, 3, 2, 0, 1, 4})}},
                      {"y"});
  ASSERT_TRUE(square.ok()) << square.status();
  EXPECT_TRUE((*square)[0].dims().empty());
  EXPECT_THAT(Values<double>((*square)[0]),
              Pointwise(DoubleNear(1e-12), std::vector<double>{24}));
  auto batched = RunOp(
      kDetOp, {{"x", MakeTensor<float>({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0})}},
      {"y"});
  ASSERT_TRUE(batched.ok()) << batched.status();
  EXPECT_THAT((*batched)[0].dims(), ElementsAre(2));
  EXPECT_THAT(Values<float>((*batched)[0]), ElementsAre(-2.0f, -1.0f));
}

TEST(DetTest, SingularAndEmptyMatrices) {
  auto singular = RunOp(
      kDetOp,
      {{"x", MakeTensor<double>({3, 3}, {1, 2, 3, 2, 4, 6, 1, 0, 1})}},
      {"y"});
  ASSERT_TRUE(singular.ok()) << singular.status();
  EXPECT_EQ(Values<double>((*singular)[0])[0], 0.0);
  // A 0x0 matrix: the empty product. No matrices: no determinants.
  auto none = RunOp(kDetOp, {{"x", MakeTensor<float>({2, 0, 0}, {})}}, {"y"});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(Values<float>((*none)[0]), ElementsAre(1.0f, 1.0f));
  auto empty = RunOp(kDetOp, {{"x", MakeTensor<float>({0, 3, 3}, {})}}, {"y"});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT((*empty)[0].dims(), ElementsAre(0));
}

TEST(DetTest, GradientMatchesNumericDifferences) {
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{1, 1}, {3, 3}, {2, 2, 4, 4}}) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    const absl::Status status = CheckGradient(
        kDetOp, {{"x", MakeTensor<double>(Dims(dims.begin(), dims.end()),
                                          RandomValues(n, 7))}});
    EXPECT_TRUE(status.ok()) << status;
  }
  // Singular: no inverse, but the cofactors are the derivative still.
  const absl::Status status = CheckGradient(
      kDetOp,
      {{"x", MakeTensor<double>({3, 3}, {1, 2, 3, 2, 4, 6, 1, 0, 1})}});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(DetTest, GradientOfASingularMatrixIsItsCofactors) {
  // Cofactors of [[1, 2, 3], [2, 4, 6], [1, 0, 1]] by hand, times 2.
  auto dx = RunOp(
      kDetGradOp,
      {{"x", MakeTensor<double>({3, 3}, {1, 2, 3, 2, 4, 6, 1, 0, 1})},
       {"g", MakeTensor<double>({}, {2})}},
      {"dx"});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<double>((*dx)[0]),
              Pointwise(DoubleNear(1e-12),
                        std::vector<double>{8, 8, -8, -4, -4, 4, 0, 0, 0}));
}

TEST(DetTest, BadInputsNameTheVariable) {
  absl::Status status =
      PrepareOp(kDetOp, {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (det): input \"X\" (variable \"x\", shape [2, "
                        "3]): expected square matrices in the last two axes"));
  status = PrepareOp(kDetOp, {{"x", MakeTensor<float>({3}, {1, 2, 3})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (det): input \"X\" (variable \"x\""));
  status = PrepareOp(kDetOp, {{"x", MakeTensor<int32_t>({1, 1}, {1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("has dtype int32: expected float32 or float64"));
  status = PrepareOp(kDetGradOp,
                     {{"x", MakeTensor<float>({2, 2, 2}, std::vector<float>(8))},
                      {"g", MakeTensor<float>({3}, {1, 2, 3})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"Out@GRAD\" (variable \"g\") is float32 [3]: "
                        "expected float32 [2]"));
}

}  // namespace
}  // namespace scopeflow
