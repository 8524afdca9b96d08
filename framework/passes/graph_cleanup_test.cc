// Dead-code elimination, common-subexpression elimination and transposes
// folded into matmuls, each on small nets: what the passes leave, and that
// it computes what the net as written does.

#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/passes/common_subexpression.h"
#include "framework/passes/dead_code.h"
#include "framework/passes/transpose_matmul.h"
#include "framework/prepare.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

std::string Op(const std::string& type, const std::string& inputs,
               const std::string& out, const std::string& attrs = "") {
  return "ops { type: '" + type + "' " + inputs +
         " outputs { slot: 'Out' vars: '" + out + "' } " + attrs + " }\n";
}
std::string In(const std::string& slot, const std::string& var) {
  return "inputs { slot: '" + slot + "' vars: '" + var + "' } ";
}
std::string Perm(const std::vector<int>& perm) {
  std::string text = "attrs { name: 'perm' ints { ";
  for (int p : perm) text += "values: " + std::to_string(p) + " ";
  return text + "} }";
}

// A net feeding x [2, 3, 4] and y [2, 5, 4] (float32) into `ops`.
NetDef Net(const std::string& ops) {
  NetDef net;
  const std::string text =
      "name: 'cleanup' format_version: 1 blocks { "
      "vars { name: 'x' dtype: DATA_TYPE_FLOAT32 shape: [2, 3, 4] }\n"
      "vars { name: 'y' dtype: DATA_TYPE_FLOAT32 shape: [2, 5, 4] }\n" +
      ops + "}";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  return net;
}

Tensor Filled(const Dims& dims, float start, float step) {
  Tensor t;
  EXPECT_TRUE(t.Allocate(CPUPlace(), kFloat32, dims).ok());
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data<float>()[i] = start + step * static_cast<float>(i % 23);
  }
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

struct Ran {
  std::vector<std::string> op_types;
  std::vector<std::string> passes;
  std::vector<std::vector<float>> fetched;
};

Ran PrepareAndRun(const NetDef& net, const PrepareOptions& options,
                  const std::vector<std::string>& fetches) {
  Ran ran;
  absl::StatusOr<PreparedNet> prepared =
      PrepareNet(net, 0, CPUPlace(), options);
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  if (!prepared.ok()) return ran;
  for (const PreparedOp& op : prepared->ops()) {
    ran.op_types.push_back(op.spec->type());
  }
  ran.passes = prepared->passes();
  const PreparedNet& plan = prepared->PlanFor(fetches);
  // The nets that do not read y have x alone for input.
  std::vector<Feed> feeds = {{"x", Filled({2, 3, 4}, -1.0f, 0.1f)}};
  if (plan.input_names().size() == 2) {
    feeds.push_back({"y", Filled({2, 5, 4}, 0.5f, -0.07f)});
  }
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> fetched =
      Executor().Run(plan, scope, feeds, fetches);
  EXPECT_TRUE(fetched.ok()) << fetched.status();
  if (!fetched.ok()) return ran;
  for (const Tensor& t : *fetched) ran.fetched.push_back(Values(t));
  return ran;
}

// Runs `net` with every pass and as written; both must fetch the same.
Ran CompareWithAsWritten(const NetDef& net,
                         const std::vector<std::string>& fetches) {
  const Ran as_written =
      PrepareAndRun(net, PrepareOptions::AsWritten(), fetches);
  const Ran passed = PrepareAndRun(net, PrepareOptions(), fetches);
  EXPECT_EQ(passed.fetched, as_written.fetched);
  return passed;
}

// Runs `pass` alone over `current`, a rewrite of block 0 of `written`.
absl::StatusOr<bool> RunPass(const GraphPass& pass, const NetDef& written,
                             PassBlock& current) {
  NetDef net = written;
  *net.mutable_blocks(0) = current.block;
  absl::StatusOr<PreparedNet> prepared = PrepareNet(
      net, 0, CPUPlace(), PrepareOptions::AsWritten());
  if (!prepared.ok()) return prepared.status();
  const Place place = CPUPlace();
  const PassContext context{place, *prepared, written.blocks(0)};
  return pass.Run(current, context);
}

std::vector<std::string> Types(const BlockDef& block) {
  std::vector<std::string> types;
  for (const OpDef& op : block.ops()) types.push_back(op.type());
  return types;
}

TEST(DeadCodeTest, RemovesWhatOnlyRemovedReadersRead) {
  const NetDef written =
      Net(Op("relu", In("X", "x"), "a") + Op("exp", In("X", "a"), "b") +
          Op("sigmoid", In("X", "b"), "c") + Op("tanh", In("X", "x"), "t"));
  PassBlock current;
  current.block = written.blocks(0);
  // As if an earlier pass had removed the sigmoid.
  current.block.mutable_ops()->DeleteSubrange(2, 1);
  current.source_op = {0, 1, 3};
  absl::StatusOr<bool> changed = RunPass(DeadCodePass(), written, current);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_THAT(Types(current.block), ElementsAre("tanh"));
  EXPECT_THAT(current.source_op, ElementsAre(3));
}

