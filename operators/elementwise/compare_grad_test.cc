// where's gradient (to X and Y, none to Condition) and the comparisons,
// which have none.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kWhere[] =
    "type: \"where\" inputs { slot: \"Condition\" vars: \"c\" } inputs { "
    "slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" vars: \"y\" } outputs { "
    "slot: \"Out\" vars: \"out\" }";

Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-2, 2);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = uniform(rng);
  return MakeTensor<double>(dims, values);
}

// A bool tensor alternating true and false, starting with `first`.
Tensor Alternating(const Dims& dims, bool first) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), kBool, dims).ok());
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.data<bool>()[i] = (i % 2 == 0) == first;
  }
  return tensor;
}

TEST(WhereGradTest, NumericCheckWithBroadcasting) {
  struct Shapes {
    Dims c, x, y;
  };
  const std::vector<Shapes> cases = {
      {{2, 3}, {2, 3}, {2, 3}}, {{2, 3}, {2, 3}, {3}},
      {{2, 3}, {3}, {1}},     // Condition widest: both inputs reduce.
      {{2, 1}, {3}, {2, 3}},  // Condition broadcast too.
      {{1}, {2, 1, 4}, {3, 1}}, {{3, 1}, {2, 1, 4}, {1}},
  };
  uint32_t seed = 1;
  for (const Shapes& s : cases) {
    for (bool first : {true, false}) {
      SCOPED_TRACE(absl::StrCat(DimsToString(s.c), " ", DimsToString(s.x), " ",
                                DimsToString(s.y), " first ", first));
      const std::vector<Feed> feeds = {{"c", Alternating(s.c, first)},
                                       {"x", Random(s.x, seed++)},
                                       {"y", Random(s.y, seed++)}};
      // Condition is bool, so only x and y are differentiated.
      const absl::Status status =
          CheckGradientTogetherAndAlone(kWhere, feeds, {"x", "y"});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(WhereGradTest, Float32Values) {
  auto out = RunOp(
      "type: \"where_grad\" inputs { slot: \"Condition\" vars: \"c\" } inputs "
      "{ slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" vars: \"y\" } inputs "
      "{ slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: "
      "\"dx\" } outputs { slot: \"Y@GRAD\" vars: \"dy\" }",
      {{"c", Alternating({2, 3}, true)},
       {"x", MakeTensor<float>({2, 3}, {0, 0, 0, 0, 0, 0})},
       {"y", MakeTensor<float>({3}, {0, 0, 0})},
       {"g", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}},
      {"dx", "dy"});
  ASSERT_TRUE(out.ok()) << out.status();
  // Condition is true, false, true / false, true, false.
  EXPECT_EQ((*out)[0].dtype(), kFloat32);
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 0, 3, 0, 5, 0));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(3));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(4, 2, 6));
}

TEST(WhereGradTest, ConditionMustBeBool) {
  absl::Status status = PrepareOp(
      "type: \"where_grad\" inputs { slot: \"Condition\" vars: \"c\" } inputs "
      "{ slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" vars: \"y\" } inputs "
      "{ slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: "
      "\"dx\" }",
      {{"c", MakeTensor<float>({2}, {1, 0})},
       {"x", MakeTensor<float>({2}, {0, 0})},
       {"y", MakeTensor<float>({2}, {0, 0})},
       {"g", MakeTensor<float>({2}, {1, 2})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (where_grad): input \"Condition\" (variable "
                        "\"c\") has dtype float32: expected bool"));
}

NetDef ParseNet(const std::string& block) {
  NetDef net;
  const std::string text =
      "format_version: 1 name: \"net\" blocks { " + block + " }";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  return net;
}

// out = where(less(x, y), x, y), the elementwise minimum, with parameters
// x [2, 3] and y [3]: the comparison passes no gradient, where passes
// none to its Condition, and x and y get theirs.
TEST(WhereGradTest, AppendBackwardThroughAComparisonAndWhere) {
  NetDef net = ParseNet(
      "vars { name: \"x\" dtype: DATA_TYPE_FLOAT32 shape: [2, 3] persistable: "
      "true } "
      "vars { name: \"y\" dtype: DATA_TYPE_FLOAT32 shape: 3 persistable: true "
      "} "
      "ops { type: \"less\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Y\" vars: \"y\" } outputs { slot: \"Out\" vars: \"c\" } } "
      "ops { type: \"where\" inputs { slot: \"Condition\" vars: \"c\" } "
      "inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"Y\" vars: \"y\" } "
      "outputs { slot: \"Out\" vars: \"out\" } }");
  auto grads = AppendBackward(net, "out");
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 2u);
  EXPECT_EQ((*grads)[0].var, "x");
  EXPECT_EQ((*grads)[1].var, "y");
  // One gradient op, for where, binding no Condition@GRAD.
  int where_grads = 0;
  for (const OpDef& op : net.blocks(0).ops()) {
    EXPECT_NE(op.type(), "less_grad");
    if (op.type() != "where_grad") continue;
    ++where_grads;
    for (const OpSlot& slot : op.outputs()) {
      EXPECT_NE(slot.slot(), "Condition@GRAD");
    }
  }
  EXPECT_EQ(where_grads, 1);

  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  *scope.Var("x")->GetMutable<Tensor>().value() =
      MakeTensor<float>({2, 3}, {1, 5, -1, 4, 0, 2});
  *scope.Var("y")->GetMutable<Tensor>().value() =
      MakeTensor<float>({3}, {3, 2, 1});
  auto out = executor.Run(*prepared, scope, {}, {"out", "x@GRAD", "y@GRAD"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, -1, 3, 0, 1));
  // x < y: true, false, true / false, true, false.
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1, 0, 1, 0, 1, 0));
  // y's column counts of x >= y.
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(1, 1, 1));
}

TEST(CompareGradTest, ComparisonsHaveNoGradient) {
  for (const char* op :
       {"equal", "less", "greater", "less_equal", "greater_equal"}) {
    SCOPED_TRACE(op);
    const OpSpec* spec = OpRegistry::Global().Find(op);
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(spec->grad(), nullptr);
    EXPECT_EQ(OpRegistry::Global().Find(absl::StrCat(op, "_grad")), nullptr);
  }
  EXPECT_NE(OpRegistry::Global().Find("where")->grad(), nullptr);
  EXPECT_THAT(CheckGradient("type: \"less\" inputs { slot: \"X\" vars: \"x\" } "
                            "inputs { slot: \"Y\" vars: \"y\" } outputs { "
                            "slot: \"Out\" vars: \"out\" }",
                            {{"x", Random({2}, 1)}, {"y", Random({2}, 2)}})
                  .message(),
              HasSubstr("op less has no gradient"));
}

}  // namespace
}  // namespace scopeflow
