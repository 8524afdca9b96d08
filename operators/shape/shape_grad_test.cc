// Gradients of the shape ops: numeric checks in float64 for every
// differentiable op over several axes, permutations and shapes, hand-computed
// float32 values of the gradient ops, and nets from AppendGradients where
// only some outputs or inputs carry gradients.
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A float64 tensor of `dims` with values uniform in [-1, 1).
Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = uniform(rng);
  return MakeTensor<double>(dims, values);
}

// Op `type` reading x and writing out, then `attrs` (OpDef text).
std::string UnaryOp(const std::string& type, const std::string& attrs = "") {
  return absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"out\" } %s",
      type, attrs);
}

// The numeric check of UnaryOp(type, attrs) at a random x of `dims`.
void ExpectUnaryGradient(const std::string& type, const std::string& attrs,
                         const Dims& dims) {
  SCOPED_TRACE(absl::StrCat(type, " ", attrs, " of ", DimsToString(dims)));
  const absl::Status status = CheckGradient(
      UnaryOp(type, attrs), {{"x", Random(dims, NumElements(dims))}});
  EXPECT_TRUE(status.ok()) << status;
}

// Runs gradient op `type` on x and Out@GRAD g, returning X@GRAD.
absl::StatusOr<Tensor> RunGrad(const std::string& type, const Tensor& x,
                               const Tensor& g, const std::string& attrs = "") {
  const std::string text = absl::StrFormat(
      "type: \"%s\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "%s",
      type, attrs);
  auto out = RunOp(text, {{"x", x}, {"g", g}}, {"dx"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

NetDef ParseNet(const std::string& text) {
  NetDef net;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  net.set_format_version(kNetFormatVersion);
  return net;
}

// The types of the ops of block 0 of `net`.
std::vector<std::string> OpTypes(const NetDef& net) {
  std::vector<std::string> types;
  for (const OpDef& op : net.blocks(0).ops()) types.push_back(op.type());
  return types;
}

TEST(ShapeGradTest, ShapeAndGatherIndexHaveNoGradient) {
  const OpSpec* shape = OpRegistry::Global().Find("shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->grad(), nullptr);
  const OpSpec* gather = OpRegistry::Global().Find("gather");
  ASSERT_NE(gather, nullptr);
  ASSERT_NE(gather->grad(), nullptr);
  EXPECT_THAT(gather->grad()->input_grads(), ElementsAre("X"));
}

TEST(ShapeGradTest, ReshapeFamilyNumeric) {
  ExpectUnaryGradient("reshape",
                      "attrs { name: \"shape\" i64s { values: 4 "
                      "values: -1 } }",
                      {2, 3, 4});
  ExpectUnaryGradient("reshape",
                      "attrs { name: \"shape\" i64s { values: 0 "
                      "values: 12 } }",
                      {2, 3, 4});
  for (int axis : {0, 1, 2, -1}) {
    ExpectUnaryGradient("flatten",
                        absl::StrFormat("attrs { name: \"axis\" i: %d }", axis),
                        {2, 3, 2});
  }
  ExpectUnaryGradient("squeeze", "", {2, 1, 3, 1});
  ExpectUnaryGradient("squeeze", "attrs { name: \"axes\" ints { values: -1 } }",
                      {2, 1, 3, 1});
  ExpectUnaryGradient("unsqueeze",
                      "attrs { name: \"axes\" ints { values: 0 values: 3 } }",
                      {2, 3});
}

TEST(ShapeGradTest, ReshapeGradGivesOutGradXsDims) {
  auto dx =
      RunGrad("reshape_grad", MakeTensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}),
              MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(dx->dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>(*dx), ElementsAre(1, 2, 3, 4, 5, 6));
  auto wrong = RunGrad("reshape_grad", MakeTensor<float>({2, 3}, {}),
                       MakeTensor<float>({5}, {1, 2, 3, 4, 5}));
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("\"g\""));
  EXPECT_THAT(wrong.status().message(), HasSubstr("reshape_grad"));
}

TEST(ShapeGradTest, TransposeNumericForSeveralPermutations) {
  ExpectUnaryGradient("transpose",
                      "attrs { name: \"perm\" ints { values: 1 values: 0 } }",
                      {2, 3});
  for (const char* perm :
       {"[2, 0, 1]", "[1, 2, 0]", "[0, 2, 1]", "[2, 1, 0]"}) {
    ExpectUnaryGradient(
        "transpose",
        absl::StrCat("attrs { name: \"perm\" ints { values: ", perm, " } }"),
        {2, 3, 4});
  }
  ExpectUnaryGradient(
      "transpose",
      "attrs { name: \"perm\" ints { values: 3 values: 1 values: 0 values: 2 "
      "} }",
      {2, 1, 3, 2});
}

TEST(ShapeGradTest, TransposeGradientIsTheInversePermutation) {
  NetDef net = ParseNet(
      "name: \"t\" blocks { vars { name: \"x\" dtype: DATA_TYPE_FLOAT32 shape: "
      "[2, 1, 3] } ops { type: \"transpose\" inputs { slot: \"X\" vars: "
      "\"x\" } outputs { slot: \"Out\" vars: \"y\" } attrs { name: \"perm\" "
      "ints { values: [1, 2, 0] } } } }");
  auto grads = AppendGradients(net, {"y"}, {}, {"x"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  const OpDef& grad_op = net.blocks(0).ops(net.blocks(0).ops_size() - 1);
  EXPECT_EQ(grad_op.type(), "transpose");
  ASSERT_EQ(grad_op.attrs_size(), 1);
  EXPECT_THAT(grad_op.attrs(0).ints().values(), ElementsAre(2, 0, 1));
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  auto out = executor.Run(
      *prepared, scope,
      {{"x", MakeTensor<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6})}}, {"x@GRAD"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1, 3));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 1, 1, 1, 1, 1));
}

