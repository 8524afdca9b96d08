#include "operators/nn/window.h"

#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

// WindowOutputSize's value, or -2 for an error.
int64_t Size(int64_t input, int64_t extent, int64_t pad_before,
             int64_t pad_after, int64_t stride, bool ceil_mode = false) {
  absl::StatusOr<int64_t> size =
      WindowOutputSize(input, extent, pad_before, pad_after, stride, ceil_mode);
  return size.ok() ? *size : -2;
}

TEST(WindowOutputSizeTest, Floor) {
  EXPECT_EQ(Size(5, 3, 0, 0, 1), 3);
  EXPECT_EQ(Size(5, 3, 1, 1, 1), 5);
  EXPECT_EQ(Size(5, 2, 0, 0, 2), 2);
  EXPECT_EQ(Size(3, 3, 0, 0, 4), 1);
  EXPECT_EQ(Size(2, 3, 0, 0, 1), 0);
  EXPECT_EQ(Size(2, 5, 1, 1, 2), 0);
  EXPECT_EQ(Size(-1, 3, 1, 1, 1), -1);
}

TEST(WindowOutputSizeTest, Ceil) {
  EXPECT_EQ(Size(5, 2, 0, 0, 2, /*ceil_mode=*/true), 3);
  EXPECT_EQ(Size(4, 2, 0, 0, 2, /*ceil_mode=*/true), 2);
  // A third window would start in the trailing padding.
  EXPECT_EQ(Size(3, 2, 1, 1, 2, /*ceil_mode=*/true), 2);
  EXPECT_EQ(Size(2, 3, 0, 0, 1, /*ceil_mode=*/true), 0);
}

TEST(WindowOutputSizeTest, HugeSizes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // Exact up to the largest count int64 holds.
  EXPECT_EQ(Size(kMax, 1, 0, 0, 1), kMax);
  EXPECT_EQ(Size(kMax, 3, 1, 1, 1), kMax);
  EXPECT_EQ(Size(kMax, kMax, 0, 0, 3), 1);
  EXPECT_EQ(Size(kMax, 1, 0, 0, 2, /*ceil_mode=*/true), kMax / 2 + 1);
  EXPECT_EQ(Size(kMax, 1, 0, 0, kMax - 1, /*ceil_mode=*/true), 2);
  // The second window would start in the trailing padding, and a third one
  // beyond int64.
  EXPECT_EQ(Size(kMax - 1, 1, 0, 1, kMax - 1, /*ceil_mode=*/true), 1);
  EXPECT_EQ(Size(kMax - 1, 1, 0, 0, int64_t{1} << 62, /*ceil_mode=*/true), 2);
  // Beyond it: the count, the padded input.
  EXPECT_THAT(WindowOutputSize(kMax, 1, 1, 0, 1).status().message(),
              ::testing::HasSubstr(
                  "a window of 1 cells moving by 1 over 9223372036854775807 "
                  "cells padded by 1 and 0 makes sizes beyond int64"));
  EXPECT_EQ(Size(kMax, 1, 1, 1, 2), -2);
  EXPECT_EQ(Size(kMax, 2, 2, 2, 3, /*ceil_mode=*/true), -2);
}

TEST(WindowAttrTest, Paddings) {
  const Padding2d two = PaddingOf({1, 2});
  EXPECT_EQ(PaddingToString(two), "[1, 1, 2, 2]");
  const Padding2d four = PaddingOf({1, 2, 3, 4});
  EXPECT_EQ(PaddingToString(four), "[1, 2, 3, 4]");
  EXPECT_TRUE(PaddingList()(AttrValue(std::vector<int32_t>{0, 1, 2, 3})).ok());
  EXPECT_THAT(PaddingList()(AttrValue(std::vector<int32_t>{1, 2, 3})).message(),
              ::testing::HasSubstr("must hold 2 values [pad_h, pad_w] or 4 "
                                   "values [top, bottom, left, right], got "
                                   "[1, 2, 3]"));
  EXPECT_FALSE(PositivePair()(AttrValue(std::vector<int32_t>{1, 0})).ok());
  EXPECT_TRUE(PositivePair()(AttrValue(std::vector<int32_t>{1, 2})).ok());
}

}  // namespace
}  // namespace scopeflow
