// reduce_min, reduce_prod, reduce_l1, reduce_l2 and reduce_log_sum_exp:
// hand-computed values over inner, outer and all axes, their identities
// over no elements, and every gradient checked numerically.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

std::string ReduceOp(const std::string& type, const std::string& attrs) {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"out\" } ",
                      attrs);
}

absl::StatusOr<Tensor> RunReduce(const std::string& type, const Tensor& x,
                                 const std::string& attrs) {
  auto out = RunOp(ReduceOp(type, attrs), {{"x", x}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

constexpr char kAxis1[] = "attrs { name: \"axes\" ints { values: [1] } }";
constexpr char kAxis0Keep[] =
    "attrs { name: \"axes\" ints { values: [0] } } attrs { name: \"keep_dim\" "
    "b: true }";

// x = [[1, -2, 3], [-4, 0, 2]].
Tensor X() { return MakeTensor<double>({2, 3}, {1, -2, 3, -4, 0, 2}); }

// Bool min is "all" and bool max "any" (ONNX ReduceMin and ReduceMax on
// masks); the narrower integers keep their own order.
TEST(ReduceMoreTest, MinAndMaxOfBoolsAndNarrowIntegers) {
  const Tensor mask =
      MakeTensor<bool>({2, 3}, {true, false, true, true, true, true});
  auto all = RunReduce("reduce_min", mask, kAxis1);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->dtype(), kBool);
  EXPECT_THAT(Values<bool>(*all), ElementsAre(false, true));
  auto any = RunReduce("reduce_max",
                       MakeTensor<bool>({2, 2}, {false, false, false, true}),
                       kAxis1);
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_THAT(Values<bool>(*any), ElementsAre(false, true));
  auto min8 = RunReduce("reduce_min",
                        MakeTensor<int8_t>({2, 2}, {-128, 127, 5, -3}), kAxis1);
  ASSERT_TRUE(min8.ok()) << min8.status();
  EXPECT_THAT(Values<int8_t>(*min8), ElementsAre(-128, -3));
  auto max64 = RunReduce(
      "reduce_max", MakeTensor<uint64_t>({1, 2}, {uint64_t{1} << 63, 1}),
      kAxis1);
  ASSERT_TRUE(max64.ok()) << max64.status();
  EXPECT_THAT(Values<uint64_t>(*max64), ElementsAre(uint64_t{1} << 63));
}

TEST(ReduceMoreTest, Values) {
  struct Case {
    std::string op;
    std::string attrs;
    std::vector<int64_t> dims;
    std::vector<double> expected;
  };
  const double lse_row0 =
      std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(3.0));
  const double lse_row1 = std::log(std::exp(-4.0) + 1 + std::exp(2.0));
  const std::vector<Case> cases = {
      {"reduce_min", kAxis1, {2}, {-2, -4}},
      {"reduce_min", kAxis0Keep, {1, 3}, {-4, -2, 2}},
      {"reduce_prod", kAxis1, {2}, {-6, 0}},
      {"reduce_prod", "", {}, {0}},
      {"reduce_l1", kAxis1, {2}, {6, 6}},
      {"reduce_l1", kAxis0Keep, {1, 3}, {5, 2, 5}},
      {"reduce_l2", kAxis1, {2}, {std::sqrt(14.0), std::sqrt(20.0)}},
      {"reduce_log_sum_exp", kAxis1, {2}, {lse_row0, lse_row1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs);
    auto out = RunReduce(c.op, X(), c.attrs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(std::vector<int64_t>(out->dims().begin(), out->dims().end()),
              c.dims);
    EXPECT_THAT(Values<double>(*out), Pointwise(DoubleNear(1e-12), c.expected));
  }
}

TEST(ReduceMoreTest, LogSumExpDoesNotOverflow) {
  auto out =
      RunReduce("reduce_log_sum_exp", MakeTensor<float>({2}, {1000, 1000}), "");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR(Values<float>(*out)[0], 1000 + std::log(2.0), 1e-3);
}

TEST(ReduceMoreTest, IntegersAndNoElements) {
  auto prod =
      RunReduce("reduce_prod", MakeTensor<int32_t>({3}, {-2, 3, 7}), "");
  ASSERT_TRUE(prod.ok()) << prod.status();
  EXPECT_THAT(Values<int32_t>(*prod), ElementsAre(-42));
  auto l1 = RunReduce("reduce_l1", MakeTensor<int64_t>({3}, {-2, 3, -7}), "");
  ASSERT_TRUE(l1.ok()) << l1.status();
  EXPECT_THAT(Values<int64_t>(*l1), ElementsAre(12));
  // Over an empty axis: the identities.
  const Tensor empty = MakeTensor<float>({2, 0}, {});
  auto empty_prod = RunReduce("reduce_prod", empty, kAxis1);
  ASSERT_TRUE(empty_prod.ok()) << empty_prod.status();
  EXPECT_THAT(Values<float>(*empty_prod), ElementsAre(1, 1));
  auto empty_l2 = RunReduce("reduce_l2", empty, kAxis1);
  ASSERT_TRUE(empty_l2.ok()) << empty_l2.status();
  EXPECT_THAT(Values<float>(*empty_l2), ElementsAre(0, 0));
  auto empty_lse = RunReduce("reduce_log_sum_exp", empty, kAxis1);
  ASSERT_TRUE(empty_lse.ok()) << empty_lse.status();
  EXPECT_EQ(Values<float>(*empty_lse)[0],
            -std::numeric_limits<float>::infinity());
  // ONNX ReduceMin 18, 20: +inf, or the type's largest value.
  auto empty_min = RunReduce("reduce_min", empty, kAxis1);
  ASSERT_TRUE(empty_min.ok()) << empty_min.status();
  EXPECT_THAT(Values<float>(*empty_min),
              ElementsAre(std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::infinity()));
  auto empty_int_min =
      RunReduce("reduce_min", MakeTensor<int32_t>({2, 0}, {}), kAxis1);
  ASSERT_TRUE(empty_int_min.ok()) << empty_int_min.status();
  EXPECT_THAT(Values<int32_t>(*empty_int_min),
              ElementsAre(std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<int32_t>::max()));
  auto empty_max = RunReduce("reduce_max", empty, kAxis1);
  ASSERT_FALSE(empty_max.ok());
  EXPECT_THAT(empty_max.status().message(),
              HasSubstr("reduces an axis of size 0"));
  auto int_l2 = RunReduce("reduce_l2", MakeTensor<int32_t>({1}, {3}), "");
  ASSERT_FALSE(int_l2.ok());
  EXPECT_THAT(int_l2.status().message(), HasSubstr("reduce_l2"));
}

TEST(ReduceMoreTest, GradientsCheckNumerically) {
  // Distinct values away from 0 and from ties.
  const Tensor x = MakeTensor<double>(
      {2, 3, 2},
      {0.5, -1.2, 2.1, -0.7, 1.4, 0.9, -1.8, 0.3, 1.1, -0.4, 2.6, -2.3});
  for (const char* op : {"reduce_min", "reduce_prod", "reduce_l1", "reduce_l2",
                         "reduce_log_sum_exp"}) {
    for (const char* attrs :
         {"", "attrs { name: \"axes\" ints { values: [1] } }",
          "attrs { name: \"axes\" ints { values: [0, 2] } } attrs { "
          "name: \"keep_dim\" b: true }"}) {
      SCOPED_TRACE(absl::StrCat(op, " ", attrs));
      absl::Status status = CheckGradient(ReduceOp(op, attrs), {{"x", x}});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(ReduceMoreTest, ProdGradientWithZeros) {
  // One zero: it gets the product of the others; two zeros: all 0.
  const Tensor x = MakeTensor<double>({2, 3}, {2, 0, 3, 0, 5, 0});
  GradCheckOptions options;
  absl::Status status =
      CheckGradient(ReduceOp("reduce_prod", kAxis1), {{"x", x}}, options);
  EXPECT_TRUE(status.ok()) << status;
}

// Over an empty axis the forward gives the identity and the gradient is
// as empty as X (reduce_max refuses to make such an Out itself).
TEST(ReduceMoreTest, MinGradientOfNoElementsIsEmpty) {
  const float inf = std::numeric_limits<float>::infinity();
  auto dx = RunOp(R"pb(type: "reduce_min_grad"
                       inputs { slot: "X" vars: "x" }
                       inputs { slot: "Out" vars: "out" }
                       inputs { slot: "Out@GRAD" vars: "g" }
                       outputs { slot: "X@GRAD" vars: "dx" }
                       attrs { name: "axes" ints { values: [ 1 ] } })pb",
                  {{"x", MakeTensor<float>({2, 0}, {})},
                   {"out", MakeTensor<float>({2}, {inf, inf})},
                   {"g", MakeTensor<float>({2}, {1, 2})}},
                  {"dx"});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT((*dx)[0].dims(), ElementsAre(2, 0));
}

}  // namespace
}  // namespace scopeflow