// concat of a [2, 1, 3], b [2, 2, 3] and c [2, 3, 3] along axis 1, or of
// shapes differing along `axis` in general.
std::string ConcatOp(int axis) {
  return absl::StrFormat(
      "type: \"concat\" inputs { slot: \"X\" vars: [\"a\", \"b\", \"c\"] } "
      "outputs { slot: \"Out\" vars: \"out\" } attrs { name: \"axis\" i: %d }",
      axis);
}

TEST(ShapeGradTest, ConcatOfThreeInputsNumeric) {
  uint32_t seed = 100;
  for (int axis : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(axis);
    const int a = axis < 0 ? axis + 3 : axis;
    Dims da = {2, 3, 2}, db = {2, 3, 2}, dc = {2, 3, 2};
    da[a] = 1;
    db[a] = 2;
    dc[a] = 3;
    const std::vector<Feed> feeds = {{"a", Random(da, seed++)},
                                     {"b", Random(db, seed++)},
                                     {"c", Random(dc, seed++)}};
    absl::Status status = CheckGradient(ConcatOp(axis), feeds);
    EXPECT_TRUE(status.ok()) << status;
    // Gradients for some inputs only: the others' are not computed.
    for (const std::vector<std::string>& wrt :
         std::vector<std::vector<std::string>>{{"b"}, {"a", "c"}, {"c"}}) {
      GradCheckOptions options;
      options.wrt = wrt;
      status = CheckGradient(ConcatOp(axis), feeds, options);
      EXPECT_TRUE(status.ok()) << wrt[0] << ": " << status;
    }
  }
}

TEST(ShapeGradTest, ConcatGradCutsOutGradForTheWantedInputs) {
  // a [2, 1], b [2, 2], c [2, 0] joined along axis 1; only b's and c's
  // gradients are asked for.
  auto out = RunOp(
      "type: \"concat_grad\" inputs { slot: \"X\" vars: [\"a\", \"b\", "
      "\"c\"] } inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: "
      "\"X@GRAD\" vars: [\"db\", \"dc\"] } attrs { name: \"axis\" i: 1 } "
      "attrs { name: \"grad_inputs\" ints { values: [1, 2] } }",
      {{"a", MakeTensor<float>({2, 1}, {0, 0})},
       {"b", MakeTensor<float>({2, 2}, {0, 0, 0, 0})},
       {"c", MakeTensor<float>({2, 0}, {})},
       {"g", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}},
      {"db", "dc"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 3, 5, 6));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 0));

  auto bad = RunOp(
      "type: \"concat_grad\" inputs { slot: \"X\" vars: [\"a\", \"b\"] } "
      "inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" "
      "vars: \"db\" } attrs { name: \"axis\" i: 1 } attrs { name: "
      "\"grad_inputs\" ints { values: 2 } }",
      {{"a", MakeTensor<float>({2, 1}, {0, 0})},
       {"b", MakeTensor<float>({2, 2}, {0, 0, 0, 0})},
       {"g", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}},
      {"db"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("grad_inputs"));
}

