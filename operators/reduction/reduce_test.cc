#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsNan;
using ::testing::Pointwise;

std::string OpText(const std::string& type, const std::string& attrs) {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"y\" } ",
                      attrs);
}

// `attrs { name: "axes" ints { values: [...] } }`, and keep_dim if asked.
std::string Axes(const std::vector<int>& axes, bool keep_dim = false) {
  return absl::StrCat("attrs { name: \"axes\" ints { values: [",
                      absl::StrJoin(axes, ", "), "] } }",
                      keep_dim ? " attrs { name: \"keep_dim\" b: true }" : "");
}

absl::StatusOr<Tensor> RunReduce(const std::string& type, const Tensor& x,
                                 const std::string& attrs = "") {
  auto out = RunOp(OpText(type, attrs), {{"x", x}}, {"y"});
  if (!out.ok()) return out.status();
  EXPECT_EQ((*out)[0].dtype(), x.dtype());
  return (*out)[0];
}

// Runs `type` in a net declaring "x" with `shape` (empty: rank unknown), so
// that Prepare's inference sees that shape, not the fed one.
absl::StatusOr<Tensor> RunDeclared(const std::string& type,
                                   const std::string& attrs,
                                   const std::vector<int64_t>& shape,
                                   const Tensor& x) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name("test");
  BlockDef* block = net.add_blocks();
  VarDef* var = block->add_vars();
  var->set_name("x");
  var->set_dtype(x.dtype());
  for (int64_t d : shape) var->add_shape(d);
  if (!google::protobuf::TextFormat::ParseFromString(OpText(type, attrs),
                                                     block->add_ops())) {
    return absl::InvalidArgumentError("bad op");
  }
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  if (!prepared.ok()) return prepared.status();
  const VarInfo& y = prepared->var_infos()[prepared->VarIndex("y")];
  EXPECT_TRUE(y.has_dims || shape.empty());
  Scope scope;
  auto out = executor.Run(*prepared, scope, {Feed{"x", x}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// 0, 1, 2, ... in `dims`.
template <typename T>
Tensor Iota(Dims dims) {
  std::vector<T> values(NumElements(dims));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(i);
  return MakeTensor<T>(dims, values);
}

TEST(ReduceSumTest, AllAxesByDefault) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = RunReduce("reduce_sum", x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), IsEmpty());
  EXPECT_THAT(Values<float>(*y), ElementsAre(21));
  auto kept = RunReduce("reduce_sum", x, Axes({}, true));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(kept->dims(), ElementsAre(1, 1));
  EXPECT_THAT(Values<float>(*kept), ElementsAre(21));
}

TEST(ReduceSumTest, GivenAxes) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rows = RunReduce("reduce_sum", x, Axes({0}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->dims(), ElementsAre(3));
  EXPECT_THAT(Values<float>(*rows), ElementsAre(5, 7, 9));
  auto columns = RunReduce("reduce_sum", x, Axes({-1}, true));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<float>(*columns), ElementsAre(6, 15));
  // x[i][j][k] = 12 i + 4 j + k; over i and k: 60 + 32 j.
  auto outer = RunReduce("reduce_sum", Iota<double>({2, 3, 4}),
                         "attrs { name: \"axes\" i64s { values: [2, 0] } }");
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_THAT(outer->dims(), ElementsAre(3));
  EXPECT_THAT(Values<double>(*outer), ElementsAre(60, 92, 124));
}

