// mod: both sign conventions on hand-computed values, broadcasting, the
// refusals, and its gradient checked numerically.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
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

std::string ModOp(int fmod) {
  return absl::StrFormat(R"pb(type: "mod"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Y" vars: "y" }
                              outputs { slot: "Out" vars: "out" }
                              attrs { name: "fmod" i: %d })pb",
                         fmod);
}

absl::StatusOr<Tensor> RunMod(int fmod, const Tensor& x, const Tensor& y) {
  auto out = RunOp(ModOp(fmod), {{"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(ModTest, IntegersTakeTheDivisorsSignByDefault) {
  // Python: [-4 % 3, 7 % -3, -7 % -3, 5 % 5, 8 % 3] = [2, -2, -1, 0, 2].
  auto out = RunMod(0, MakeTensor<int64_t>({5}, {-4, 7, -7, 5, 8}),
                    MakeTensor<int64_t>({5}, {3, -3, -3, 5, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(2, -2, -1, 0, 2));
}

TEST(ModTest, FmodTakesTheDividendsSign) {
  auto ints = RunMod(1, MakeTensor<int32_t>({4}, {-4, 7, -7, INT32_MIN}),
                     MakeTensor<int32_t>({4}, {3, -3, -3, -1}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values<int32_t>(*ints), ElementsAre(-1, 1, -1, 0));
  auto floats = RunMod(1, MakeTensor<double>({3}, {-4.5, 7.25, 5.0}),
                       MakeTensor<double>({3}, {2.0, -2.0, 2.5}));
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_THAT(Values<double>(*floats), ElementsAre(-0.5, 1.25, 0.0));
}

TEST(ModTest, Unsigned) {
  // 255 is not the -1 that signed types special-case.
  auto out = RunMod(0, MakeTensor<uint8_t>({3}, {200, 7, 254}),
                    MakeTensor<uint8_t>({3}, {255, 3, 255}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>(*out), ElementsAre(200, 1, 254));
}

TEST(ModTest, Broadcasts) {
  // x [2, 3] mod y [3].
  auto out = RunMod(0, MakeTensor<int32_t>({2, 3}, {5, 6, 7, -5, -6, -7}),
                    MakeTensor<int32_t>({3}, {2, 4, -3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(1, 2, -2, 1, 2, -1));
}

TEST(ModTest, Refusals) {
  auto float_floor =
      RunMod(0, MakeTensor<float>({1}, {1}), MakeTensor<float>({1}, {2}));
  ASSERT_FALSE(float_floor.ok());
  EXPECT_THAT(float_floor.status().message(),
              HasSubstr("op 0 (mod): floating-point inputs (float32) need "
                        "attribute \"fmod\" = 1"));
  auto zero = RunMod(0, MakeTensor<int32_t>({2}, {1, 2}),
                     MakeTensor<int32_t>({2}, {3, 0}));
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(),
              HasSubstr("input Y (y) holds a zero divisor at element 1"));
  auto bad_attr =
      RunMod(2, MakeTensor<int32_t>({1}, {1}), MakeTensor<int32_t>({1}, {2}));
  ASSERT_FALSE(bad_attr.ok());
  EXPECT_THAT(bad_attr.status().message(),
              HasSubstr("attribute \"fmod\" must be 0 or 1, got 2"));
}

TEST(ModTest, GradientChecksNumerically) {
  // Away from the jumps (x / y whole), with y broadcast over x's rows.
  const Tensor x = MakeTensor<double>({2, 3}, {5.3, -4.1, 7.7, -2.2, 3.4, 9.1});
  const Tensor y = MakeTensor<double>({3}, {2.0, 1.5, -2.5});
  absl::Status status =
      CheckGradientTogetherAndAlone(ModOp(1), {{"x", x}, {"y", y}}, {"x", "y"});
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace scopeflow