std::string SplitOp(const std::string& attrs) {
  return absl::StrCat(
      "type: \"split\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: [\"a\", \"b\", \"c\"] } ",
      attrs);
}

TEST(ShapeGradTest, SplitNumeric) {
  for (const char* attrs :
       {"attrs { name: \"axis\" i: 1 } attrs { name: \"num\" i: 3 }",
        "attrs { name: \"sections\" ints { values: [1, -1, 2] } }",
        "attrs { name: \"axis\" i: -1 } attrs { name: \"sections\" ints { "
        "values: [2, 0, 2] } }"}) {
    SCOPED_TRACE(attrs);
    const absl::Status status =
        CheckGradient(SplitOp(attrs), {{"x", Random({6, 3, 4}, 7)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

// split of x [4, 2] into a [1, 2], b [2, 2], c [1, 2] along axis 0, with
// `c_decl` the declaration of c (empty: undeclared).
NetDef SplitNet(const std::string& c_decl) {
  return ParseNet(absl::StrCat(
      "name: \"s\" blocks { vars { name: \"x\" dtype: DATA_TYPE_FLOAT64 "
      "shape: [4, 2] } vars { name: \"seed\" dtype: DATA_TYPE_FLOAT64 shape: "
      "[2, 2] } ",
      c_decl, " ops { ",
      SplitOp("attrs { name: \"sections\" ints { values: "
              "[1, 2, 1] } }"),
      " } }"));
}

TEST(ShapeGradTest, SplitWithOnlyOneOutputCarryingAGradient) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const Tensor seed = MakeTensor<double>({2, 2}, {10, 20, 30, 40});
  // c unused by the target; then c a stop_gradient variable, whose gradient
  // arrives as "" in the maker and is filled with zeros there.
  for (const std::string& c_decl :
       {std::string(""),
        std::string("vars { name: \"c\" dtype: DATA_TYPE_FLOAT64 shape: [1, "
                    "2] stop_gradient: true }")}) {
    SCOPED_TRACE(c_decl);
    NetDef net = SplitNet(c_decl);
    auto grads = AppendGradients(net, {"b"}, {"seed"}, {"x"});
    ASSERT_TRUE(grads.ok()) << grads.status();
    EXPECT_THAT(OpTypes(net), Contains("concat"));
    // The zeros standing for c's gradient, made by backward or (c being
    // stop_gradient) by split's gradient maker.
    bool zeros_for_c = false;
    for (const OpDef& op : net.blocks(0).ops()) {
      zeros_for_c = zeros_for_c || (op.type() == "fill_any_like" &&
                                    op.inputs(0).vars(0) == "c");
    }
    EXPECT_TRUE(zeros_for_c);
    Executor executor;
    auto prepared = executor.Prepare(net, 0, CPUPlace());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    Scope scope;
    auto out =
        executor.Run(*prepared, scope,
                     {{"x", MakeTensor<double>({4, 2}, x)}, {"seed", seed}},
                     {(*grads)[0].grad});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(4, 2));
    EXPECT_THAT(Values<double>((*out)[0]),
                ElementsAre(0, 0, 10, 20, 30, 40, 0, 0));
  }
}

TEST(ShapeGradTest, SliceNumeric) {
  for (const char* attrs : {
           "attrs { name: \"axes\" ints { values: 1 } } attrs { name: "
           "\"starts\" ints { values: 1 } } attrs { name: \"ends\" ints { "
           "values: 3 } }",
           "attrs { name: \"axes\" ints { values: [0, 2] } } attrs { name: "
           "\"starts\" ints { values: [-2, 0] } } attrs { name: \"ends\" ints "
           "{ values: [100, 4] } } attrs { name: \"steps\" ints { values: [1, "
           "2] } }",
           "attrs { name: \"axes\" ints { values: [-1, 0] } } attrs { name: "
           "\"starts\" ints { values: [3, 2] } } attrs { name: \"ends\" ints { "
           "values: [0, -100] } } attrs { name: \"steps\" ints { values: [-2, "
           "-1] } }",
       }) {
    ExpectUnaryGradient("slice", attrs, {3, 4, 5});
  }
}

TEST(ShapeGradTest, SliceGradPlacesOutGradInZeros) {
  // x [2, 4], slice [:, 3:0:-2] takes columns 3 and 1.
  auto dx = RunGrad("slice_grad", MakeTensor<float>({2, 4}, {}),
                    MakeTensor<float>({2, 2}, {1, 2, 3, 4}),
                    "attrs { name: \"axes\" ints { values: 1 } } attrs { name: "
                    "\"starts\" ints { values: 3 } } attrs { name: \"ends\" "
                    "ints { values: 0 } } attrs { name: \"steps\" ints { "
                    "values: -2 } }");
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<float>(*dx), ElementsAre(0, 2, 0, 1, 0, 4, 0, 3));
}

std::string GatherOp(int axis) {
  return absl::StrFormat(
      "type: \"gather\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Index\" vars: \"i\" } outputs { slot: \"Out\" vars: \"out\" } attrs "
      "{ name: \"axis\" i: %d }",
      axis);
}

TEST(ShapeGradTest, GatherWithRepeatedIndicesNumeric) {
  struct Case {
    int axis;
    Tensor index;
  };
  for (const Case& c : {
           Case{0, MakeTensor<int32_t>({3}, {2, 0, 2})},
           Case{1, MakeTensor<int64_t>({2, 3}, {1, -1, 0, 3, 1, 1})},
           Case{-1, MakeTensor<int64_t>({4}, {4, 4, 4, 0})},
           Case{2, MakeTensor<int32_t>({0}, {})},
       }) {
    SCOPED_TRACE(c.axis);
    const absl::Status status = CheckGradient(
        GatherOp(c.axis), {{"x", Random({3, 4, 5}, 11)}, {"i", c.index}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(ShapeGradTest, GatherGradScatterAddsRepeatedIndices) {
  // x [3, 2]; rows 2, 0, 2 gathered, then -1 (row 2 again).
  const std::string op =
      "type: \"gather_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { "
      "slot: \"Index\" vars: \"i\" } inputs { slot: \"Out@GRAD\" vars: \"g\" "
      "} outputs { slot: \"X@GRAD\" vars: \"dx\" }";
  auto out = RunOp(op,
                   {{"x", MakeTensor<float>({3, 2}, {0, 0, 0, 0, 0, 0})},
                    {"i", MakeTensor<int64_t>({4}, {2, 0, 2, -1})},
                    {"g", MakeTensor<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}},
                   {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 4, 0, 0, 13, 16));
  // Integer gradients too, and an index out of range is an error.
  auto ints = RunOp(op,
                    {{"x", MakeTensor<int32_t>({2}, {0, 0})},
                     {"i", MakeTensor<int32_t>({3}, {1, 1, 0})},
                     {"g", MakeTensor<int32_t>({3}, {5, 6, 7})}},
                    {"dx"});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values<int32_t>((*ints)[0]), ElementsAre(7, 11));
  auto bad = RunOp(op,
                   {{"x", MakeTensor<float>({2}, {0, 0})},
                    {"i", MakeTensor<int32_t>({1}, {2})},
                    {"g", MakeTensor<float>({1}, {1})}},
                   {"dx"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("out of range"));
}

TEST(ShapeGradTest, ExpandNumeric) {
  ExpectUnaryGradient(
      "expand", "attrs { name: \"shape\" i64s { values: [2, 3, 4] } }", {3, 1});
  ExpectUnaryGradient(
      "expand", "attrs { name: \"shape\" i64s { values: [3, 4] } }", {1, 4});
  ExpectUnaryGradient("expand",
                      "attrs { name: \"shape\" i64s { values: [2, 4, 3] } }",
                      {2, 1, 3});
  ExpectUnaryGradient(
      "expand", "attrs { name: \"shape\" i64s { values: [2, 3] } }", {2, 3});
}

TEST(ShapeGradTest, ExpandGradSumsOverBroadcastDims) {
  // x [2, 1] expanded to [3, 2, 2]: dx[i] sums g[:, i, :].
  std::vector<float> g(12);
  for (int i = 0; i < 12; ++i) g[i] = i + 1;
  auto dx = RunGrad("expand_grad", MakeTensor<float>({2, 1}, {0, 0}),
                    MakeTensor<float>({3, 2, 2}, g),
                    "attrs { name: \"shape\" i64s { values: [3, 2, 2] } }");
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(dx->dims(), ElementsAre(2, 1));
  // Rows 0: 1+2 + 5+6 + 9+10; 1: 3+4 + 7+8 + 11+12.
  EXPECT_THAT(Values<float>(*dx), ElementsAre(33, 45));
  auto wrong = RunGrad("expand_grad", MakeTensor<float>({2, 1}, {0, 0}),
                       MakeTensor<float>({3, 2, 3}, std::vector<float>(18)),
                       "attrs { name: \"shape\" i64s { values: [3, 2, 2] } }");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("Out@GRAD"));
}

TEST(ShapeGradTest, TileNumeric) {
  for (const char* repeats :
       {"[2, 1]", "[1, 3]", "[2, 2, 2]", "[3]", "[0, 1]"}) {
    ExpectUnaryGradient(
        "tile",
        absl::StrCat("attrs { name: \"repeat_times\" ints { values: ", repeats,
                     " } }"),
        {2, 3});
  }
}

TEST(ShapeGradTest, TileGradSumsTheRepeats) {
  // x [2] tiled to [2, 4]: dx[j] sums g[:, j] and g[:, j + 2].
  auto dx = RunGrad("tile_grad", MakeTensor<float>({2}, {0, 0}),
                    MakeTensor<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}),
                    "attrs { name: \"repeat_times\" ints { values: [2, 2] } }");
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<float>(*dx), ElementsAre(1 + 3 + 5 + 7, 2 + 4 + 6 + 8));
  auto ints = RunGrad("tile_grad", MakeTensor<int64_t>({1}, {0}),
                      MakeTensor<int64_t>({3}, {1, 2, 3}),
                      "attrs { name: \"repeat_times\" ints { values: 3 } }");
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values<int64_t>(*ints), ElementsAre(6));
}

TEST(ShapeGradTest, PadNumeric) {
  ExpectUnaryGradient(
      "pad", "attrs { name: \"paddings\" ints { values: [1, 0, 2, 1] } }",
      {2, 3});
  ExpectUnaryGradient("pad",
                      "attrs { name: \"paddings\" ints { values: [0, 0, 1, 1, "
                      "0, 2] } } attrs { name: \"pad_value\" f: 3 }",
                      {2, 1, 3});
}

TEST(ShapeGradTest, PadGradTakesTheInterior) {
  auto out = RunOp(
      "type: \"pad_grad\" inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs "
      "{ slot: \"X@GRAD\" vars: \"dx\" } attrs { name: \"paddings\" ints { "
      "values: [1, 0, 0, 2] } }",
      {{"g", MakeTensor<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}}, {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4, 7));
  auto small = RunOp(
      "type: \"pad_grad\" inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs "
      "{ slot: \"X@GRAD\" vars: \"dx\" } attrs { name: \"paddings\" ints { "
      "values: [2, 2] } }",
      {{"g", MakeTensor<float>({3}, {1, 2, 3})}}, {"dx"});
  ASSERT_FALSE(small.ok());
  EXPECT_THAT(small.status().message(), HasSubstr("\"g\""));
}

TEST(ShapeGradTest, ChainOfShapeOpsThroughBackward) {
  // The gradient ops of several shape ops composed by AppendGradients:
  // x -> transpose -> reshape -> slice -> tile, d sum(y) / dx counts how
  // often each element of x reaches y.
  const std::string net_text =
      "name: \"chain\" blocks { vars { name: \"x\" dtype: DATA_TYPE_FLOAT64 "
      "shape: [2, 3] } "
      "ops { type: \"transpose\" inputs { slot: \"X\" vars: \"x\" } outputs { "
      "slot: \"Out\" vars: \"t\" } attrs { name: \"perm\" ints { values: [1, "
      "0] } } } "
      "ops { type: \"reshape\" inputs { slot: \"X\" vars: \"t\" } outputs { "
      "slot: \"Out\" vars: \"r\" } attrs { name: \"shape\" i64s { values: "
      "[6] } } } "
      "ops { type: \"slice\" inputs { slot: \"X\" vars: \"r\" } outputs { "
      "slot: \"Out\" vars: \"s\" } attrs { name: \"axes\" ints { values: 0 } "
      "} attrs { name: \"starts\" ints { values: 1 } } attrs { name: \"ends\" "
      "ints { values: 5 } } } "
      "ops { type: \"tile\" inputs { slot: \"X\" vars: \"s\" } outputs { "
      "slot: \"Out\" vars: \"y\" } attrs { name: \"repeat_times\" ints { "
      "values: [2] } } } }";
  NetDef net = ParseNet(net_text);
  auto grads = AppendGradients(net, {"y"}, {}, {"x"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  auto out = executor.Run(
      *prepared, scope, {{"x", MakeTensor<double>({2, 3}, {1, 2, 3, 4, 5, 6})}},
      {(*grads)[0].grad});
  ASSERT_TRUE(out.ok()) << out.status();
  // transpose gives [x00 x10 x01 x11 x02 x12]; the slice keeps positions
  // 1..4, i.e. x10 x01 x11 x02, each tiled twice; x00 and x12 are dropped.
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(0, 2, 2, 2, 2, 0));
}

// Shape ops whose parameters are fed as integer tensors: the gradient ops
// read the same tensors (a gradient op using the attributes instead would
// disagree), and the tensors get no gradient of their own.
TEST(ShapeGradTest, NumericChecksWithTensorInputs) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  auto ints = [](const std::vector<int64_t>& values) {
    return MakeTensor<int64_t>({static_cast<int64_t>(values.size())}, values);
  };
  struct Case {
    std::string op;
    std::vector<Feed> feeds;
  };
  const std::vector<Case> cases = {
      {R"pb(type: "reshape"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "Shape" vars: "s" }
            outputs { slot: "Out" vars: "out" })pb",
       {{"x", Random({2, 3, 4}, 1)}, {"s", ints({4, -1})}}},
      {R"pb(type: "slice"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "Starts" vars: "s" }
            inputs { slot: "Ends" vars: "e" }
            inputs { slot: "Axes" vars: "a" }
            inputs { slot: "Steps" vars: "st" }
            outputs { slot: "Out" vars: "out" })pb",
       {{"x", Random({3, 4}, 2)},
        {"s", ints({2, -1})},
        {"e", ints({0, kMin})},
        {"a", ints({0, 1})},
        {"st", ints({-1, -2})}}},
      // No axes: the first one, from an int32 input.
      {R"pb(type: "slice"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "Starts" vars: "s" }
            outputs { slot: "Out" vars: "out" }
            attrs {
              name: "ends"
              ints { values: [ 3 ] }
            })pb",
       {{"x", Random({4, 2}, 3)}, {"s", MakeTensor<int32_t>({1}, {1})}}},
      {R"pb(type: "unsqueeze"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "Axes" vars: "a" }
            outputs { slot: "Out" vars: "out" })pb",
       {{"x", Random({2, 3}, 4)}, {"a", ints({0, -1})}}},
      {R"pb(type: "squeeze"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "Axes" vars: "a" }
            outputs { slot: "Out" vars: "out" })pb",
       {{"x", Random({2, 1, 3}, 5)}, {"a", ints({1})}}},
      {R"pb(type: "expand"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "Shape" vars: "s" }
            outputs { slot: "Out" vars: "out" })pb",
       {{"x", Random({3, 1}, 6)}, {"s", ints({2, 1, 4})}}},
      {R"pb(type: "tile"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "RepeatTimes" vars: "r" }
            outputs { slot: "Out" vars: "out" })pb",
       {{"x", Random({2, 2}, 7)}, {"r", ints({2, 1, 3})}}},
      {R"pb(type: "split"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "Sections" vars: "s" }
            outputs { slot: "Out" vars: "out" vars: "rest" }
            attrs { name: "axis" i: 1 })pb",
       {{"x", Random({2, 5}, 8)}, {"s", ints({2, -1})}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const absl::Status status = CheckGradient(c.op, c.feeds);
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
