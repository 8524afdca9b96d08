// fc with a fused relu (attribute "activation_type"): its values against
// hand-computed ones and against fc then relu, NaN, the attribute's check,
// and the gradient ops the backward pass makes for it and for a plain fc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/grad_spec.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "framework/scope.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// fc on x, w and (if `bias`) b writing `out`, with in_num_col_dims and,
// unless `activation` is null, activation_type.
std::string FcOp(bool bias, int in_num_col_dims, const char* activation,
                 const std::string& out = "out") {
  std::string op = absl::StrCat(
      "type: \"fc\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"W\" "
      "vars: \"w\" } ",
      bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Out\" vars: \"", out,
      "\" } attrs { name: \"in_num_col_dims\" i: ", in_num_col_dims, " }");
  if (activation != nullptr) {
    absl::StrAppend(&op, " attrs { name: \"activation_type\" s: \"", activation,
                    "\" }");
  }
  return op;
}

template <typename T>
std::vector<T> Cast(const std::vector<double>& values) {
  return std::vector<T>(values.begin(), values.end());
}

// X [[1 -2 3] [-4 5 -6]], W [[1 0] [0 1] [1 -1]]: X W = [[4 -5] [-10 11]],
// plus Bias [0.5 -1]: [[4.5 -6] [-9.5 10]]. One negative value per row and
// per column, so relu zeroes elements of both kinds of product.
template <typename T>
void CheckHandComputed() {
  const std::vector<double> x = {1, -2, 3, -4, 5, -6};
  const Tensor w = MakeTensor<T>({3, 2}, {1, 0, 0, 1, 1, -1});
  const Tensor b = MakeTensor<T>({2}, {0.5, -1});
  struct Case {
    Dims x_dims;
    int in_num_col_dims;
    bool bias;
    Dims out_dims;
    std::vector<double> out;
  };
  for (const Case& c : {Case{{2, 3}, 1, true, {2, 2}, {4.5, 0, 0, 10}},
                        Case{{2, 3}, 1, false, {2, 2}, {4, 0, 0, 11}},
                        Case{{2, 1, 3}, 2, true, {2, 1, 2}, {4.5, 0, 0, 10}},
                        Case{{2, 1, 3}, 2, false, {2, 1, 2}, {4, 0, 0, 11}}}) {
    SCOPED_TRACE(absl::StrCat(DimsToString(c.x_dims), " in_num_col_dims ",
                              c.in_num_col_dims, c.bias ? " with" : " without",
                              " bias"));
    std::vector<Feed> feeds = {{"x", MakeTensor<T>(c.x_dims, Cast<T>(x))},
                               {"w", w}};
    if (c.bias) feeds.push_back({"b", b});
    auto out = RunOp(FcOp(c.bias, c.in_num_col_dims, "relu"), feeds, {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAreArray(c.out_dims));
    EXPECT_THAT(Values<T>((*out)[0]), ElementsAreArray(Cast<T>(c.out)));
  }
}

TEST(FcReluTest, HandComputedFloat32) { CheckHandComputed<float>(); }

TEST(FcReluTest, HandComputedFloat64) { CheckHandComputed<double>(); }

TEST(FcReluTest, NoActivationIsThePlainProduct) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, -2, 3, -4, 5, -6});
  const Tensor w = MakeTensor<float>({3, 2}, {1, 0, 0, 1, 1, -1});
  const Tensor b = MakeTensor<float>({2}, {0.5, -1});
  for (const char* activation : {static_cast<const char*>(nullptr), ""}) {
    auto out = RunOp(FcOp(true, 1, activation), {{"x", x}, {"w", w}, {"b", b}},
                     {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4.5, -6, -9.5, 10));
  }
}

