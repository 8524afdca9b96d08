// The executor's op fusion (framework/passes/op_fusion.h) on real ops: an MLP
// written as ONNX writes it (matmul, add, relu) runs as fc ops with the
// results of the net as written, fetches of the variables fused away still
// work, and a training net's gradients are those of the net as written.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/benchmarks/net_text.h"
#include "tests/onnx_style_mlp.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class OpFusionNetTest : public ::testing::Test {
 protected:
  OpFusionNetTest() {
    OnnxStyleMlp mlp = MakeOnnxStyleMlp();
    net_ = std::move(mlp.net);
    for (auto& [name, tensor] : mlp.parameters) {
      **scope_.Var(name)->GetMutable<Tensor>() = std::move(tensor);
    }
  }

  void Parameter(NetText& text, const std::string& name,
                 const std::vector<int64_t>& shape, uint32_t seed) {
    text.Var(name, shape, true);
    const Dims dims(shape.begin(), shape.end());
    **scope_.Var(name)->GetMutable<Tensor>() =
        MakeTensor<float>(dims, RandomFloats(NumElements(dims), seed));
  }

  std::vector<Tensor> Run(const NetDef& net, const ExecutorOptions& options,
                          const std::vector<std::string>& fetches) {
    Executor executor(options);
    absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
    EXPECT_TRUE(prepared.ok()) << prepared.status();
    if (!prepared.ok()) return {};
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, scope_, {{"x", OnnxStyleMlpInput(4)}}, fetches);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : std::vector<Tensor>();
  }

  Scope scope_;
  NetDef net_;
};

TEST_F(OpFusionNetTest, RunsTheLayersAsFcOps) {
  absl::StatusOr<PreparedNet> prepared =
      Executor().Prepare(net_, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_TRUE(prepared->rewritten());
  EXPECT_THAT(PreparedOpTypes(*prepared),
              ElementsAre("fc+relu", "fc", "softmax"));
  // Errors name the ops of the net as written: the first of those fused.
  std::vector<int> indices;
  for (const PreparedOp& op : prepared->ops()) indices.push_back(op.index);
  EXPECT_THAT(indices, ElementsAre(0, 3, 5));
}

TEST_F(OpFusionNetTest, GivesTheResultsOfTheNetAsWritten) {
  const std::vector<Tensor> fused = Run(net_, {}, {"probabilities"});
  const std::vector<Tensor> written =
      Run(net_, ExecutorOptions::AsWritten(), {"probabilities"});
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(written.size(), 1u);
  ExpectNearTensors(fused[0], written[0]);
}

TEST_F(OpFusionNetTest, FetchesAVariableFusedAway) {
  const std::vector<std::string> fetches = {"probabilities", "h0.product",
                                            "h0"};
  absl::StatusOr<PreparedNet> prepared =
      Executor().Prepare(net_, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_NE(&prepared->PlanFor(fetches), &*prepared);
  EXPECT_EQ(&prepared->PlanFor({"probabilities", "h0.relu"}), &*prepared);
  const std::vector<Tensor> fused = Run(net_, {}, fetches);
  const std::vector<Tensor> written =
      Run(net_, ExecutorOptions::AsWritten(), fetches);
  ASSERT_EQ(fused.size(), 3u);
  ASSERT_EQ(written.size(), 3u);
  EXPECT_EQ(fused[1].dims(), (Dims{4, 5}));
  for (int i = 0; i < 3; ++i) ExpectNearTensors(fused[i], written[i]);
}

// A run-time error inside a fused op names the op of the net as written
// and what runs in its place.
TEST_F(OpFusionNetTest, ErrorsNameTheOpAsWrittenAndTheFusedOp) {
  // x of unknown width: a feed 7 wide passes the feed's check and fails in
  // the first layer's inference at run time.
  NetDef net = net_;
  for (VarDef& var : *net.mutable_blocks(0)->mutable_vars()) {
    if (var.name() == "x") var.set_shape(1, -1);
  }
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_EQ(PreparedOpTypes(*prepared)[0], "fc+relu");
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope_,
                   {{"x", MakeTensor<float>({4, 7}, RandomFloats(28, 3))}},
                   {"probabilities"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("op 0 (matmul, run as fc): "));
  EXPECT_THAT(out.status().message(), HasSubstr("\"x\""));
}

TEST_F(OpFusionNetTest, LeavesTheNetAloneOffTheOption) {
  ExecutorOptions options;
  options.prepare.fuse_ops = false;
  options.prepare.channels_last = false;
  absl::StatusOr<PreparedNet> prepared =
      Executor(options).Prepare(net_, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(prepared->rewritten());
  EXPECT_EQ(prepared->ops().size(),
            static_cast<size_t>(net_.blocks(0).ops_size()));
}

// A training net of fc + relu layers: the forward pass fuses each relu into
// its fc (the gradient ops read only the relu's output, not the fc's), and
// every parameter's gradient is the one of the net as written.
TEST_F(OpFusionNetTest, GradientsOfATrainingNetMatchTheNetAsWritten) {
  NetText text;
  text.Var("x", {-1, 6});
  Parameter(text, "fw0", {6, 5}, 30);
  Parameter(text, "fb0", {5}, 31);
  Parameter(text, "fw1", {5, 3}, 32);
  text.Op("fc", {{"X", "x"}, {"W", "fw0"}, {"Bias", "fb0"}}, "f0");
  text.Op("relu", {{"X", "f0"}}, "f0.relu");
  text.Op("fc", {{"X", "f0.relu"}, {"W", "fw1"}}, "f1");
  text.Op("relu", {{"X", "f1"}}, "f1.relu");
  text.Op("mean", {{"X", "f1.relu"}}, "loss");
  NetDef train = text.Build();
  absl::StatusOr<std::vector<VarGrad>> grads = AppendBackward(train, "loss");
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<std::string> fetches;
  for (const VarGrad& grad : *grads) fetches.push_back(grad.grad);
  ASSERT_EQ(fetches.size(), 3u);
  absl::StatusOr<PreparedNet> prepared =
      Executor().Prepare(train, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(&prepared->PlanFor(fetches), &*prepared);
  const std::vector<std::string> types = PreparedOpTypes(*prepared);
  EXPECT_EQ(std::count(types.begin(), types.end(), "fc+relu"), 2);
  EXPECT_EQ(std::count(types.begin(), types.end(), "relu"), 0);
  const std::vector<Tensor> fused = Run(train, {}, fetches);
  const std::vector<Tensor> written =
      Run(train, ExecutorOptions::AsWritten(), fetches);
  ASSERT_EQ(fused.size(), 3u);
  ASSERT_EQ(written.size(), 3u);
  for (size_t i = 0; i < fetches.size(); ++i) {
    SCOPED_TRACE(fetches[i]);
    ExpectNearTensors(fused[i], written[i]);
  }
}

}  // namespace
}  // namespace scopeflow
