#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kDropout[] = R"pb(type: "dropout"
                                 inputs { slot: "X" vars: "x" }
                                 outputs { slot: "Out" vars: "y" }
                                 outputs { slot: "Mask" vars: "mask" })pb";

constexpr int kCount = 20000;

// 1, 2, ..., kCount: no element is zero, so a zero output means dropped.
Tensor Counting() {
  std::vector<float> values(kCount);
  for (int i = 0; i < kCount; ++i) values[i] = i + 1;
  return MakeTensor<float>({kCount / 100, 100}, values);
}

absl::StatusOr<std::vector<Tensor>> Dropout(const std::string& attrs,
                                            const Tensor& x) {
  return RunOp(absl::StrCat(kDropout, attrs), {{"x", x}}, {"y", "mask"});
}

TEST(DropoutTest, SameSeedSameMask) {
  const Tensor x = Counting();
  auto a = Dropout("attrs { name: \"seed\" i: 42 }", x);
  auto b = Dropout("attrs { name: \"seed\" i: 42 }", x);
  auto c = Dropout("attrs { name: \"seed\" i: 43 }", x);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status();
  EXPECT_EQ(Values<uint8_t>((*a)[1]), Values<uint8_t>((*b)[1]));
  EXPECT_EQ(Values<float>((*a)[0]), Values<float>((*b)[0]));
  EXPECT_NE(Values<uint8_t>((*a)[1]), Values<uint8_t>((*c)[1]));
}

TEST(DropoutTest, KeepsAboutOneMinusPAndUpscales) {
  const Tensor x = Counting();
  for (float p : {0.1f, 0.5f, 0.8f}) {
    auto out = Dropout(absl::StrCat("attrs { name: \"dropout_prob\" f: ", p,
                                    " } attrs { name: \"seed\" i: 7 }"),
                       x);
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    const Tensor& mask = (*out)[1];
    EXPECT_EQ(mask.dtype(), kUInt8);
    EXPECT_THAT(mask.dims(), ElementsAre(kCount / 100, 100));
    int kept = 0;
    for (int i = 0; i < kCount; ++i) {
      const uint8_t m = mask.data<uint8_t>()[i];
      ASSERT_TRUE(m == 0 || m == 1);
      kept += m;
      const float expected = m ? x.data<float>()[i] / (1 - p) : 0.0f;
      ASSERT_FLOAT_EQ(y.data<float>()[i], expected) << "p " << p << " at " << i;
    }
    EXPECT_NEAR(static_cast<double>(kept) / kCount, 1 - p, 0.015) << "p " << p;
  }
}

TEST(DropoutTest, DowngradeInInferDoesNotScaleInTraining) {
  const Tensor x = Counting();
  auto out = Dropout(
      "attrs { name: \"dropout_prob\" f: 0.3 } attrs { name: "
      "\"dropout_implementation\" s: \"downgrade_in_infer\" }",
      x);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ((*out)[0].data<float>()[i],
              (*out)[1].data<uint8_t>()[i] ? x.data<float>()[i] : 0.0f);
  }
}

TEST(DropoutTest, IsTest) {
  const Tensor x = MakeTensor<float>({2, 2}, {1, -2, 3, 4});
  auto identity = Dropout(
      "attrs { name: \"dropout_prob\" f: 0.25 } attrs { name: \"is_test\" b: "
      "true }",
      x);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_THAT(Values<float>((*identity)[0]), ElementsAre(1, -2, 3, 4));
  EXPECT_THAT(Values<uint8_t>((*identity)[1]), Each(1));
  auto downgraded = Dropout(
      "attrs { name: \"dropout_prob\" f: 0.25 } attrs { name: \"is_test\" b: "
      "true } attrs { name: \"dropout_implementation\" s: "
      "\"downgrade_in_infer\" }",
      x);
  ASSERT_TRUE(downgraded.ok()) << downgraded.status();
  EXPECT_THAT(Values<float>((*downgraded)[0]),
              ElementsAre(0.75, -1.5, 2.25, 3));
}

TEST(DropoutTest, ZeroProbabilityKeepsAllAndMaskIsOptional) {
  auto out = RunOp(R"pb(type: "dropout"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" }
                        attrs { name: "dropout_prob" f: 0 })pb",
                   {{"x", MakeTensor<double>({3}, {1.5, 2, -3})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat64);
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(1.5, 2, -3));
}

TEST(DropoutTest, InfersUnknownDimensions) {
  auto mask = InferAtPrepare(kDropout, {{"x", kFloat32, {-1, 8}}}, "mask");
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(mask->dtype, kUInt8);
  EXPECT_THAT(mask->dims, ElementsAre(-1, 8));
  mask = InferAtPrepare(kDropout, {{"x", kFloat32, {}}}, "mask");
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(mask->dtype, kUInt8);
  EXPECT_FALSE(mask->has_dims);
}

TEST(DropoutErrorTest, ProbabilityOutOfRange) {
  const std::vector<Feed> feeds = {{"x", MakeTensor<float>({2}, {1, 2})}};
  absl::Status one = PrepareOp(
      absl::StrCat(kDropout, "attrs { name: \"dropout_prob\" f: 1 }"), feeds);
  EXPECT_THAT(one.message(),
              HasSubstr("op 0 (dropout): attribute \"dropout_prob\" must be in "
                        "[0, 1), got 1"));
  absl::Status negative = PrepareOp(
      absl::StrCat(kDropout, "attrs { name: \"dropout_prob\" f: -0.5 }"),
      feeds);
  EXPECT_THAT(negative.message(),
              HasSubstr("op 0 (dropout): attribute \"dropout_prob\" must be in "
                        "[0, 1), got -0.5"));
  absl::Status implementation = PrepareOp(
      absl::StrCat(kDropout,
                   "attrs { name: \"dropout_implementation\" s: \"scale\" }"),
      feeds);
  EXPECT_THAT(implementation.message(),
              HasSubstr("op 0 (dropout): attribute \"dropout_implementation\" "
                        "must be one of upscale_in_train, downgrade_in_infer, "
                        "got \"scale\""));
  absl::Status dtype = PrepareOp(
      kDropout, {{"x", MakeTensor<int64_t>({2}, std::vector<int64_t>{1, 2})}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (dropout): no kernel for dtype int64"));
}

}  // namespace
}  // namespace scopeflow
