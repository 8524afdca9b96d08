// non_zero: hand-computed indices for several ranks and dtypes, the count
// unknown at Prepare, and no gradient.
#include <cstdint>
#include <limits>
#include <string>

#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

constexpr char kNonZero[] =
    "type: \"non_zero\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
    "\"Out\" vars: \"y\" }";

absl::StatusOr<Tensor> NonZero(const Tensor& x) {
  auto out = RunOp(kNonZero, {{"x", x}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(NonZeroTest, RowMajorIndices) {
  // ONNX's example: [[1, 0], [1, 1]] (bool) has nonzeros at (0, 0), (1, 0)
  // and (1, 1).
  auto out = NonZero(MakeTensor<bool>({2, 2}, {true, false, true, true}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), kInt64);
  EXPECT_THAT(out->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(0, 1, 1, 0, 0, 1));
  // Rank 3, floats: NaN and -5 count, 0 and -0 do not.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  out = NonZero(MakeTensor<float>({2, 1, 3}, {0, nan, -0.0f, -5, 0, 0.25f}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(3, 3));
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(0, 1, 1, 0, 0, 0, 1, 0, 2));
}

TEST(NonZeroTest, IntegersScalarsAndNone) {
  auto out = NonZero(MakeTensor<int64_t>({5}, {0, 3, 0, 0, -1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(1, 2));
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(1, 4));
  out = NonZero(MakeTensor<int32_t>({2, 2}, {0, 0, 0, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 0));
  // A scalar is one element of a rank-1 tensor, as numpy has it.
  out = NonZero(MakeTensor<double>({}, {2.5}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(1, 1));
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(0));
  out = NonZero(MakeTensor<uint8_t>({3}, {0, 7, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(1));
}

TEST(NonZeroTest, CountUnknownAtPrepareAndNoGradient) {
  auto info = InferAtPrepare(kNonZero, {{"x", kFloat32, {4, -1, 2}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->dtype, kInt64);
  EXPECT_THAT(info->dims, ElementsAre(3, -1));
  const OpSpec* spec = OpRegistry::Global().Find("non_zero");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->grad(), nullptr);
}

}  // namespace
}  // namespace scopeflow
