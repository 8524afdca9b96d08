// The window op against hand-computed values of each window, periodic and
// symmetric, and its errors.
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

std::string WindowOp(const std::string& window, bool periodic,
                     DataType out_dtype = kFloat32) {
  return absl::StrCat(R"pb(type: "window"
                           inputs { slot: "Size" vars: "n" }
                           outputs { slot: "Out" vars: "y" }
                           attrs { name: "window" s: ")pb",
                      window, R"pb(" }
                           attrs { name: "periodic" b: )pb",
                      periodic ? "true" : "false", R"pb( }
                           attrs { name: "out_dtype" i: )pb",
                      static_cast<int>(out_dtype), " }");
}

absl::StatusOr<std::vector<Tensor>> RunWindow(const std::string& window,
                                              bool periodic, int64_t n) {
  return RunOp(WindowOp(window, periodic),
               {{"n", MakeTensor<int64_t>({}, {n})}}, {"y"});
}

constexpr float kTolerance = 1e-6f;

TEST(WindowTest, HannPeriodicAndSymmetric) {
  // Periodic, M = N = 4: 0.5 - 0.5 cos(pi n / 2).
  auto out = RunWindow("hann", true, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat32);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(FloatNear(0, kTolerance), FloatNear(0.5, kTolerance),
                          FloatNear(1, kTolerance),
                          FloatNear(0.5, kTolerance)));
  // Symmetric, M = N - 1 = 4: the same and 0 again at the end.
  out = RunWindow("hann", false, 5);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(FloatNear(0, kTolerance), FloatNear(0.5, kTolerance),
                          FloatNear(1, kTolerance), FloatNear(0.5, kTolerance),
                          FloatNear(0, kTolerance)));
}

TEST(WindowTest, HammingNeverReachesZero) {
  // 25/46 - 21/46 cos(pi n / 2): 4/46, 25/46, 1, 25/46.
  auto out = RunWindow("hamming", true, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(FloatNear(4.0 / 46, kTolerance),
                          FloatNear(25.0 / 46, kTolerance),
                          FloatNear(1, kTolerance),
                          FloatNear(25.0 / 46, kTolerance)));
}

TEST(WindowTest, BlackmanInFloat64) {
  // Periodic N = 4: 0.42 - 0.5 cos(pi n / 2) + 0.08 cos(pi n): 0, 0.34, 1,
  // 0.34.
  auto out = RunOp(WindowOp("blackman", true, kFloat64),
                   {{"n", MakeTensor<int32_t>({}, {4})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat64);
  EXPECT_THAT(Values<double>((*out)[0]),
              ElementsAre(DoubleNear(0, 1e-15), DoubleNear(0.34, 1e-15),
                          DoubleNear(1, 1e-15), DoubleNear(0.34, 1e-15)));
  // Symmetric N = 3, M = 2: 0, 1, 0.
  out = RunWindow("blackman", false, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(FloatNear(0, kTolerance), FloatNear(1, kTolerance),
                          FloatNear(0, kTolerance)));
}

TEST(WindowTest, EmptyAndOneElement) {
  auto out = RunWindow("hann", true, 0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), IsEmpty());
  // Periodic N = 1: cos(0) = 1, 0.5 - 0.5 = 0.
  out = RunWindow("hann", true, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.0f));
  // Symmetric N = 1: M = 0, and 0 / 0 is NaN, as ONNX defines it.
  out = RunWindow("hann", false, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(Values<float>((*out)[0])[0]));
}

TEST(WindowTest, BadSizeKindAndDtypeAreRefused) {
  auto out = RunWindow("hann", true, -2);
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"Size\" (variable \"n\") = -2: expected a "
                        "length >= 0"));
  out = RunOp(WindowOp("hann", true), {{"n", MakeTensor<float>({}, {4})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"Size\" (variable \"n\") has dtype float32"));
  out = RunOp(WindowOp("hann", true),
              {{"n", MakeTensor<int64_t>({2}, {4, 4})}}, {"y"});
  EXPECT_FALSE(out.ok());
  out = RunWindow("kaiser", true, 4);
  EXPECT_THAT(out.status().message(),
              HasSubstr("must be one of hann, hamming, blackman, got "
                        "\"kaiser\""));
  out = RunOp(WindowOp("hann", true, kInt32),
              {{"n", MakeTensor<int64_t>({}, {4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("must be float32 (1) or float64"));
}

}  // namespace
}  // namespace scopeflow