// Past kElementsWorthAThread (2^14) output elements, so that the relu runs
// over several threads where the build has them: exactly max(fc, 0).
template <typename T>
void CheckLargeAgainstPlainFc() {
  const int64_t m = 300, k = 7, n = 100;
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<T>({m, k}, Cast<T>(RandomValues(m * k, 1)))},
      {"w", MakeTensor<T>({k, n}, Cast<T>(RandomValues(k * n, 2)))},
      {"b", MakeTensor<T>({n}, Cast<T>(RandomValues(n, 3)))}};
  auto plain = RunOp(FcOp(true, 1, nullptr), feeds, {"out"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto fused = RunOp(FcOp(true, 1, "relu"), feeds, {"out"});
  ASSERT_TRUE(fused.ok()) << fused.status();
  std::vector<T> expected = Values<T>((*plain)[0]);
  for (T& v : expected) v = std::max(v, T(0));
  EXPECT_EQ(Values<T>((*fused)[0]), expected);
}

TEST(FcReluTest, LargeOutputsAreTheReluOfThePlainFc) {
  CheckLargeAgainstPlainFc<float>();
  CheckLargeAgainstPlainFc<double>();
}

// relu keeps NaN (v < 0 is false for it): a NaN in X spoils its row, one in
// Bias its column, whatever sign the other terms have.
template <typename T>
void CheckNaN() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // X [[1 2] [NaN 1]], W [[1 -1] [1 -1]], Bias [NaN 0]:
  // [[NaN -3] [NaN NaN]] before the relu.
  auto out = RunOp(FcOp(true, 1, "relu"),
                   {{"x", MakeTensor<T>({2, 2}, {1, 2, nan, 1})},
                    {"w", MakeTensor<T>({2, 2}, {1, -1, 1, -1})},
                    {"b", MakeTensor<T>({2}, {nan, 0})}},
                   {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<T> values = Values<T>((*out)[0]);
  ASSERT_EQ(values.size(), 4u);
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], T(0));
  EXPECT_TRUE(std::isnan(values[2]));
  EXPECT_TRUE(std::isnan(values[3]));
}

TEST(FcReluTest, NaNStaysNaN) {
  CheckNaN<float>();
  CheckNaN<double>();
}

TEST(FcReluTest, OtherActivationsAreErrors) {
  const Tensor x = MakeTensor<float>({2, 3}, std::vector<float>(6, 1));
  const Tensor w = MakeTensor<float>({3, 2}, std::vector<float>(6, 1));
  for (const char* activation : {"sigmoid", "Relu", " relu"}) {
    SCOPED_TRACE(activation);
    EXPECT_THAT(
        PrepareOp(FcOp(false, 1, activation), {{"x", x}, {"w", w}}).message(),
        HasSubstr(absl::StrCat("op 0 (fc): attribute \"activation_type\" must "
                               "be one of \"\" (none), \"relu\", \"gelu\", "
                               "\"gelu_tanh\", got \"",
                               activation, "\"")));
  }
}

// Gradients.

// A net declaring `vars` (float32 or float64 by `dtype`, with their dims)
// that runs `ops`, each an OpDef in text format.
NetDef MakeNet(const std::vector<std::pair<std::string, Dims>>& vars,
               DataType dtype, const std::vector<std::string>& ops) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name("net");
  BlockDef* block = net.add_blocks();
  for (const auto& [name, dims] : vars) {
    VarDef* var = block->add_vars();
    var->set_name(name);
    var->set_dtype(dtype);
    for (int64_t d : dims) var->add_shape(d);
  }
  for (const std::string& op : ops) {
    EXPECT_TRUE(
        google::protobuf::TextFormat::ParseFromString(op, block->add_ops()))
        << op;
  }
  return net;
}

// The gradient ops AppendGradients appends to `net` (after its `forward`
// ops) for target "out" with its gradient in "seed", with respect to `wrt`.
std::vector<OpDef> GradientOps(NetDef net,
                               const std::vector<std::string>& wrt) {
  const int forward = net.blocks(0).ops_size();
  auto grads = AppendGradients(net, {"out"}, {"seed"}, wrt);
  EXPECT_TRUE(grads.ok()) << grads.status();
  const auto& ops = net.blocks(0).ops();
  return std::vector<OpDef>(ops.begin() + forward, ops.end());
}

std::vector<std::string> AttrNames(const OpDef& op) {
  std::vector<std::string> names;
  for (const AttrDef& attr : op.attrs()) names.push_back(attr.name());
  return names;
}

