#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string CompareOp(const std::string& type) {
  return absl::StrFormat(R"pb(type: "%s"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Y" vars: "y" }
                              outputs { slot: "Out" vars: "out" })pb",
                         type);
}

absl::StatusOr<Tensor> RunCompare(const std::string& type, const Tensor& x,
                                  const Tensor& y) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(CompareOp(type), {{"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

constexpr char kWhere[] = R"pb(type: "where"
                               inputs { slot: "Condition" vars: "c" }
                               inputs { slot: "X" vars: "x" }
                               inputs { slot: "Y" vars: "y" }
                               outputs { slot: "Out" vars: "out" })pb";

absl::StatusOr<Tensor> RunWhere(const Tensor& c, const Tensor& x,
                                const Tensor& y) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp(kWhere, {{"c", c}, {"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(CompareTest, EveryOpAndDtype) {
  struct Case {
    std::string op;
    std::vector<bool> expected;  // for x = {1, 2, 3}, y = {2, 2, 2}
  };
  const std::vector<Case> cases = {
      {"equal", {false, true, false}},
      {"less", {true, false, false}},
      {"greater", {false, false, true}},
      {"less_equal", {true, true, false}},
      {"greater_equal", {false, true, true}},
  };
  const std::vector<std::pair<Tensor, Tensor>> inputs = {
      {MakeTensor<float>({3}, {1, 2, 3}), MakeTensor<float>({3}, {2, 2, 2})},
      {MakeTensor<double>({3}, {1, 2, 3}), MakeTensor<double>({3}, {2, 2, 2})},
      {MakeTensor<int32_t>({3}, {1, 2, 3}),
       MakeTensor<int32_t>({3}, {2, 2, 2})},
      {MakeTensor<int64_t>({3}, {1, 2, 3}),
       MakeTensor<int64_t>({3}, {2, 2, 2})},
  };
  for (const Case& c : cases) {
    for (const auto& [x, y] : inputs) {
      SCOPED_TRACE(absl::StrFormat("%s on %s", c.op, DataTypeName(x.dtype())));
      auto out = RunCompare(c.op, x, y);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->dtype(), kBool);
      EXPECT_THAT(out->dims(), ElementsAre(3));
      EXPECT_EQ(Values<bool>(*out), c.expected);
    }
  }
}

TEST(CompareTest, EqualOnBool) {
  auto out =
      RunCompare("equal", MakeTensor<bool>({4}, {true, true, false, false}),
                 MakeTensor<bool>({4}, {true, false, true, false}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<bool>(*out), ElementsAre(true, false, false, true));
}

TEST(CompareTest, NanComparesFalse) {
  const float nan = std::nanf("");
  for (const std::string op :
       {"equal", "less", "greater", "less_equal", "greater_equal"}) {
    SCOPED_TRACE(op);
    auto out = RunCompare(op, MakeTensor<float>({2}, {nan, 1}),
                          MakeTensor<float>({2}, {nan, nan}));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<bool>(*out), ElementsAre(false, false));
  }
}

TEST(CompareTest, Broadcasting) {
  // [2, 3] with [3].
  auto row = RunCompare("less", MakeTensor<int32_t>({2, 3}, {1, 5, 3, 4, 2, 6}),
                        MakeTensor<int32_t>({3}, {2, 2, 4}));
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(row->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<bool>(*row),
              ElementsAre(true, false, true, false, false, false));
  // [2, 1] with [1, 3].
  auto outer = RunCompare("greater", MakeTensor<float>({2, 1}, {1, 3}),
                          MakeTensor<float>({1, 3}, {0, 2, 4}));
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_THAT(outer->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<bool>(*outer),
              ElementsAre(true, false, false, true, true, false));
  // Scalar with [2, 2].
  auto scalar = RunCompare("equal", MakeTensor<int64_t>({}, {3}),
                           MakeTensor<int64_t>({2, 2}, {3, 1, 2, 3}));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_THAT(scalar->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<bool>(*scalar), ElementsAre(true, false, false, true));
  // Rank 3: [2, 1, 2] with [3, 1] gives [2, 3, 2].
  auto rank3 = RunCompare("less", MakeTensor<double>({2, 1, 2}, {0, 5, 10, 15}),
                          MakeTensor<double>({3, 1}, {1, 6, 12}));
  ASSERT_TRUE(rank3.ok()) << rank3.status();
  EXPECT_THAT(rank3->dims(), ElementsAre(2, 3, 2));
  EXPECT_THAT(Values<bool>(*rank3),
              ElementsAre(true, false, true, true, true, true,  //
                          false, false, false, false, true, false));
}

TEST(CompareTest, OrEqualBroadcasting) {
  // [2, 1] with [3]: 2 and 3 against 1, 2 and 4.
  const Tensor x = MakeTensor<int64_t>({2, 1}, {2, 3});
  const Tensor y = MakeTensor<int64_t>({3}, {1, 2, 4});
  auto less_equal = RunCompare("less_equal", x, y);
  ASSERT_TRUE(less_equal.ok()) << less_equal.status();
  EXPECT_EQ(less_equal->dtype(), kBool);
  EXPECT_THAT(less_equal->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<bool>(*less_equal),
              ElementsAre(false, true, true, false, false, true));
  auto greater_equal = RunCompare("greater_equal", x, y);
  ASSERT_TRUE(greater_equal.ok()) << greater_equal.status();
  EXPECT_THAT(Values<bool>(*greater_equal),
              ElementsAre(true, true, false, true, true, false));
  // A float scalar against a row, with infinities.
  const float inf = INFINITY;
  auto scalar = RunCompare("greater_equal", MakeTensor<float>({}, {0.5f}),
                           MakeTensor<float>({4}, {-inf, 0.5f, 0.75f, inf}));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_THAT(scalar->dims(), ElementsAre(4));
  EXPECT_THAT(Values<bool>(*scalar), ElementsAre(true, true, false, false));
}

TEST(CompareTest, Errors) {
  absl::Status dtypes =
      PrepareOp(CompareOp("equal"), {{"x", MakeTensor<float>({2}, {1, 2})},
                                     {"y", MakeTensor<double>({2}, {1, 2})}});
  EXPECT_THAT(dtypes.message(),
              HasSubstr("op 0 (equal): inputs \"X\" (variable \"x\", "
                        "float32) and \"Y\" (variable \"y\", float64) must "
                        "have one dtype"));
  absl::Status shapes =
      PrepareOp(CompareOp("less"), {{"x", MakeTensor<int32_t>({2, 3}, {})},
                                    {"y", MakeTensor<int32_t>({3, 2}, {})}});
  EXPECT_THAT(shapes.message(),
              HasSubstr("op 0 (less): inputs \"X\" (variable \"x\", shape "
                        "[2, 3]), \"Y\" (variable \"y\", shape [3, 2]) do not "
                        "broadcast together"));
  absl::Status no_bool_order =
      PrepareOp(CompareOp("greater"), {{"x", MakeTensor<bool>({1}, {true})},
                                       {"y", MakeTensor<bool>({1}, {false})}});
  EXPECT_THAT(no_bool_order.message(),
              HasSubstr("op 0 (greater): no kernel for dtype bool"));
  absl::Status or_equal_dtypes = PrepareOp(
      CompareOp("less_equal"), {{"x", MakeTensor<int32_t>({2}, {1, 2})},
                                {"y", MakeTensor<int64_t>({2}, {1, 2})}});
  EXPECT_THAT(or_equal_dtypes.message(),
              HasSubstr("op 0 (less_equal): inputs \"X\" (variable \"x\", "
                        "int32) and \"Y\" (variable \"y\", int64) must have "
                        "one dtype"));
  absl::Status or_equal_shapes = PrepareOp(
      CompareOp("greater_equal"),
      {{"x", MakeTensor<float>({2}, {})}, {"y", MakeTensor<float>({3}, {})}});
  EXPECT_THAT(or_equal_shapes.message(),
              HasSubstr("op 0 (greater_equal): inputs \"X\" (variable \"x\", "
                        "shape [2]), \"Y\" (variable \"y\", shape [3]) do "
                        "not broadcast together"));
  absl::Status missing =
      PrepareOp(R"pb(type: "equal"
                     inputs { slot: "Y" vars: "y" }
                     outputs { slot: "Out" vars: "out" })pb",
                {{"y", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(missing.message(),
              HasSubstr("op 0 (equal): missing required input \"X\""));
}

TEST(WhereTest, SameShapes) {
  const Tensor c = MakeTensor<bool>({2, 2}, {true, false, false, true});
  auto out = RunWhere(c, MakeTensor<float>({2, 2}, {1, 2, 3, 4}),
                      MakeTensor<float>({2, 2}, {-1, -2, -3, -4}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), kFloat32);
  EXPECT_THAT(out->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>(*out), ElementsAre(1, -2, -3, 4));
}

TEST(WhereTest, EveryDtype) {
  const Tensor c = MakeTensor<bool>({3}, {false, true, false});
  auto f64 = RunWhere(c, MakeTensor<double>({3}, {1, 2, 3}),
                      MakeTensor<double>({3}, {4, 5, 6}));
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT(Values<double>(*f64), ElementsAre(4, 2, 6));
  auto i32 = RunWhere(c, MakeTensor<int32_t>({3}, {1, 2, 3}),
                      MakeTensor<int32_t>({3}, {4, 5, 6}));
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>(*i32), ElementsAre(4, 2, 6));
  auto i64 = RunWhere(c, MakeTensor<int64_t>({3}, {1, 2, 3}),
                      MakeTensor<int64_t>({3}, {4, 5, 6}));
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_EQ(i64->dtype(), kInt64);
  EXPECT_THAT(Values<int64_t>(*i64), ElementsAre(4, 2, 6));
  auto b = RunWhere(c, MakeTensor<bool>({3}, {true, true, true}),
                    MakeTensor<bool>({3}, {false, false, false}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), kBool);
  EXPECT_THAT(Values<bool>(*b), ElementsAre(false, true, false));
}

TEST(WhereTest, Broadcasting) {
  // Condition [2, 1], X [3], Y scalar: [2, 3].
  auto out = RunWhere(MakeTensor<bool>({2, 1}, {true, false}),
                      MakeTensor<int32_t>({3}, {1, 2, 3}),
                      MakeTensor<int32_t>({}, {0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(1, 2, 3, 0, 0, 0));
  // Condition [3], X [2, 3], Y [2, 1].
  auto row = RunWhere(MakeTensor<bool>({3}, {true, false, true}),
                      MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                      MakeTensor<float>({2, 1}, {-1, -2}));
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(Values<float>(*row), ElementsAre(1, -1, 3, 4, -2, 6));
  // Rank 3: Condition [2, 1, 1], X [1, 2, 1], Y [1, 1, 2]: [2, 2, 2].
  auto rank3 = RunWhere(MakeTensor<bool>({2, 1, 1}, {true, false}),
                        MakeTensor<int64_t>({1, 2, 1}, {10, 20}),
                        MakeTensor<int64_t>({1, 1, 2}, {-1, -2}));
  ASSERT_TRUE(rank3.ok()) << rank3.status();
  EXPECT_THAT(rank3->dims(), ElementsAre(2, 2, 2));
  EXPECT_THAT(Values<int64_t>(*rank3),
              ElementsAre(10, 10, 20, 20, -1, -2, -1, -2));
  // Only the condition is full size: [2, 2] with scalar X and Y.
  auto mask =
      RunWhere(MakeTensor<bool>({2, 2}, {true, false, false, true}),
               MakeTensor<double>({1}, {1}), MakeTensor<double>({}, {0}));
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_THAT(mask->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<double>(*mask), ElementsAre(1, 0, 0, 1));
  // Only the condition varies along the inner dimension.
  auto inner = RunWhere(MakeTensor<bool>({1, 3}, {true, false, true}),
                        MakeTensor<int32_t>({2, 1}, {1, 2}),
                        MakeTensor<int32_t>({2, 1}, {-1, -2}));
  ASSERT_TRUE(inner.ok()) << inner.status();
  EXPECT_THAT(inner->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int32_t>(*inner), ElementsAre(1, -1, 1, 2, -2, 2));
}

TEST(WhereTest, Errors) {
  absl::Status condition =
      PrepareOp(kWhere, {{"c", MakeTensor<int32_t>({2}, {1, 0})},
                         {"x", MakeTensor<float>({2}, {1, 2})},
                         {"y", MakeTensor<float>({2}, {3, 4})}});
  EXPECT_THAT(condition.message(),
              HasSubstr("op 0 (where): input \"Condition\" (variable \"c\") "
                        "has dtype int32: expected bool"));
  absl::Status dtypes =
      PrepareOp(kWhere, {{"c", MakeTensor<bool>({2}, {true, false})},
                         {"x", MakeTensor<float>({2}, {1, 2})},
                         {"y", MakeTensor<int64_t>({2}, {3, 4})}});
  EXPECT_THAT(dtypes.message(),
              HasSubstr("op 0 (where): inputs \"X\" (variable \"x\", "
                        "float32) and \"Y\" (variable \"y\", int64) must have "
                        "one dtype"));
  absl::Status shapes =
      PrepareOp(kWhere, {{"c", MakeTensor<bool>({4}, {})},
                         {"x", MakeTensor<float>({2, 1}, {1, 2})},
                         {"y", MakeTensor<float>({3}, {3, 4, 5})}});
  EXPECT_THAT(shapes.message(),
              HasSubstr("op 0 (where): inputs \"Condition\" (variable \"c\", "
                        "shape [4]), \"X\" (variable \"x\", shape [2, 1]), "
                        "\"Y\" (variable \"y\", shape [3]) do not broadcast "
                        "together"));
  absl::Status missing = PrepareOp(
      R"pb(type: "where"
           inputs { slot: "X" vars: "x" }
           inputs { slot: "Y" vars: "y" }
           outputs { slot: "Out" vars: "out" })pb",
      {{"x", MakeTensor<float>({1}, {1})}, {"y", MakeTensor<float>({1}, {1})}});
  EXPECT_THAT(missing.message(),
              HasSubstr("op 0 (where): missing required input "
                        "\"Condition\""));
  // Every dtype has a kernel; X and Y must still agree.
  absl::Status mixed =
      PrepareOp(kWhere, {{"c", MakeTensor<bool>({1}, {true})},
                         {"x", MakeTensor<uint8_t>({1}, {1})},
                         {"y", MakeTensor<int8_t>({1}, {2})}});
  EXPECT_THAT(mixed.message(), HasSubstr("op 0 (where)"));
  EXPECT_FALSE(mixed.ok());
}

}  // namespace
}  // namespace scopeflow