TEST(DeadCodeTest, KeepsWhatNothingReadAsWritten) {
  // b and t are the net's results: nothing reads them as written.
  const NetDef written = Net(Op("relu", In("X", "x"), "a") +
                             Op("exp", In("X", "a"), "b") +
                             Op("tanh", In("X", "x"), "t"));
  PassBlock current;
  current.block = written.blocks(0);
  current.source_op = {0, 1, 2};
  absl::StatusOr<bool> changed = RunPass(DeadCodePass(), written, current);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(DeadCodeTest, KeepsRandomOps) {
  const NetDef written =
      Net(Op("dropout", In("X", "x"), "d") + Op("relu", In("X", "d"), "r") +
          Op("tanh", In("X", "x"), "t"));
  PassBlock current;
  current.block = written.blocks(0);
  current.block.mutable_ops()->DeleteSubrange(1, 1);
  current.source_op = {0, 2};
  absl::StatusOr<bool> changed = RunPass(DeadCodePass(), written, current);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(CommonSubexpressionTest, MergesDuplicatesAndKeepsTheirFetchesWorking) {
  const NetDef net =
      Net(Op("exp", In("X", "x"), "a") + Op("exp", In("X", "x"), "b") +
          Op("scale", In("X", "a"), "a2", "attrs { name: 'scale' f: 2 }") +
          Op("scale", In("X", "b"), "b2", "attrs { name: 'scale' f: 2 }") +
          Op("scale", In("X", "b"), "b3", "attrs { name: 'scale' f: 3 }") +
          Op("add", In("X", "a2") + In("Y", "b2"), "s") +
          Op("add", In("X", "s") + In("Y", "b3"), "out"));
  const Ran ran = CompareWithAsWritten(net, {"out"});
  // The second exp goes, then the scale by 2 it fed; the scale by 3 stays.
  EXPECT_THAT(ran.op_types,
              ElementsAre("exp", "scale", "scale", "add", "add"));
  EXPECT_THAT(ran.passes, ::testing::Contains("common_subexpression"));
  // b is gone from the rewritten block: fetching it runs the net as written.
  const Ran fetch_b = CompareWithAsWritten(net, {"b", "out"});
  ASSERT_EQ(fetch_b.fetched.size(), 2u);
  EXPECT_EQ(fetch_b.fetched[1], ran.fetched[0]);
}

TEST(CommonSubexpressionTest, KeepsRandomOpsAndDifferentAttributes) {
  const NetDef net = Net(
      Op("dropout", In("X", "x"), "d1") + Op("dropout", In("X", "x"), "d2") +
      Op("add", In("X", "d1") + In("Y", "d2"), "s") +
      Op("scale", In("X", "x"), "a", "attrs { name: 'scale' f: 2 }") +
      Op("scale", In("X", "x"), "b", "attrs { name: 'scale' f: -2 }") +
      Op("add", In("X", "a") + In("Y", "b"), "zero"));
  const Ran ran = PrepareAndRun(net, PrepareOptions(), {"zero"});
  EXPECT_THAT(ran.op_types, ElementsAre("dropout", "dropout", "add", "scale",
                                        "scale", "add"));
}

TEST(TransposeMatmulTest, FoldsATransposeOfTheLastTwoAxes) {
  // x [2, 3, 4] @ transpose(y [2, 5, 4]) = [2, 3, 5].
  const NetDef net =
      Net(Op("transpose", In("X", "y"), "y_t", Perm({0, 2, 1})) +
          Op("matmul", In("X", "x") + In("Y", "y_t"), "out"));
  const Ran ran = CompareWithAsWritten(net, {"out"});
  EXPECT_THAT(ran.op_types, ElementsAre("matmul"));
  EXPECT_THAT(ran.passes, ElementsAre("transpose_matmul", "dead_code"));
  ASSERT_EQ(ran.fetched.size(), 1u);
  EXPECT_EQ(ran.fetched[0].size(), 2u * 3 * 5);
}

TEST(TransposeMatmulTest, NegatesAFlagAlreadySet) {
  // transpose(x) read with transpose_x: x itself, untransposed.
  const NetDef net =
      Net(Op("transpose", In("X", "x"), "x_t", Perm({0, 2, 1})) +
          Op("matmul", In("X", "x_t") + In("Y", "y"), "out",
             "attrs { name: 'transpose_x' b: true } "
             "attrs { name: 'transpose_y' b: true }"));
  const Ran ran = CompareWithAsWritten(net, {"out"});
  EXPECT_THAT(ran.op_types, ElementsAre("matmul"));
}

TEST(TransposeMatmulTest, KeepsOtherPermutationsAndUnreadTransposes) {
  // perm [1, 0, 2] and [1, 2, 0] move the batch axis: no matmul flag does
  // that. x_back undoes x_t but is a result of the net (nothing reads it
  // as written): it stays computed.
  const NetDef net =
      Net(Op("transpose", In("X", "x"), "x_t", Perm({1, 0, 2})) +
          Op("transpose", In("X", "x_t"), "x_back", Perm({1, 0, 2})) +
          Op("transpose", In("X", "x"), "x_t2", Perm({1, 2, 0})) +
          Op("matmul", In("X", "x_t") + In("Y", "x_t2"), "out"));
  const Ran ran = CompareWithAsWritten(net, {"out", "x_back"});
  EXPECT_THAT(ran.op_types,
              ElementsAre("transpose", "transpose", "transpose", "matmul"));
}

TEST(TransposeMatmulTest, RemovesTransposesThatCancel) {
  const NetDef net =
      Net(Op("transpose", In("X", "x"), "t", Perm({2, 0, 1})) +
          Op("transpose", In("X", "t"), "u", Perm({1, 2, 0})) +
          Op("relu", In("X", "u"), "out"));
  const Ran ran = CompareWithAsWritten(net, {"out"});
  EXPECT_THAT(ran.op_types, ElementsAre("relu"));
  // [2, 0, 1] then [2, 0, 1] is no identity: both stay.
  const NetDef kept =
      Net(Op("transpose", In("X", "x"), "t", Perm({2, 0, 1})) +
          Op("transpose", In("X", "t"), "u", Perm({2, 0, 1})) +
          Op("relu", In("X", "u"), "out"));
  EXPECT_THAT(CompareWithAsWritten(kept, {"out"}).op_types,
              ElementsAre("transpose", "transpose", "relu"));
}

}  // namespace
}  // namespace scopeflow
