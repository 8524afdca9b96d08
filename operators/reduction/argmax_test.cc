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

std::string ArgMaxOp(const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"argmax\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"y\" } ",
      attrs);
}

absl::StatusOr<Tensor> RunArgMax(const Tensor& x,
                                 const std::string& attrs = "") {
  auto out = RunOp(ArgMaxOp(attrs), {{"x", x}}, {"y"});
  if (!out.ok()) return out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt64);
  return (*out)[0];
}

TEST(ArgMaxTest, AxisZeroKeepsDimsByDefault) {
  auto y = RunArgMax(MakeTensor<float>({2, 3}, {1, 3, 3, 3, 3, 1}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 3));
  // Column 1 ties: the first index wins.
  EXPECT_THAT(Values<int64_t>(*y), ElementsAre(1, 0, 0));
}

TEST(ArgMaxTest, LastAxisWithoutKeepDims) {
  auto y = RunArgMax(MakeTensor<double>({2, 3}, {1, 3, 3, 3, 3, 1}),
                     R"pb(attrs { name: "axis" i: -1 }
                          attrs { name: "keepdims" b: false })pb");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(2));
  EXPECT_THAT(Values<int64_t>(*y), ElementsAre(1, 0));
  auto kept = RunArgMax(MakeTensor<int32_t>({2, 3}, {-5, -2, -9, 7, 8, 9}),
                        R"pb(attrs { name: "axis" i: 1 })pb");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(kept->dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<int64_t>(*kept), ElementsAre(1, 2));
}

TEST(ArgMaxTest, MiddleAxisMatchesReference) {
  const int outer = 3, size = 5, inner = 7;
  std::vector<int64_t> x(outer * size * inner);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i * 37) % 11;  // with ties
  auto y = RunArgMax(MakeTensor<int64_t>({outer, size, inner}, x),
                     R"pb(attrs { name: "axis" i: 1 }
                          attrs { name: "keepdims" b: false })pb");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(outer, inner));
  for (int o = 0; o < outer; ++o) {
    for (int i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int k = 1; k < size; ++k) {
        if (x[(o * size + k) * inner + i] > x[(o * size + best) * inner + i]) {
          best = k;
        }
      }
      EXPECT_EQ(Values<int64_t>(*y)[o * inner + i], best);
    }
  }
}

TEST(ArgMaxTest, FirstNaNWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = RunArgMax(MakeTensor<float>({5}, {1, 9, nan, 5, nan}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1));
  EXPECT_THAT(Values<int64_t>(*y), ElementsAre(2));
}

TEST(ArgMaxTest, SelectLastIndexPicksTheLastOfTies) {
  constexpr char kLast[] = R"pb(attrs { name: "select_last_index" b: true })pb";
  // Rows [1, 3, 3] and [3, 3, 1] along the last axis (contiguous).
  auto rows =
      RunArgMax(MakeTensor<float>({2, 3}, {1, 3, 3, 3, 3, 1}),
                absl::StrCat(kLast, R"pb(attrs { name: "axis" i: 1 })pb"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<int64_t>(*rows), ElementsAre(2, 1));
  // Columns along axis 0 (strided): [1, 3], [3, 3], [3, 1].
  auto columns =
      RunArgMax(MakeTensor<int64_t>({2, 3}, {1, 3, 3, 3, 3, 1}), kLast);
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(Values<int64_t>(*columns), ElementsAre(1, 1, 0));
  // Without ties it changes nothing.
  auto distinct = RunArgMax(MakeTensor<int32_t>({4}, {2, 8, -1, 5}), kLast);
  ASSERT_TRUE(distinct.ok()) << distinct.status();
  EXPECT_THAT(Values<int64_t>(*distinct), ElementsAre(1));
}

TEST(ArgMaxTest, SelectLastIndexTakesTheLastNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = MakeTensor<double>({6}, {1, nan, 9, nan, 9, 5});
  auto last =
      RunArgMax(x, R"pb(attrs { name: "select_last_index" b: true })pb");
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_THAT(Values<int64_t>(*last), ElementsAre(3));
  // A NaN after the last maximum still wins.
  auto strided =
      RunArgMax(MakeTensor<float>({3, 2}, {7, 1, 7, 1, nan, 1}),
                R"pb(attrs { name: "select_last_index" b: true })pb");
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_THAT(Values<int64_t>(*strided), ElementsAre(2, 2));
}

TEST(ArgMaxTest, ErrorsNameOpAndVariable) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::Status axis =
      PrepareOp(ArgMaxOp(R"pb(attrs { name: "axis" i: 2 })pb"), {{"x", x}});
  EXPECT_THAT(axis.message(),
              HasSubstr("op 0 (argmax): input \"X\" (variable \"x\", shape "
                        "[2, 3]): attribute \"axis\" = 2 is out of range for "
                        "rank 2 (expected [-2, 2))"));
  absl::Status dtype =
      PrepareOp(ArgMaxOp(), {{"x", MakeTensor<bool>({2}, {true, false})}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (argmax): input \"X\" (variable \"x\") has "
                        "dtype bool: expected float32, float64, int32 or "
                        "int64"));
  absl::Status empty =
      PrepareOp(ArgMaxOp(), {{"x", MakeTensor<float>({0, 3}, {})}});
  EXPECT_THAT(empty.message(),
              HasSubstr("op 0 (argmax): input \"X\" (variable \"x\", shape "
                        "[0, 3]): argmax along axis 0, of size 0 (expected a "
                        "non-empty axis)"));
  // An empty output needs no maximum.
  auto nothing = RunArgMax(MakeTensor<float>({3, 0}, {}));
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_THAT(nothing->dims(), ElementsAre(1, 0));
}

}  // namespace
}  // namespace scopeflow