// reduce_sum over every subset of the axes of a [2, 1, 3, 4, 5] tensor
// (size-1 axes and non-adjacent axes included), against a plain loop.
TEST(ReduceSumTest, EveryAxisSubsetMatchesReference) {
  const Dims dims = {2, 1, 3, 4, 5};
  const Tensor x = Iota<int64_t>(dims);
  for (int mask = 1; mask < 32; ++mask) {
    std::vector<int> axes;
    Dims out_dims;
    for (int a = 0; a < 5; ++a) {
      if (mask & (1 << a)) {
        axes.push_back(a - (a % 2) * 5);  // Some negative.
      } else {
        out_dims.push_back(dims[a]);
      }
    }
    auto y = RunReduce("reduce_sum", x, Axes(axes));
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(y->dims(), out_dims) << "mask " << mask;
    std::vector<int64_t> expected(NumElements(out_dims), 0);
    int64_t i = 0;
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 1; ++b) {
        for (int64_t c = 0; c < 3; ++c) {
          for (int64_t d = 0; d < 4; ++d) {
            for (int64_t e = 0; e < 5; ++e, ++i) {
              const int64_t index[5] = {a, b, c, d, e};
              int64_t o = 0;
              for (int k = 0; k < 5; ++k) {
                if (!(mask & (1 << k))) o = o * dims[k] + index[k];
              }
              expected[o] += i;
            }
          }
        }
      }
    }
    EXPECT_EQ(Values<int64_t>(*y), expected) << "mask " << mask;
  }
}

TEST(ReduceSumTest, IntegersWrapAndFloatsKeepPrecision) {
  auto wrapped = RunReduce(
      "reduce_sum",
      MakeTensor<int32_t>({3}, {std::numeric_limits<int32_t>::max(), 1, 1}));
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_THAT(Values<int32_t>(*wrapped),
              ElementsAre(std::numeric_limits<int32_t>::min() + 1));
  // 2^20 times 0.1f: a float accumulator drifts by about 1%.
  const int n = 1 << 20;
  auto sum = RunReduce("reduce_sum",
                       MakeTensor<float>({n}, std::vector<float>(n, 0.1f)));
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_NEAR(Values<float>(*sum)[0], n * static_cast<double>(0.1f), 0.01);
}

