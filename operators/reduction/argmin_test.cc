// argmin: hand-computed indices along inner and outer axes, ties, NaN and
// the empty-axis refusal.
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<Tensor> RunArgMin(const Tensor& x,
                                 const std::string& attrs = "") {
  auto out =
      RunOp(absl::StrCat("type: \"argmin\" inputs { slot: \"X\" vars: "
                         "\"x\" } outputs { slot: \"Out\" vars: \"y\" } ",
                         attrs),
            {{"x", x}}, {"y"});
  if (!out.ok()) return out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt64);
  return (*out)[0];
}

TEST(ArgMinTest, AlongEachAxis) {
  const Tensor x = MakeTensor<float>({2, 3}, {4, 1, 1, 0, 5, -2});
  auto rows = RunArgMin(x, "attrs { name: \"axis\" i64: 1 }");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<int64_t>(*rows), ElementsAre(1, 2));
  auto columns = RunArgMin(x, "attrs { name: \"keepdims\" b: false }");
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->dims(), ElementsAre(3));
  EXPECT_THAT(Values<int64_t>(*columns), ElementsAre(1, 0, 1));
}

TEST(ArgMinTest, TiesAndLastIndex) {
  const Tensor x = MakeTensor<int32_t>({5}, {3, 1, 2, 1, 4});
  auto first = RunArgMin(x);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(Values<int64_t>(*first), ElementsAre(1));
  auto last = RunArgMin(x, "attrs { name: \"select_last_index\" b: true }");
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_THAT(Values<int64_t>(*last), ElementsAre(3));
  // The same along an outer axis (the strided path).
  auto strided = RunArgMin(MakeTensor<int64_t>({3, 2}, {2, 7, 1, 7, 1, 9}),
                           "attrs { name: \"select_last_index\" b: true }");
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_THAT(Values<int64_t>(*strided), ElementsAre(2, 1));
}

TEST(ArgMinTest, NaNWins) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto out = RunArgMin(MakeTensor<double>({4}, {1, nan, -5, nan}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>(*out), ElementsAre(1));
}

TEST(ArgMinTest, EmptyAxisIsRefused) {
  auto out = RunArgMin(MakeTensor<float>({0, 3}, {}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("argmin along axis 0, of size 0"));
}

}  // namespace
}  // namespace scopeflow