NetDef FcNet(bool bias, const char* activation) {
  std::vector<std::pair<std::string, Dims>> vars = {
      {"x", {2, 3}}, {"w", {3, 4}}, {"seed", {2, 4}}};
  if (bias) vars.push_back({"b", {4}});
  return MakeNet(vars, kFloat32, {FcOp(bias, 1, activation)});
}

TEST(FcGradOpsTest, PlainFcMakesOneFcGradOp) {
  for (const char* activation : {static_cast<const char*>(nullptr), ""}) {
    SCOPED_TRACE(activation == nullptr ? "no activation_type" : "\"\"");
    const std::vector<OpDef> ops =
        GradientOps(FcNet(true, activation), {"x", "w", "b"});
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].type(), "fc_grad");
    EXPECT_THAT(Bindings(ops[0].inputs()),
                ElementsAre("X: x", "W: w", "Bias: b", "Out@GRAD: seed"));
    EXPECT_THAT(
        Bindings(ops[0].outputs()),
        ElementsAre("X@GRAD: x@GRAD", "W@GRAD: w@GRAD", "Bias@GRAD: b@GRAD"));
    EXPECT_THAT(AttrNames(ops[0]), ElementsAre("in_num_col_dims"));
  }
}

// Without activation_type, fc's maker makes what GradSpec's default maker
// makes of fc's declarations: the gradient a plain fc had before the
// attribute, attributes included.
TEST(FcGradOpsTest, PlainFcMakesWhatTheDefaultMakerMakes) {
  const GradSpec* fc = OpRegistry::Global().Find("fc")->grad();
  ASSERT_NE(fc, nullptr);
  ASSERT_TRUE(fc->has_maker());
  const GradSpec plain = GradSpec("fc_grad")
                             .ReadInput("X")
                             .ReadInput("W")
                             .ReadInput("Bias")
                             .ReadOutputGrad("Out")
                             .WriteInputGrad("X")
                             .WriteInputGrad("W")
                             .WriteInputGrad("Bias");
  struct Case {
    bool bias;
    std::vector<std::vector<std::string>> input_grads;
  };
  for (const Case& c :
       {Case{true, {{"dx"}, {"dw"}, {"db"}}}, Case{true, {{""}, {"dw"}, {""}}},
        Case{false, {{"dx"}, {""}}}, Case{false, {{""}, {"dw"}}}}) {
    OpDef forward;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        FcOp(c.bias, 2, nullptr), &forward));
    GradOpContext made(forward, c.input_grads, {{"g"}});
    ASSERT_TRUE(fc->Make(made).ok());
    GradOpContext expected(forward, c.input_grads, {{"g"}});
    ASSERT_TRUE(plain.Make(expected).ok());
    ASSERT_EQ(made.ops().size(), 1u);
    ASSERT_EQ(expected.ops().size(), 1u);
    EXPECT_TRUE(MessageDifferencer::Equals(made.ops()[0], expected.ops()[0]))
        << made.ops()[0].DebugString() << "expected\n"
        << expected.ops()[0].DebugString();
  }
}

TEST(FcGradOpsTest, FusedReluAddsAReluGradBeforeFcGrad) {
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "with bias" : "without bias");
    const std::vector<OpDef> ops = GradientOps(
        FcNet(bias, "relu"), bias ? std::vector<std::string>{"x", "w", "b"}
                                  : std::vector<std::string>{"x", "w"});
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[0].type(), "relu_grad");
    EXPECT_THAT(Bindings(ops[0].inputs()),
                ElementsAre("Out: out", "Out@GRAD: seed"));
    EXPECT_THAT(Bindings(ops[0].outputs()),
                ElementsAre("X@GRAD: seed@PRE_RELU"));
    EXPECT_THAT(AttrNames(ops[0]), IsEmpty());
    EXPECT_EQ(ops[1].type(), "fc_grad");
    std::vector<std::string> inputs = {"X: x", "W: w"};
    std::vector<std::string> outputs = {"X@GRAD: x@GRAD", "W@GRAD: w@GRAD"};
    if (bias) {
      inputs.push_back("Bias: b");
      outputs.push_back("Bias@GRAD: b@GRAD");
    }
    inputs.push_back("Out@GRAD: seed@PRE_RELU");
    EXPECT_THAT(Bindings(ops[1].inputs()), ElementsAreArray(inputs));
    EXPECT_THAT(Bindings(ops[1].outputs()), ElementsAreArray(outputs));
    // fc_grad differentiates the product and the bias only.
    EXPECT_THAT(AttrNames(ops[1]), ElementsAre("in_num_col_dims"));
  }
}