TEST(ReduceSumTest, EmptyReductionsAreZero) {
  auto y = RunReduce("reduce_sum", MakeTensor<float>({0, 3}, {}), Axes({0}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(0, 0, 0));
}

TEST(ReduceMeanTest, Values) {
  Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  auto all = RunReduce("reduce_mean", x);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Values<float>(*all), ElementsAre(2.5f));
  auto rows = RunReduce("reduce_mean", x, Axes({0}, true));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->dims(), ElementsAre(1, 2));
  EXPECT_THAT(Values<float>(*rows), ElementsAre(2, 3));
  auto columns =
      RunReduce("reduce_mean", Iota<double>({2, 3, 4}), Axes({1, 2}));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(Values<double>(*columns),
              Pointwise(DoubleNear(1e-12), {5.5, 17.5}));
  auto empty =
      RunReduce("reduce_mean", MakeTensor<float>({0, 2}, {}), Axes({0}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(Values<float>(*empty), Each(IsNan()));
}

TEST(ReduceMaxTest, Values) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 5, 3, 4, 2, 6});
  auto rows = RunReduce("reduce_max", x, Axes({1}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(Values<float>(*rows), ElementsAre(5, 6));
  auto columns = RunReduce("reduce_max", x, Axes({0}, true));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->dims(), ElementsAre(1, 3));
  EXPECT_THAT(Values<float>(*columns), ElementsAre(4, 5, 6));
  const float inf = std::numeric_limits<float>::infinity();
  auto low = RunReduce("reduce_max", MakeTensor<float>({2}, {-inf, -inf}));
  ASSERT_TRUE(low.ok()) << low.status();
  EXPECT_THAT(Values<float>(*low), ElementsAre(-inf));
  auto ints = RunReduce(
      "reduce_max", MakeTensor<int32_t>({2, 2}, {-7, -9, -3, -8}), Axes({1}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values<int32_t>(*ints), ElementsAre(-7, -3));
  const int64_t lowest = std::numeric_limits<int64_t>::lowest();
  auto int64s =
      RunReduce("reduce_max", MakeTensor<int64_t>({3}, {lowest, lowest, 5}));
  ASSERT_TRUE(int64s.ok()) << int64s.status();
  EXPECT_THAT(Values<int64_t>(*int64s), ElementsAre(5));
}

TEST(ReduceMaxTest, NaNPropagates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = RunReduce(
      "reduce_max", MakeTensor<float>({2, 3}, {1, nan, 3, 4, 5, 6}), Axes({1}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y)[0], IsNan());
  EXPECT_EQ(Values<float>(*y)[1], 6);
}

TEST(ReduceMaxTest, NoElementsIsAnError) {
  absl::Status status = PrepareOp(OpText("reduce_max", Axes({0})),
                                  {{"x", MakeTensor<float>({0, 3}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (reduce_max): input \"X\" (variable \"x\", "
                        "shape [0, 3]): attribute \"axes\" = [0] reduces an "
                        "axis of size 0 (expected at least one element per "
                        "output)"));
  // No output elements: nothing to compute.
  auto y = RunReduce("reduce_max", MakeTensor<float>({3, 0}, {}), Axes({0}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(0));
}

TEST(ReduceTest, BadAxesNameOpAndVariable) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* type : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    absl::Status out_of_range =
        PrepareOp(OpText(type, Axes({0, 2})), {{"x", x}});
    EXPECT_THAT(out_of_range.message(),
                HasSubstr(absl::StrCat(
                    "op 0 (", type,
                    "): input \"X\" (variable \"x\", shape [2, 3]): attribute "
                    "\"axes\" = [0, 2]: axis 2 is out of range for rank 2 "
                    "(expected [-2, 2))")));
    absl::Status negative = PrepareOp(OpText(type, Axes({-3})), {{"x", x}});
    EXPECT_THAT(negative.message(),
                HasSubstr("axis -3 is out of range for rank 2"));
    absl::Status duplicate = PrepareOp(OpText(type, Axes({1, -1})), {{"x", x}});
    EXPECT_THAT(duplicate.message(),
                HasSubstr(absl::StrCat(
                    "op 0 (", type,
                    "): input \"X\" (variable \"x\", shape [2, 3]): attribute "
                    "\"axes\" = [1, -1] names axis 1 twice (expected distinct "
                    "axes)")));
  }
  absl::Status wrong_type = PrepareOp(
      OpText("reduce_sum", "attrs { name: \"axes\" f: 1 }"), {{"x", x}});
  EXPECT_THAT(wrong_type.message(),
              HasSubstr("op 0 (reduce_sum): attribute \"axes\": expected "
                        "int64s, got float"));
}

TEST(ReduceTest, DtypesNameOpAndVariable) {
  Tensor ints = MakeTensor<int32_t>({2}, {1, 2});
  EXPECT_THAT(PrepareOp(OpText("reduce_mean", ""), {{"x", ints}}).message(),
              HasSubstr("op 0 (reduce_mean): input \"X\" (variable \"x\") has "
                        "dtype int32: expected float32 or float64"));
  Tensor bytes = MakeTensor<uint8_t>({2}, {1, 2});
  EXPECT_THAT(PrepareOp(OpText("reduce_sum", ""), {{"x", bytes}}).message(),
              HasSubstr("op 0 (reduce_sum): input \"X\" (variable \"x\") has "
                        "dtype uint8: expected float32, float64, int32 or "
                        "int64"));
  EXPECT_THAT(PrepareOp(OpText("mean", ""), {{"x", ints}}).message(),
              HasSubstr("op 0 (mean): input \"X\" (variable \"x\") has dtype "
                        "int32: expected float32 or float64"));
}

TEST(ReduceTest, UnknownDimensionsAtPrepare) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = RunDeclared("reduce_sum", Axes({1}), {-1, 3}, x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(6, 15));
  auto z = RunDeclared("reduce_max", Axes({0}, true), {}, x);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_THAT(z->dims(), ElementsAre(1, 3));
  EXPECT_THAT(Values<float>(*z), ElementsAre(4, 5, 6));
  // An empty unknown axis passes Prepare and fails the run.
  auto empty = RunDeclared("reduce_max", Axes({0}), {-1, 3},
                           MakeTensor<float>({0, 3}, {}));
  EXPECT_THAT(empty.status().message(),
              HasSubstr("op 0 (reduce_max): input \"X\" (variable \"x\", "
                        "shape [0, 3]): attribute \"axes\" = [0] reduces an "
                        "axis of size 0"));
  // Rank unknown: the axes are checked when the run knows it.
  auto bad = RunDeclared("reduce_sum", Axes({2}), {}, x);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("op 0 (reduce_sum): input \"X\" (variable \"x\", "
                        "shape [2, 3]): attribute \"axes\" = [2]: axis 2 is "
                        "out of range for rank 2"));
}

