// fc with a fused gelu (activation_type "gelu", the erf form, and
// "gelu_tanh"): its values against hand-computed ones and against fc then
// the gelu op, the gradient ops the backward pass makes for it, their
// values against the unfused net's and a numeric check, and the fusion of
// an imported matmul, add and gelu with the pre-activation fetched.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "framework/scope.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// fc on x, w and (if `bias`) b writing `out`, with in_num_col_dims and
// activation_type `activation` (none if empty).
std::string FcOp(bool bias, int in_num_col_dims, const std::string& activation,
                 const std::string& out = "out") {
  std::string op = absl::StrCat(
      "type: \"fc\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"W\" "
      "vars: \"w\" } ",
      bias ? "inputs { slot: \"Bias\" vars: \"b\" } " : "",
      "outputs { slot: \"Out\" vars: \"", out,
      "\" } attrs { name: \"in_num_col_dims\" i: ", in_num_col_dims, " }");
  if (!activation.empty()) {
    absl::StrAppend(&op, " attrs { name: \"activation_type\" s: \"", activation,
                    "\" }");
  }
  return op;
}

// The gelu op from `in` to `out`, with "approximate" for gelu_tanh.
std::string GeluOp(const std::string& activation, const std::string& in,
                   const std::string& out) {
  return absl::StrCat("type: \"gelu\" inputs { slot: \"X\" vars: \"", in,
                      "\" } outputs { slot: \"Out\" vars: \"", out, "\" }",
                      activation == "gelu_tanh"
                          ? " attrs { name: \"approximate\" b: true }"
                          : "");
}

template <typename T>
std::vector<T> Cast(const std::vector<double>& values) {
  return std::vector<T>(values.begin(), values.end());
}

// X [[1 -2 3] [-4 5 -6]], W [[1 0] [0 1] [1 -1]], Bias [0.5 -1]: before the
// gelu [[4.5 -6] [-9.5 10]]. gelu(v) = v Phi(v) from Python's math.erfc
// (0.5 erfc(-v / sqrt 2)); the tanh form from its formula where it does not
// cancel, and below -9 tanh's form is v sigmoid(2 z), about -9.5 e^-165.
template <typename T>
void CheckHandComputed() {
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<T>({2, 3}, {1, -2, 3, -4, 5, -6})},
      {"w", MakeTensor<T>({3, 2}, {1, 0, 0, 1, 1, -1})},
      {"b", MakeTensor<T>({2}, {0.5, -1})}};
  const std::pair<std::string, std::vector<double>> cases[] = {
      {"gelu",
       {4.4999847104709385, -5.919525870226207e-09, -9.969789321594591e-21,
        10}},
      {"gelu_tanh", {4.499994863262588, -8.43964897967453e-11, 0, 10}}};
  for (const auto& [activation, expected] : cases) {
    SCOPED_TRACE(activation);
    auto out = RunOp(FcOp(true, 1, activation), feeds, {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<T> values = Values<T>((*out)[0]);
    ASSERT_EQ(values.size(), expected.size());
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_NEAR(values[i], expected[i], 2e-6 * std::fabs(expected[i]) + 1e-30)
          << "element " << i;
    }
  }
}

TEST(FcGeluTest, HandComputedFloat32) { CheckHandComputed<float>(); }

TEST(FcGeluTest, HandComputedFloat64) { CheckHandComputed<double>(); }