// Runs `net` with `feeds` after AppendGradients for target "out" (its
// gradient fed as "seed") with respect to `wrt`; returns "out" and the
// gradients, in the order of `wrt`.
template <typename T>
std::vector<std::vector<T>> RunWithGradients(
    NetDef net, const std::vector<Feed>& feeds,
    const std::vector<std::string>& wrt) {
  auto grads = AppendGradients(net, {"out"}, {"seed"}, wrt);
  EXPECT_TRUE(grads.ok()) << grads.status();
  if (!grads.ok()) return {};
  std::vector<std::string> fetches = {"out"};
  for (const VarGrad& grad : *grads) fetches.push_back(grad.grad);
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  if (!prepared.ok()) return {};
  Scope scope;
  auto values = executor.Run(*prepared, scope, feeds, fetches);
  EXPECT_TRUE(values.ok()) << values.status();
  if (!values.ok()) return {};
  std::vector<std::vector<T>> result;
  for (const Tensor& value : *values) result.push_back(Values<T>(value));
  return result;
}

// Two layers, x -> fc + relu -> h -> fc + relu -> out, written with fused
// fcs and as fc then relu: the same values and gradients, the first
// layer's Out@GRAD coming from the second layer's fc_grad.
template <typename T>
void CheckFusedMatchesUnfused(bool bias, int in_num_col_dims) {
  SCOPED_TRACE(absl::StrCat(bias ? "with" : "without", " bias, ",
                            "in_num_col_dims ", in_num_col_dims));
  const DataType dtype = DataTypeOf<T>();
  const Dims x_dims = in_num_col_dims == 1 ? Dims{6, 4} : Dims{2, 3, 4};
  const Dims h_dims = in_num_col_dims == 1 ? Dims{6, 5} : Dims{2, 3, 5};
  const Dims out_dims = in_num_col_dims == 1 ? Dims{6, 3} : Dims{2, 3, 3};
  std::vector<std::pair<std::string, Dims>> vars = {
      {"x", x_dims}, {"w1", {4, 5}}, {"w2", {5, 3}}, {"seed", out_dims}};
  std::vector<Feed> feeds = {
      {"x",
       MakeTensor<T>(x_dims, Cast<T>(RandomValues(NumElements(x_dims), 10)))},
      {"w1", MakeTensor<T>({4, 5}, Cast<T>(RandomValues(20, 11)))},
      {"w2", MakeTensor<T>({5, 3}, Cast<T>(RandomValues(15, 12)))},
      {"seed", MakeTensor<T>(out_dims, Cast<T>(RandomValues(
                                           NumElements(out_dims), 13)))}};
  std::vector<std::string> wrt = {"x", "w1", "w2"};
  if (bias) {
    vars.push_back({"b1", {5}});
    vars.push_back({"b2", {3}});
    feeds.push_back({"b1", MakeTensor<T>({5}, Cast<T>(RandomValues(5, 14)))});
    feeds.push_back({"b2", MakeTensor<T>({3}, Cast<T>(RandomValues(3, 15)))});
    wrt.push_back("b1");
    wrt.push_back("b2");
  }
  // One layer: fc on `in`, `w` and `b`, fused with the relu or followed by
  // one.
  const auto layer = [&](const std::string& in, const std::string& w,
                         const std::string& b, const std::string& out,
                         bool fused) {
    const std::string pre = fused ? out : out + "_pre";
    std::string fc = absl::StrCat(
        "type: \"fc\" inputs { slot: \"X\" vars: \"", in,
        "\" } inputs { slot: \"W\" vars: \"", w, "\" } ",
        bias ? absl::StrCat("inputs { slot: \"Bias\" vars: \"", b, "\" } ")
             : "",
        "outputs { slot: \"Out\" vars: \"", pre,
        "\" } attrs { name: \"in_num_col_dims\" i: ", in_num_col_dims, " }",
        fused ? " attrs { name: \"activation_type\" s: \"relu\" }" : "");
    std::vector<std::string> ops = {fc};
    if (!fused) {
      ops.push_back(absl::StrCat("type: \"relu\" inputs { slot: \"X\" vars: \"",
                                 pre, "\" } outputs { slot: \"Out\" vars: \"",
                                 out, "\" }"));
    }
    return ops;
  };
  std::vector<std::vector<T>> results[2];
  for (bool fused : {false, true}) {
    std::vector<std::string> ops = layer("x", "w1", "b1", "h", fused);
    for (std::string& op : layer("h", "w2", "b2", "out", fused)) {
      ops.push_back(std::move(op));
    }
    results[fused] = RunWithGradients<T>(MakeNet(vars, dtype, ops), feeds, wrt);
  }
  ASSERT_EQ(results[1].size(), wrt.size() + 1);
  // Both relus zero some elements (else the relu_grad would go untested).
  const std::vector<T>& out = results[1][0];
  EXPECT_GT(std::count(out.begin(), out.end(), T(0)), 0);
  EXPECT_LT(std::count(out.begin(), out.end(), T(0)),
            static_cast<int64_t>(out.size()));
  for (size_t i = 0; i < results[1].size(); ++i) {
    SCOPED_TRACE(i == 0 ? std::string("out") : wrt[i - 1] + "@GRAD");
    // The same kernels on the same values: equal, not merely close.
    EXPECT_EQ(results[1][i], results[0][i]);
  }
}

