#include "framework/passes/pipeline.h"

#include <memory>
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/op_spec.h"
#include "framework/prepare_block.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::Status InferCopy(InferContext& context) {
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

absl::Status CopyKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  for (int64_t i = 0; i < x.numel(); ++i) {
    out->data<float>()[i] = x.data<float>()[i];
  }
  return absl::OkStatus();
}

SF_REGISTER_OP(pipeline_test_copy)
    .Input("X")
    .Output("Out")
    .Infer(InferCopy)
    .Kernel(DeviceType::kCPU, kFloat32, &CopyKernel);

// x -> a -> b -> y, three copies.
NetDef CopyChain() {
  NetDef net;
  google::protobuf::TextFormat::ParseFromString(R"pb(
    name: "chain"
    format_version: 1
    blocks {
      vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ 2 ] }
      ops {
        type: "pipeline_test_copy"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "a" }
      }
      ops {
        type: "pipeline_test_copy"
        inputs { slot: "X" vars: "a" }
        outputs { slot: "Out" vars: "b" }
      }
      ops {
        type: "pipeline_test_copy"
        inputs { slot: "X" vars: "b" }
        outputs { slot: "Out" vars: "y" }
      }
    }
  )pb",
                                                &net);
  return net;
}

// Merges the first two ops of the block (the first copy's output is the
// second's input) into one copy; does nothing to a block of one op.
class MergeFirstCopies final : public GraphPass {
 public:
  absl::string_view name() const override { return "merge_first_copies"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override {
    if (block.block.ops_size() < 2) return false;
    BlockDef merged = block.block;
    *merged.mutable_ops(1)->mutable_inputs(0) = block.block.ops(0).inputs(0);
    merged.mutable_ops()->DeleteSubrange(0, 1);
    std::vector<int> source;
    for (int i = 1; i < block.block.ops_size(); ++i) source.push_back(i);
    block.Replace(std::move(merged), source);
    return true;
  }
};

// Records how many ops the prepared block it is given has.
class CountOps final : public GraphPass {
 public:
  explicit CountOps(std::vector<int>* counts) : counts_(counts) {}
  absl::string_view name() const override { return "count_ops"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override {
    counts_->push_back(static_cast<int>(context.prepared.ops().size()));
    return false;
  }

 private:
  std::vector<int>* counts_;
};

// Leaves a block whose first op reads a variable nothing writes.
class ReadUndefined final : public GraphPass {
 public:
  absl::string_view name() const override { return "read_undefined"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override {
    block.block.mutable_ops(0)->mutable_inputs(0)->set_vars(0, "nowhere");
    return true;
  }
};

class Fails final : public GraphPass {
 public:
  absl::string_view name() const override { return "fails"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override {
    return absl::InvalidArgumentError("cannot rewrite this");
  }
};

absl::StatusOr<PreparedNet> RunPipeline(const PassPipeline& pipeline,
                                        const NetDef& net) {
  absl::StatusOr<PreparedNet> as_written =
      PrepareAsWritten(net, 0, CPUPlace());
  if (!as_written.ok()) return as_written.status();
  return pipeline.Run(net, 0, *std::move(as_written));
}

TEST(PassPipelineTest, EachPassSeesTheBlockThePassesBeforeItLeft) {
  std::vector<int> counts;
  PassPipeline pipeline;
  pipeline.Add(std::make_unique<CountOps>(&counts))
      .Add(std::make_unique<MergeFirstCopies>())
      .Add(std::make_unique<CountOps>(&counts))
      .Add(std::make_unique<MergeFirstCopies>())
      .Add(std::make_unique<CountOps>(&counts));
  absl::StatusOr<PreparedNet> prepared = RunPipeline(pipeline, CopyChain());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_THAT(counts, ElementsAre(3, 2, 1));
  EXPECT_TRUE(prepared->rewritten());
  EXPECT_THAT(prepared->passes(),
              ElementsAre("merge_first_copies", "merge_first_copies"));
  ASSERT_EQ(prepared->ops().size(), 1u);
  // Errors name the op as written that the merged op comes from.
  EXPECT_EQ(prepared->ops()[0].index, 2);
}

TEST(PassPipelineTest, NoChangeGivesTheBlockAsWritten) {
  std::vector<int> counts;
  PassPipeline pipeline;
  pipeline.Add(std::make_unique<CountOps>(&counts));
  absl::StatusOr<PreparedNet> prepared = RunPipeline(pipeline, CopyChain());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(prepared->rewritten());
  EXPECT_TRUE(prepared->passes().empty());
  EXPECT_EQ(prepared->ops().size(), 3u);
}

TEST(PassPipelineTest, FetchingAVariableAPassRemovedRunsTheBlockAsWritten) {
  PassPipeline pipeline;
  pipeline.Add(std::make_unique<MergeFirstCopies>());
  absl::StatusOr<PreparedNet> prepared = RunPipeline(pipeline, CopyChain());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(&prepared->PlanFor({"y"}), &*prepared);
  const PreparedNet& plan = prepared->PlanFor({"a"});
  EXPECT_EQ(plan.ops().size(), 3u);

  Tensor x;
  ASSERT_TRUE(x.Allocate(CPUPlace(), kFloat32, {2}).ok());
  x.data<float>()[0] = 1.5f;
  x.data<float>()[1] = -2.0f;
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> fetched =
      Executor().Run(*prepared, scope, {{"x", x}}, {"a", "y"});
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  for (const Tensor& t : *fetched) {
    EXPECT_EQ(t.data<float>()[0], 1.5f);
    EXPECT_EQ(t.data<float>()[1], -2.0f);
  }
}

TEST(PassPipelineTest, ABlockThatDoesNotPrepareNamesThePass) {
  PassPipeline pipeline;
  pipeline.Add(std::make_unique<ReadUndefined>());
  absl::StatusOr<PreparedNet> prepared = RunPipeline(pipeline, CopyChain());
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(prepared.status().message(),
              HasSubstr("pass \"read_undefined\" rewrote net \"chain\" "
                        "block 0 into one that does not prepare"));
  EXPECT_THAT(prepared.status().message(), HasSubstr("\"nowhere\""));
}

TEST(PassPipelineTest, APassErrorNamesThePass) {
  PassPipeline pipeline;
  pipeline.Add(std::make_unique<Fails>());
  absl::StatusOr<PreparedNet> prepared = RunPipeline(pipeline, CopyChain());
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(prepared.status().message(),
            "pass \"fails\" on net \"chain\" block 0: cannot rewrite this");
}

}  // namespace
}  // namespace scopeflow
