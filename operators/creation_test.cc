#include <cmath>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FillConstantTest, FillsShapeAndValue) {
  auto out = RunOp(R"pb(type: "fill_constant"
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "shape"
                          i64s { values: [ 2, 3 ] }
                        }
                        attrs { name: "value" f: 2.5 })pb",
                   {}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*out)[0]), Each(2.5f));
}

TEST(FillConstantTest, OtherDtypes) {
  auto out = RunOp(R"pb(type: "fill_constant"
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "shape"
                          ints { values: [ 4 ] }
                        }
                        attrs { name: "value" f: 7 }
                        attrs { name: "dtype" i: 5 })pb",
                   {}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt64);
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(7, 7, 7, 7));
}

TEST(FillConstantTest, AttributeErrorsNameOpAndAttribute) {
  absl::Status missing = PrepareOp(R"pb(type: "fill_constant"
                                        outputs { slot: "Out" vars: "y" })pb",
                                   {});
  EXPECT_THAT(missing.message(),
              HasSubstr("op 0 (fill_constant): missing required attribute "
                        "\"shape\" (int64s)"));
  absl::Status negative = PrepareOp(
      R"pb(type: "fill_constant"
           outputs { slot: "Out" vars: "y" }
           attrs {
             name: "shape"
             i64s { values: [ 2, -3 ] }
           })pb",
      {});
  EXPECT_THAT(negative.message(),
              HasSubstr("attribute \"shape\" must be non-negative, got -3"));
  absl::Status wrong_type = PrepareOp(
      R"pb(type: "fill_constant"
           outputs { slot: "Out" vars: "y" }
           attrs {
             name: "shape"
             i64s { values: [ 2 ] }
           }
           attrs { name: "value" s: "two" })pb",
      {});
  EXPECT_THAT(wrong_type.message(),
              HasSubstr("attribute \"value\": expected float, got string"));
  absl::Status bad_dtype = PrepareOp(
      R"pb(type: "fill_constant"
           outputs { slot: "Out" vars: "y" }
           attrs {
             name: "shape"
             i64s { values: [ 2 ] }
           }
           attrs { name: "dtype" i: 42 })pb",
      {});
  EXPECT_THAT(bad_dtype.message(), HasSubstr("\"dtype\" = 42 is not a dtype"));
}

TEST(FillConstantTest, ValueMustFitAnIntegerDtype) {
  for (const char* value : {"3e10", "nan", "-inf"}) {
    absl::Status status =
        PrepareOp(absl::StrCat(R"pb(type: "fill_constant"
                                    outputs { slot: "Out" vars: "y" }
                                    attrs {
                                      name: "shape"
                                      i64s { values: [ 1 ] }
                                    }
                                    attrs { name: "dtype" i: 4 }
                                    attrs { name: "value" f:)pb",
                               value, "}"),
                  {});
    EXPECT_THAT(status.message(),
                HasSubstr("does not fit the integer dtype of output \"Out\" "
                          "(variable \"y\")"))
        << value;
  }
  EXPECT_TRUE(PrepareOp(R"pb(type: "fill_constant"
                             outputs { slot: "Out" vars: "y" }
                             attrs {
                               name: "shape"
                               i64s { values: [ 1 ] }
                             }
                             attrs { name: "dtype" i: 5 }
                             attrs { name: "value" f: -3e18 })pb",
                        {})
                  .ok());
}

TEST(RandomTest, SameSeedSameValues) {
  const std::string op = R"pb(type: "gaussian_random"
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "shape"
                                i64s { values: [ 1000 ] }
                              }
                              attrs { name: "mean" f: 1 }
                              attrs { name: "std" f: 2 }
                              attrs { name: "seed" i: 7 })pb";
  auto a = RunOp(op, {}, {"y"});
  auto b = RunOp(op, {}, {"y"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Values<float>((*a)[0]), Values<float>((*b)[0]));
  double sum = 0, sum_sq = 0;
  for (float x : Values<float>((*a)[0])) {
    sum += x;
    sum_sq += x * x;
  }
  const double mean = sum / 1000, var = sum_sq / 1000 - mean * mean;
  EXPECT_NEAR(mean, 1.0, 0.2);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.2);
}

TEST(RandomTest, UniformStaysInRange) {
  auto out = RunOp(R"pb(type: "uniform_random"
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "shape"
                          i64s { values: [ 500 ] }
                        }
                        attrs { name: "min" f: 2 }
                        attrs { name: "max" f: 3 }
                        attrs { name: "seed" i: 3 })pb",
                   {}, {"y"});
  ASSERT_TRUE(out.ok());
  for (float x : Values<float>((*out)[0])) {
    EXPECT_GE(x, 2.0f);
    EXPECT_LT(x, 3.0f);
  }
  auto bad = RunOp(R"pb(type: "uniform_random"
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "shape"
                          i64s { values: [ 5 ] }
                        }
                        attrs { name: "min" f: 3 }
                        attrs { name: "max" f: 2 })pb",
                   {}, {"y"});
  EXPECT_THAT(bad.status().message(),
              HasSubstr("op 0 (uniform_random): attribute \"min\" (3) must be "
                        "below \"max\" (2)"));
}

TEST(AssignTest, CopiesDeeply) {
  Tensor x = MakeTensor<int32_t>({3}, {1, 2, 3});
  auto out = RunOp(R"pb(type: "assign"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" })pb",
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE((*out)[0].SharesBufferWith(x));
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace scopeflow
