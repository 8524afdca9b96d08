// The unique op against numpy.unique's results (return_index,
// return_inverse, return_counts; the unsorted order by hand), with and
// without an axis, and its errors.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string UniqueOp(bool sorted, bool flatten = true, int axis = 0) {
  return absl::StrCat(
      R"pb(type: "unique"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" }
           outputs { slot: "Indices" vars: "first" }
           outputs { slot: "InverseIndices" vars: "inverse" }
           outputs { slot: "Counts" vars: "counts" }
           attrs { name: "sorted" b:)pb",
      sorted ? "true" : "false", R"pb(}
                                      attrs { name: "flatten" b: )pb",
      flatten ? "true" : "false", R"pb(}
                                       attrs { name: "axis" i: )pb",
      axis, " }");
}

const std::vector<std::string> kFetches = {"y", "first", "inverse", "counts"};

TEST(UniqueTest, SortedAndInOrderOfFirstOccurrence) {
  const Tensor x = MakeTensor<float>({2, 3}, {2, 1, 1, 3, 4, 3});
  // np.unique(x, return_index=True, return_inverse=True, return_counts=True)
  auto out = RunOp(UniqueOp(true), {{"x", x}}, kFetches);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 0, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(1, 0, 0, 2, 3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(2, 1, 2, 1));
  // Unsorted: 2 first, then 1, 3, 4.
  out = RunOp(UniqueOp(false), {{"x", x}}, kFetches);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(1, 2, 2, 1));
}

TEST(UniqueTest, SlicesAlongAnAxis) {
  // Columns of [[1, 0, 0], [1, 0, 0], [2, 3, 3]]: [1, 1, 2], [0, 0, 3]
  // twice. np.unique(x, axis=1, ...) (-1 here).
  auto out =
      RunOp(UniqueOp(true, false, -1),
            {{"x", MakeTensor<int64_t>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 3})}},
            kFetches);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(0, 1, 0, 1, 3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 0));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(1, 0, 0));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(2, 1));
  // The middle axis of [2, 4, 2]: slice j is x[:, j, :], compared in
  // row-major order. np.unique(x, axis=1, ...).
  out = RunOp(UniqueOp(true, false, 1),
              {{"x", MakeTensor<double>({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1,  //
                                                    1, 1, 0, 1, 2, 1, 0, 1})}},
              kFetches);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3, 2));
  EXPECT_THAT(Values<double>((*out)[0]),
              ElementsAre(0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 0, 2));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(1, 0, 2, 0));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(2, 1, 1));
}

TEST(UniqueTest, NansAreOneValueSortedLast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunOp(UniqueOp(true),
                   {{"x", MakeTensor<float>({4}, {nan, 1, nan, 0})}}, kFetches);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 1);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(1, 1, 2));
}

TEST(UniqueTest, CountUnknownUntilRunTime) {
  auto info =
      InferAtPrepare(UniqueOp(true, false, 0), {{"x", kFloat32, {5, 3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 3));
  info = InferAtPrepare(UniqueOp(true, false, 0), {{"x", kFloat32, {5, 3}}},
                        "inverse");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(5));
}

TEST(UniqueTest, BadAxisAndDtypeAreNamed) {
  auto out = RunOp(UniqueOp(true, false, 2),
                   {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})}}, kFetches);
  EXPECT_THAT(out.status().message(),
              HasSubstr("attribute \"axis\" = 2 is out of range for input "
                        "\"X\" (variable \"x\", shape [2, 2]): expected [-2, "
                        "2)"));
  out = RunOp(UniqueOp(true), {{"x", MakeTensor<bool>({2}, {true, false})}},
              kFetches);
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"X\" (variable \"x\") has dtype bool"));
}

}  // namespace
}  // namespace scopeflow