// Past kElementsWorthAThread (2^14) output elements, so that the gelu runs
// over several threads where the build has them, with and without a bias
// and on rank-3 X: exactly the gelu op's values on the plain fc's.
template <typename T>
void CheckAgainstFcThenGelu(const std::string& activation, bool bias,
                            int in_num_col_dims) {
  SCOPED_TRACE(absl::StrCat(activation, bias ? " with" : " without",
                            " bias, in_num_col_dims ", in_num_col_dims));
  const int64_t k = 7, n = 100;
  const Dims x_dims = in_num_col_dims == 1 ? Dims{300, k} : Dims{3, 100, k};
  std::vector<double> x = RandomValues(300 * k, 1);
  for (double& v : x) v *= 3;  // Pre-activations well beyond [-1, 1].
  std::vector<Feed> feeds = {
      {"x", MakeTensor<T>(x_dims, Cast<T>(x))},
      {"w", MakeTensor<T>({k, n}, Cast<T>(RandomValues(k * n, 2)))}};
  if (bias) {
    feeds.push_back({"b", MakeTensor<T>({n}, Cast<T>(RandomValues(n, 3)))});
  }
  auto plain = RunOp(FcOp(bias, in_num_col_dims, ""), feeds, {"out"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto expected =
      RunOp(GeluOp(activation, "pre", "y"), {{"pre", (*plain)[0]}}, {"y"});
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto fused = RunOp(FcOp(bias, in_num_col_dims, activation), feeds, {"out"});
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ((*fused)[0].dims(), (*expected)[0].dims());
  EXPECT_EQ(Values<T>((*fused)[0]), Values<T>((*expected)[0]));
}

TEST(FcGeluTest, EqualsFcThenTheGeluOp) {
  for (const char* activation : {"gelu", "gelu_tanh"}) {
    for (bool bias : {true, false}) {
      for (int in_num_col_dims : {1, 2}) {
        CheckAgainstFcThenGelu<float>(activation, bias, in_num_col_dims);
        CheckAgainstFcThenGelu<double>(activation, bias, in_num_col_dims);
      }
    }
  }
}

TEST(FcGeluTest, OtherActivationsAreErrors) {
  const Tensor x = MakeTensor<float>({2, 3}, std::vector<float>(6, 1));
  const Tensor w = MakeTensor<float>({3, 2}, std::vector<float>(6, 1));
  for (const char* activation : {"Gelu", "gelu_erf", "tanh"}) {
    SCOPED_TRACE(activation);
    EXPECT_THAT(
        PrepareOp(FcOp(false, 1, activation), {{"x", x}, {"w", w}}).message(),
        HasSubstr(absl::StrCat(
            "op 0 (fc): attribute \"activation_type\" must be one of \"\" "
            "(none), \"relu\", \"gelu\", \"gelu_tanh\", got \"",
            activation, "\"")));
  }
}

// Gradients.

// A net declaring `vars` of `dtype` that runs `ops` (OpDefs in text format).
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

TEST(FcGeluGradOpsTest, RecomputesThePreActivationForGeluGrad) {
  for (const char* activation : {"gelu", "gelu_tanh"}) {
    SCOPED_TRACE(activation);
    NetDef net =
        MakeNet({{"x", {2, 3}}, {"w", {3, 4}}, {"b", {4}}, {"seed", {2, 4}}},
                kFloat32, {FcOp(true, 1, activation)});
    auto grads = AppendGradients(net, {"out"}, {"seed"}, {"x", "w", "b"});
    ASSERT_TRUE(grads.ok()) << grads.status();
    const BlockDef& block = net.blocks(0);
    ASSERT_EQ(block.ops_size(), 4);
    const OpDef& product = block.ops(1);
    EXPECT_EQ(product.type(), "fc");
    EXPECT_THAT(Bindings(product.inputs()),
                ElementsAre("X: x", "W: w", "Bias: b"));
    EXPECT_THAT(Bindings(product.outputs()),
                ElementsAre("Out: seed@PRE_GELU_VALUE"));
    ASSERT_EQ(product.attrs_size(), 1);
    EXPECT_EQ(product.attrs(0).name(), "in_num_col_dims");
    const OpDef& gelu_grad = block.ops(2);
    EXPECT_EQ(gelu_grad.type(), "gelu_grad");
    EXPECT_THAT(Bindings(gelu_grad.inputs()),
                ElementsAre("X: seed@PRE_GELU_VALUE", "Out@GRAD: seed"));
    EXPECT_THAT(Bindings(gelu_grad.outputs()),
                ElementsAre("X@GRAD: seed@PRE_GELU"));
    EXPECT_EQ(gelu_grad.attrs_size(),
              std::string(activation) == "gelu_tanh" ? 1 : 0);
    const OpDef& fc_grad = block.ops(3);
    EXPECT_EQ(fc_grad.type(), "fc_grad");
    EXPECT_THAT(
        Bindings(fc_grad.inputs()),
        ElementsAre("X: x", "W: w", "Bias: b", "Out@GRAD: seed@PRE_GELU"));
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

// x [2, 3, 4] -> fc + gelu -> h -> fc + gelu -> out, with fused fcs and as
// fc then gelu: the same values and gradients.
template <typename T>
void CheckFusedMatchesUnfused(const std::string& activation, bool bias) {
  SCOPED_TRACE(absl::StrCat(activation, bias ? " with" : " without", " bias"));
  std::vector<std::pair<std::string, Dims>> vars = {
      {"x", {2, 3, 4}}, {"w1", {4, 5}}, {"w2", {5, 3}}, {"seed", {2, 3, 3}}};
  std::vector<Feed> feeds = {
      {"x", MakeTensor<T>({2, 3, 4}, Cast<T>(RandomValues(24, 10)))},
      {"w1", MakeTensor<T>({4, 5}, Cast<T>(RandomValues(20, 11)))},
      {"w2", MakeTensor<T>({5, 3}, Cast<T>(RandomValues(15, 12)))},
      {"seed", MakeTensor<T>({2, 3, 3}, Cast<T>(RandomValues(18, 13)))}};
  std::vector<std::string> wrt = {"x", "w1", "w2"};
  if (bias) {
    vars.push_back({"b1", {5}});
    vars.push_back({"b2", {3}});
    feeds.push_back({"b1", MakeTensor<T>({5}, Cast<T>(RandomValues(5, 14)))});
    feeds.push_back({"b2", MakeTensor<T>({3}, Cast<T>(RandomValues(3, 15)))});
    wrt.push_back("b1");
    wrt.push_back("b2");
  }
  const auto layer = [&](const std::string& in, const std::string& w,
                         const std::string& b, const std::string& out,
                         bool fused) {
    const std::string pre = fused ? out : out + "_pre";
    std::vector<std::string> ops = {absl::StrCat(
        "type: \"fc\" inputs { slot: \"X\" vars: \"", in,
        "\" } inputs { slot: \"W\" vars: \"", w, "\" } ",
        bias ? absl::StrCat("inputs { slot: \"Bias\" vars: \"", b, "\" } ")
             : "",
        "outputs { slot: \"Out\" vars: \"", pre,
        "\" } attrs { name: \"in_num_col_dims\" i: 2 }",
        fused ? absl::StrCat(" attrs { name: \"activation_type\" s: \"",
                             activation, "\" }")
              : "")};
    if (!fused) ops.push_back(GeluOp(activation, pre, out));
    return ops;
  };
  std::vector<std::vector<T>> results[2];
  for (bool fused : {false, true}) {
    std::vector<std::string> ops = layer("x", "w1", "b1", "h", fused);
    for (std::string& op : layer("h", "w2", "b2", "out", fused)) {
      ops.push_back(std::move(op));
    }
    results[fused] =
        RunWithGradients<T>(MakeNet(vars, DataTypeOf<T>(), ops), feeds, wrt);
  }
  ASSERT_EQ(results[1].size(), wrt.size() + 1);
  ASSERT_EQ(results[0].size(), wrt.size() + 1);
  for (size_t i = 0; i < results[1].size(); ++i) {
    SCOPED_TRACE(i == 0 ? std::string("out") : wrt[i - 1] + "@GRAD");
    EXPECT_EQ(results[1][i], results[0][i]);
  }
}

TEST(FcGeluGradTest, FusedMatchesFcThenGelu) {
  for (const char* activation : {"gelu", "gelu_tanh"}) {
    for (bool bias : {true, false}) {
      CheckFusedMatchesUnfused<float>(activation, bias);
      CheckFusedMatchesUnfused<double>(activation, bias);
    }
  }
}

TEST(FcGeluGradTest, NumericCheck) {
  for (const char* activation : {"gelu", "gelu_tanh"}) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE(
          absl::StrCat(activation, bias ? " with" : " without", " bias"));
      std::vector<Feed> feeds = {
          {"x", MakeTensor<double>({2, 3, 2}, RandomValues(12, 40))},
          {"w", MakeTensor<double>({2, 4}, RandomValues(8, 41))}};
      std::vector<std::string> inputs = {"x", "w"};
      if (bias) {
        feeds.push_back({"b", MakeTensor<double>({4}, RandomValues(4, 42))});
        inputs.push_back("b");
      }
      const absl::Status status = CheckGradientTogetherAndAlone(
          FcOp(bias, 2, activation), feeds, inputs);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

// matmul, add and gelu as the ONNX importer writes a feed-forward layer:
// prepared, they run as one fc with a fused gelu (PrepareOptions'
// fuse_ops); fetching the pre-activation "sum", which the fusion removes,
// runs the block as written and gives the same output.
TEST(FcGeluFusionTest, ImportedLayerFusesAndItsPreActivationCanBeFetched) {
  for (const char* activation : {"gelu", "gelu_tanh"}) {
    SCOPED_TRACE(activation);
    const NetDef net = MakeNet(
        {{"x", {2, 5, 3}},
         {"w", {3, 4}},
         {"b", {4}},
         {"product", {2, 5, 4}},
         {"sum", {2, 5, 4}},
         {"y", {2, 5, 4}}},
        kFloat32,
        {"type: \"matmul\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
         "\"Y\" vars: \"w\" } outputs { slot: \"Out\" vars: \"product\" }",
         "type: \"add\" inputs { slot: \"X\" vars: \"product\" } inputs { "
         "slot: \"Y\" vars: \"b\" } outputs { slot: \"Out\" vars: \"sum\" }",
         GeluOp(activation, "sum", "y")});
    const std::vector<Feed> feeds = {
        {"x", MakeTensor<float>({2, 5, 3}, RandomFloats(30, 20))},
        {"w", MakeTensor<float>({3, 4}, RandomFloats(12, 21))},
        {"b", MakeTensor<float>({4}, RandomFloats(4, 22))}};
    Executor executor;
    auto prepared = executor.Prepare(net, 0, CPUPlace());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    Scope scope;
    auto fused = executor.Run(*prepared, scope, feeds, {"y"});
    ASSERT_TRUE(fused.ok()) << fused.status();
    auto as_written = executor.Run(*prepared, scope, feeds, {"sum", "y"});
    ASSERT_TRUE(as_written.ok()) << as_written.status();
    auto gelu =
        RunOp(GeluOp(activation, "s", "g"), {{"s", (*as_written)[0]}}, {"g"});
    ASSERT_TRUE(gelu.ok()) << gelu.status();
    EXPECT_EQ(Values<float>((*as_written)[1]), Values<float>((*gelu)[0]));
    EXPECT_EQ(Values<float>((*fused)[0]), Values<float>((*gelu)[0]));
  }
}

}  // namespace
}  // namespace scopeflow
