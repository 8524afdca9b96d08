// dropout in training: masks drawn per Seed value, and the gradient
// Out@GRAD * Mask * scale, checked numerically and by value; errors.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

// dropout with X = x, Seed = step, Out = y, Mask = mask.
std::string Dropout(const std::string& attrs) {
  return absl::StrCat(
      "type: \"dropout\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Seed\" vars: \"step\" } "
      "outputs { slot: \"Out\" vars: \"y\" } "
      "outputs { slot: \"Mask\" vars: \"mask\" } ",
      attrs);
}

std::string DropoutGrad(const std::string& attrs) {
  return absl::StrCat(
      "type: \"dropout_grad\" inputs { slot: \"Mask\" vars: \"mask\" } "
      "inputs { slot: \"Out@GRAD\" vars: \"dy\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } ",
      attrs);
}

Tensor Step(int64_t value) { return MakeTensor<int64_t>({1}, {value}); }

template <typename T>
Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<T> values(NumElements(dims));
  for (T& v : values) v = static_cast<T>(dist(engine));
  return MakeTensor<T>(dims, values);
}

TEST(DropoutGradTest, MatchesCentralDifferences) {
  for (const std::string& attrs :
       {std::string("attrs { name: \"dropout_prob\" f: 0.4 } "
                    "attrs { name: \"seed\" i: 3 }"),
        std::string("attrs { name: \"dropout_prob\" f: 0.3 } "
                    "attrs { name: \"dropout_implementation\" s: "
                    "\"downgrade_in_infer\" }"),
        std::string("attrs { name: \"dropout_prob\" f: 0.3 } "
                    "attrs { name: \"is_test\" b: true } "
                    "attrs { name: \"dropout_implementation\" s: "
                    "\"downgrade_in_infer\" }")}) {
    SCOPED_TRACE(attrs);
    // Seed is int64, so only x is differentiated.
    absl::Status status = CheckGradient(
        Dropout(attrs), {{"x", Random<double>({4, 6}, 1)}, {"step", Step(7)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(DropoutGradTest, GradientIsMaskTimesScaleTimesOutGrad) {
  const float p = 0.4f;
  const std::string attrs =
      "attrs { name: \"dropout_prob\" f: 0.4 } attrs { name: \"seed\" i: 5 }";
  const Tensor x = Random<float>({50, 40}, 2);
  auto forward =
      RunOp(Dropout(attrs), {{"x", x}, {"step", Step(11)}}, {"y", "mask"});
  ASSERT_TRUE(forward.ok()) << forward.status();
  const Tensor& mask = (*forward)[1];
  const Tensor dy = Random<float>({50, 40}, 3);
  auto grad = RunOp(DropoutGrad(attrs), {{"mask", mask}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(grad.ok()) << grad.status();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  int kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const uint8_t m = mask.data<uint8_t>()[i];
    kept += m;
    ASSERT_EQ((*grad)[0].data<float>()[i], m ? dy.data<float>()[i] * scale : 0)
        << i;
    // The forward scaled what it kept by the same factor.
    ASSERT_EQ((*forward)[0].data<float>()[i],
              m ? x.data<float>()[i] * scale : 0)
        << i;
  }
  // Some of both, so the check above saw dropped and kept elements.
  EXPECT_GT(kept, 1000);
  EXPECT_LT(kept, 1400);
}

std::vector<uint8_t> Mask(int32_t seed_attr, int64_t step) {
  const std::vector<float> ones(1000, 1.0f);
  auto out = RunOp(
      Dropout(absl::StrCat("attrs { name: \"seed\" i: ", seed_attr, " }")),
      {{"x", MakeTensor<float>({1000}, ones)}, {"step", Step(step)}}, {"mask"});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? Values<uint8_t>((*out)[0]) : std::vector<uint8_t>();
}

TEST(DropoutGradTest, EachSeedValueDrawsItsOwnMaskReproducibly) {
  const std::vector<uint8_t> step0 = Mask(1, 0);
  const std::vector<uint8_t> step1 = Mask(1, 1);
  const std::vector<uint8_t> step2 = Mask(1, 2);
  ASSERT_EQ(step0.size(), 1000u);
  EXPECT_NE(step0, step1);
  EXPECT_NE(step1, step2);
  EXPECT_NE(step0, step2);
  // The same pair again: the same mask.
  EXPECT_EQ(Mask(1, 1), step1);
  EXPECT_EQ(Mask(1, 2), step2);
  // The attribute still matters, and so do Seed's high 32 bits.
  EXPECT_NE(Mask(2, 1), step1);
  EXPECT_NE(Mask(1, 1 + (int64_t{1} << 32)), step1);
  EXPECT_NE(Mask(1, -1), Mask(1, int64_t{0xFFFFFFFF}));
}

TEST(DropoutGradErrorTest, GradientNeedsMask) {
  absl::Status status = CheckGradient(
      "type: \"dropout\" inputs { slot: \"X\" vars: \"x\" } "
      "outputs { slot: \"Out\" vars: \"y\" }",
      {{"x", Random<double>({3}, 1)}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (dropout): making its gradient: output \"Mask\" "
                        "is not bound: the gradient of dropout reads the mask "
                        "the forward draws; bind Mask to a variable"));
}

TEST(DropoutGradErrorTest, SeedMustBeOneInt64) {
  const Tensor x = Random<float>({3}, 1);
  absl::Status dtype = PrepareOp(
      Dropout(""), {{"x", x}, {"step", MakeTensor<int32_t>({1}, {1})}});
  EXPECT_THAT(dtype.message(), HasSubstr("op 0 (dropout): input \"Seed\""));
  EXPECT_THAT(dtype.message(), HasSubstr("int64"));
  absl::Status shape = PrepareOp(
      Dropout(""), {{"x", x}, {"step", MakeTensor<int64_t>({2}, {1, 2})}});
  EXPECT_THAT(shape.message(),
              HasSubstr("op 0 (dropout): input \"Seed\" (variable \"step\") "
                        "has shape [2]: expected one element"));
}

TEST(DropoutGradErrorTest, MaskAndGradientMustAgree) {
  absl::Status shape =
      PrepareOp(DropoutGrad(""), {{"mask", MakeTensor<uint8_t>({2, 3}, {})},
                                  {"dy", MakeTensor<float>({3, 2}, {})}});
  EXPECT_THAT(shape.message(),
              HasSubstr("op 0 (dropout_grad): input \"Out@GRAD\" (variable "
                        "\"dy\") is float32 [3, 2]: expected float32 [2, 3], "
                        "as the forward op's output \"Out\""));
  absl::Status dtype =
      PrepareOp(DropoutGrad(""), {{"mask", MakeTensor<float>({2}, {})},
                                  {"dy", MakeTensor<float>({2}, {})}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (dropout_grad): input \"Mask\""));
}

}  // namespace
}  // namespace scopeflow