TEST(MeanTest, AllElementsToAScalar) {
  auto y = RunReduce("mean", MakeTensor<float>({2, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), IsEmpty());
  EXPECT_THAT(Values<float>(*y), ElementsAre(2.5f));
  auto y64 = RunReduce("mean", MakeTensor<double>({3}, {1e300, -1e300, 3}));
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_THAT(Values<double>(*y64), ElementsAre(1.0));
  auto many = RunReduce(
      "mean", MakeTensor<float>({1 << 20}, std::vector<float>(1 << 20, 0.1f)));
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_THAT(Values<float>(*many), Pointwise(FloatNear(1e-8), {0.1f}));
  auto empty = RunReduce("mean", MakeTensor<float>({0}, {}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(Values<float>(*empty), ElementsAre(IsNan()));
}

// The reduction `type` of x over the axes of input "Axes" (variable a),
// then `attrs`.
std::string WithAxesInput(const std::string& type,
                          const std::string& attrs = "") {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
                      "\"Axes\" vars: \"a\" } outputs { slot: \"Out\" vars: "
                      "\"y\" } ",
                      attrs);
}

constexpr char kNoop[] = "attrs { name: \"noop_with_empty_axes\" b: true }";

// Input "Axes" (int32 or int64) replaces attribute "axes", which it wins
// over.
TEST(ReduceTest, AxesInput) {
  const Tensor x = Iota<float>({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  auto out = RunOp(WithAxesInput("reduce_sum", Axes({0})),
                   {{"x", x}, {"a", MakeTensor<int64_t>({1}, {1})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 12));
  out = RunOp(WithAxesInput("reduce_mean", Axes({}, /*keep_dim=*/true)),
              {{"x", x}, {"a", MakeTensor<int32_t>({1}, {0})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1.5, 2.5, 3.5));
  out = RunOp(WithAxesInput("reduce_max"),
              {{"x", x}, {"a", MakeTensor<int64_t>({2}, {-1, 0})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), IsEmpty());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5));
  // Integers too.
  out = RunOp(
      WithAxesInput("reduce_sum"),
      {{"x", Iota<int64_t>({2, 3})}, {"a", MakeTensor<int64_t>({1}, {0})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(3, 5, 7));
}

// Empty axes reduce every axis, or none with "noop_with_empty_axes" (as
// ONNX's), whether they come from the input or the attribute.
TEST(ReduceTest, EmptyAxesAndNoop) {
  const Tensor x = Iota<float>({2, 3});
  const Tensor none = MakeTensor<int64_t>({0}, {});
  auto out = RunOp(WithAxesInput("reduce_sum"), {{"x", x}, {"a", none}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), IsEmpty());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(15));
  for (const char* type : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    SCOPED_TRACE(type);
    out = RunOp(WithAxesInput(type, kNoop), {{"x", x}, {"a", none}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 1, 2, 3, 4, 5));
    auto attr = RunReduce(type, x, kNoop);
    ASSERT_TRUE(attr.ok()) << attr.status();
    EXPECT_THAT(attr->dims(), ElementsAre(2, 3));
    EXPECT_THAT(Values<float>(*attr), ElementsAre(0, 1, 2, 3, 4, 5));
  }
  // "noop_with_empty_axes" changes nothing when there are axes.
  out = RunOp(WithAxesInput("reduce_sum", kNoop),
              {{"x", x}, {"a", MakeTensor<int64_t>({1}, {1})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 12));
}

TEST(ReduceTest, AxesInputAtPrepare) {
  struct Case {
    std::string attrs;
    std::vector<int64_t> axes_dims;
    bool has_dims;
    std::vector<int64_t> dims;
  };
  const std::vector<Case> cases = {
      // One axis goes, which one is not known yet.
      {"", {1}, true, {-1, -1}},
      // With keep_dim the rank stays.
      {Axes({}, true), {2}, true, {-1, -1, -1}},
      // Known to be empty: every axis goes, or none.
      {"", {0}, true, {}},
      {kNoop, {0}, true, {2, 3, 4}},
      // Of unknown length: the rank is unknown too.
      {"", {-1}, false, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.attrs + " " + DimsToString(c.axes_dims));
    auto info = InferAtPrepare(
        WithAxesInput("reduce_sum", c.attrs),
        {{"x", kFloat32, {2, 3, 4}}, {"a", kInt64, c.axes_dims}}, "y");
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->has_dims, c.has_dims);
    if (c.has_dims) {
      EXPECT_EQ(info->dims, Dims(c.dims.begin(), c.dims.end()));
    }
  }
}

TEST(ReduceTest, AxesInputErrorsNameOpAndVariable) {
  const Tensor x = Iota<float>({2, 3});
  EXPECT_THAT(
      PrepareOp(WithAxesInput("reduce_sum"),
                {{"x", x}, {"a", MakeTensor<float>({1}, {0})}})
          .message(),
      HasSubstr("op 0 (reduce_sum): input \"Axes\" (variable \"a\") has dtype "
                "float32: expected int32 or int64"));
  auto out = RunOp(WithAxesInput("reduce_mean"),
                   {{"x", x}, {"a", MakeTensor<int64_t>({1}, {2})}}, {"y"});
  EXPECT_THAT(
      out.status().message(),
      HasSubstr("op 0 (reduce_mean): input \"X\" (variable \"x\", "
                "shape [2, 3]): input \"Axes\" (variable \"a\") = [2]: "
                "axis 2 is out of range for rank 2 (expected [-2, 2))"));
  out = RunOp(WithAxesInput("reduce_sum"),
              {{"x", x}, {"a", MakeTensor<int32_t>({2}, {0, -2})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"Axes\" (variable \"a\") = [0, -2] names axis "
                        "0 twice (expected distinct axes)"));
  out = RunOp(WithAxesInput("reduce_max"),
              {{"x", MakeTensor<float>({0, 3}, {})},
               {"a", MakeTensor<int64_t>({1}, {0})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reduce_max): input \"X\" (variable \"x\", shape "
                        "[0, 3]): input \"Axes\" (variable \"a\") = [0] "
                        "reduces an axis of size 0 (expected at least one "
                        "element per output)"));
}

// The gradient ops read "Axes" too. Their shapes were all known at Prepare,
// so they run without inference, and their kernels check the output
// shapes they index by.
TEST(ReduceTest, GradKernelsCheckTheOutputsTheyAreGiven) {
  auto out = RunOp(R"pb(type: "reduce_sum_grad"
                        inputs { slot: "X" vars: "x" }
                        inputs { slot: "Axes" vars: "a" }
                        inputs { slot: "Out@GRAD" vars: "g" }
                        outputs { slot: "X@GRAD" vars: "dx" })pb",
                   {{"x", Iota<float>({2, 3})},
                    {"a", MakeTensor<int64_t>({1}, {0})},
                    {"g", MakeTensor<float>({2}, {1, 2})}},
                   {"dx"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reduce_sum_grad): input \"Axes\" (variable "
                        "\"a\") = [0] reduces X's shape [2, 3] to 3 elements, "
                        "but \"Out@GRAD\" holds 2"));
  out = RunOp(R"pb(type: "reduce_max_grad"
                   inputs { slot: "X" vars: "x" }
                   inputs { slot: "Axes" vars: "a" }
                   inputs { slot: "Out" vars: "m" }
                   inputs { slot: "Out@GRAD" vars: "g" }
                   outputs { slot: "X@GRAD" vars: "dx" })pb",
              {{"x", Iota<float>({2, 3})},
               {"a", MakeTensor<int64_t>({1}, {1})},
               {"m", MakeTensor<float>({3}, {2, 5, 5})},
               {"g", MakeTensor<float>({2}, {1, 2})}},
              {"dx"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reduce_max_grad): input \"Out\" holds 3 "
                        "elements, but \"Out@GRAD\" 2: expected the same "
                        "count"));
}

}  // namespace
}  // namespace scopeflow
