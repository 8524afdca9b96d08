#include <cstdint>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRange[] = R"pb(type: "range"
                               inputs { slot: "Start" vars: "s" }
                               inputs { slot: "Limit" vars: "l" }
                               inputs { slot: "Delta" vars: "d" }
                               outputs { slot: "Out" vars: "y" })pb";

template <typename T>
absl::StatusOr<std::vector<Tensor>> RunRange(T start, T limit, T delta) {
  return RunOp(kRange,
               {{"s", MakeTensor<T>({}, {start})},
                {"l", MakeTensor<T>({}, {limit})},
                {"d", MakeTensor<T>({}, {delta})}},
               {"y"});
}

TEST(RangeTest, FloatCountsUpToTheLimitExclusive) {
  // ceil((1 - 0) / 0.3) = 4: 0, 0.3, 0.6, 0.9.
  auto out = RunRange<float>(0.0f, 1.0f, 0.3f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat32);
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(0.0f, 0.3f, 0.6f, 0.90000004f));
  // The ONNX case test_range_float_type_positive_delta: 1, 3, 5, 7, 9.
  out = RunRange<float>(1.0f, 10.0f, 2.0f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 3, 5, 7, 9));
}

TEST(RangeTest, DoubleTakesStartPlusIndexTimesDelta) {
  // A running sum of 0.1 would drift; start + i * delta gives 2.9 at i = 29.
  auto out = RunRange<double>(0.0, 3.0, 0.1);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].numel(), 30);
  EXPECT_EQ(Values<double>((*out)[0])[29], 29 * 0.1);
  EXPECT_THAT(Values<double>((*out)[0])[7], DoubleNear(0.7, 1e-15));
}

TEST(RangeTest, IntegersWithNegativeDelta) {
  // ceil((6 - 10) / -3) = 2 elements; test_range_int32_type_negative_delta
  // is the third call (ceil(-7 / -3) = 3).
  auto out = RunRange<int32_t>(10, 6, -3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt32);
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(10, 7));
  out = RunRange<int32_t>(10, 4, -3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(10, 7));
  out = RunRange<int32_t>(10, 3, -3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(10, 7, 4));
  auto wide = RunRange<int64_t>(-5, 5, 4);
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_THAT(Values<int64_t>((*wide)[0]), ElementsAre(-5, -1, 3));
}

TEST(RangeTest, LimitBehindStartGivesEmpty) {
  auto out = RunRange<float>(5.0f, 1.0f, 1.0f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0));
  auto ints = RunRange<int64_t>(3, 3, 1);
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT((*ints)[0].dims(), ElementsAre(0));
}

TEST(RangeTest, OneElementVectorsCountAsScalars) {
  auto out = RunOp(kRange,
                   {{"s", MakeTensor<int64_t>({1}, {0})},
                    {"l", MakeTensor<int64_t>({1}, {3})},
                    {"d", MakeTensor<int64_t>({}, {1})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(0, 1, 2));
}

TEST(RangeTest, LengthIsUnknownAtPrepare) {
  auto info = InferAtPrepare(
      kRange, {{"s", kInt64, {}}, {"l", kInt64, {}}, {"d", kInt64, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->dtype, kInt64);
  EXPECT_THAT(info->dims, ElementsAre(-1));
}

TEST(RangeTest, ZeroDeltaIsAnErrorNamingTheVariables) {
  auto out = RunRange<int32_t>(0, 5, 0);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (range): input \"Delta\" = 0: expected a "
                        "nonzero step (inputs Start, Limit, Delta are "
                        "variables \"s\", \"l\", \"d\")"));
  auto floats = RunRange<float>(0.0f, 5.0f, 0.0f);
  EXPECT_THAT(floats.status().message(),
              HasSubstr("input \"Delta\" = 0: expected a finite, nonzero "
                        "step"));
  floats = RunRange<float>(0.0f, INFINITY, 1.0f);
  EXPECT_THAT(floats.status().message(),
              HasSubstr("\"Limit\" = inf: expected finite bounds"));
}

TEST(RangeTest, NonScalarOrMixedDtypeInputsAreRejected) {
  absl::Status status = PrepareOp(kRange, {{"s", MakeTensor<float>({2}, {0, 1})},
                                           {"l", MakeTensor<float>({}, {3})},
                                           {"d", MakeTensor<float>({}, {1})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (range): input \"Start\" (variable \"s\") is "
                        "float32 [2]: expected one float32 element (a "
                        "scalar)"));
  status = PrepareOp(kRange, {{"s", MakeTensor<float>({}, {0})},
                              {"l", MakeTensor<int64_t>({}, {3})},
                              {"d", MakeTensor<float>({}, {1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"Limit\" (variable \"l\") is int64"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("expected one float32 element (a scalar)"));
  status = PrepareOp(kRange, {{"s", MakeTensor<bool>({}, {false})},
                              {"l", MakeTensor<bool>({}, {true})},
                              {"d", MakeTensor<bool>({}, {true})}});
  EXPECT_THAT(status.message(), HasSubstr("input \"Start\" (variable \"s\") "
                                          "has dtype bool"));
}

}  // namespace
}  // namespace scopeflow
