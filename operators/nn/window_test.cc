#include "operators/nn/window.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

TEST(WindowOutputSizeTest, Floor) {
  EXPECT_EQ(WindowOutputSize(5, 3, 0, 0, 1), 3);
  EXPECT_EQ(WindowOutputSize(5, 3, 1, 1, 1), 5);
  EXPECT_EQ(WindowOutputSize(5, 2, 0, 0, 2), 2);
  EXPECT_EQ(WindowOutputSize(3, 3, 0, 0, 4), 1);
  EXPECT_EQ(WindowOutputSize(2, 3, 0, 0, 1), 0);
  EXPECT_EQ(WindowOutputSize(2, 5, 1, 1, 2), 0);
  EXPECT_EQ(WindowOutputSize(-1, 3, 1, 1, 1), -1);
}

TEST(WindowOutputSizeTest, Ceil) {
  EXPECT_EQ(WindowOutputSize(5, 2, 0, 0, 2, /*ceil_mode=*/true), 3);
  EXPECT_EQ(WindowOutputSize(4, 2, 0, 0, 2, /*ceil_mode=*/true), 2);
  // A third window would start in the trailing padding.
  EXPECT_EQ(WindowOutputSize(3, 2, 1, 1, 2, /*ceil_mode=*/true), 2);
  EXPECT_EQ(WindowOutputSize(2, 3, 0, 0, 1, /*ceil_mode=*/true), 0);
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