TEST(FcReluGradTest, FusedMatchesFcThenRelu) {
  for (bool bias : {true, false}) {
    for (int in_num_col_dims : {1, 2}) {
      CheckFusedMatchesUnfused<float>(bias, in_num_col_dims);
      CheckFusedMatchesUnfused<double>(bias, in_num_col_dims);
    }
  }
}

// Central differences are valid away from relu's kink at 0: each case
// takes the first seed whose pre-activations all lie at least 0.05 from it,
// with both signs present.
TEST(FcReluGradTest, NumericCheck) {
  struct Case {
    Dims x, w, bias;  // no bias if empty
    int in_num_col_dims;
  };
  for (const Case& c :
       {Case{{4, 3}, {3, 5}, {5}, 1}, Case{{4, 3}, {3, 5}, {}, 1},
        Case{{2, 3, 2}, {2, 4}, {1, 4}, 2},
        Case{{2, 1, 3, 2}, {6, 3}, {}, 2}}) {
    SCOPED_TRACE(DimsToString(c.x) + " in_num_col_dims " +
                 std::to_string(c.in_num_col_dims));
    const bool bias = !c.bias.empty();
    std::vector<Feed> feeds;
    bool found = false;
    for (uint32_t seed = 300; !found && seed < 400; seed += 3) {
      feeds = {
          {"x", MakeTensor<double>(c.x, RandomValues(NumElements(c.x), seed))},
          {"w",
           MakeTensor<double>(c.w, RandomValues(NumElements(c.w), seed + 1))}};
      if (bias) {
        feeds.push_back(
            {"b", MakeTensor<double>(
                      c.bias, RandomValues(NumElements(c.bias), seed + 2))});
      }
      auto pre = RunOp(FcOp(bias, c.in_num_col_dims, nullptr), feeds, {"out"});
      ASSERT_TRUE(pre.ok()) << pre.status();
      const std::vector<double> values = Values<double>((*pre)[0]);
      found = std::all_of(values.begin(), values.end(),
                          [](double v) { return std::fabs(v) >= 0.05; }) &&
              std::any_of(values.begin(), values.end(),
                          [](double v) { return v < 0; }) &&
              std::any_of(values.begin(), values.end(),
                          [](double v) { return v > 0; });
    }
    ASSERT_TRUE(found) << "no seed gives pre-activations away from 0";

    const std::string op = FcOp(bias, c.in_num_col_dims, "relu");
    std::vector<std::string> inputs = {"x", "w"};
    if (bias) inputs.push_back("b");
    const absl::Status status =
        CheckGradientTogetherAndAlone(op, feeds, inputs);
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
