// while's step outputs: the values a body variable holds at the end of each
// iteration, stacked along a new first axis (ONNX Loop's scan outputs).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/control/while/counter_net.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The counter loop (counter_net.h), also stacking s after each iteration
// (through a copy, "s_step") and i * 10 ("i10", float) as step outputs.
NetDef StackingNet(const std::string& step_outputs =
                       R"pb(outputs { slot: "StepOutputs" vars: [ "ss", "is" ] }
                            attrs {
                              name: "step_outputs"
                              strings { values: [ "s_step", "i10" ] }
                            })pb") {
  std::string blocks = absl::StrReplaceAll(
      kCounterLoopBlocks,
      {{R"pb(attrs { name: "sub_block" block_idx: 1 })pb",
        absl::StrCat(R"pb(attrs { name: "sub_block" block_idx: 1 })pb",
                     step_outputs)},
       {R"pb(    ops {
      type: "less"
      inputs { slot: "X" vars: "i" }
      inputs { slot: "Y" vars: "n" }
      outputs { slot: "Out" vars: "c" }
    }
  }
)pb",
        R"pb(    ops {
      type: "less"
      inputs { slot: "X" vars: "i" }
      inputs { slot: "Y" vars: "n" }
      outputs { slot: "Out" vars: "c" }
    }
    ops {
      type: "assign"
      inputs { slot: "X" vars: "s" }
      outputs { slot: "Out" vars: "s_step" }
    }
    ops {
      type: "cast"
      inputs { slot: "X" vars: "i" }
      outputs { slot: "Out" vars: "i_float" }
      attrs { name: "out_dtype" i: 1 }
    }
    ops {
      type: "scale"
      inputs { slot: "X" vars: "i_float" }
      outputs { slot: "Out" vars: "i10" }
      attrs { name: "scale" f: 10 }
    }
  }
)pb"}});
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"loop\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

absl::StatusOr<std::vector<Tensor>> RunNet(const NetDef& net, int64_t n,
                                           const std::vector<std::string>& out) {
  Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      executor.Prepare(net, 0, CPUPlace()));
  Scope scope;
  return executor.Run(prepared, scope,
                      {{"n", MakeTensor<int64_t>({1}, {n})}}, out);
}

TEST(WhileStepOutputsTest, StacksEachIterationsValue) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(StackingNet(), 4, {"ss", "is", "s"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (Dims{4, 1}));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1, 3, 6, 10));
  EXPECT_EQ((*out)[1].dims(), (Dims{4, 1}));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(10, 20, 30, 40));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(10));
}

TEST(WhileStepOutputsTest, NoIterationGivesAnEmptyStackOfTheInferredShape) {
  absl::StatusOr<std::vector<Tensor>> out = RunNet(StackingNet(), 0, {"ss", "is"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (Dims{0, 1}));
  EXPECT_EQ((*out)[0].dtype(), kInt64);
  EXPECT_EQ((*out)[1].dims(), (Dims{0, 1}));
  EXPECT_EQ((*out)[1].dtype(), kFloat32);
}

TEST(WhileStepOutputsTest, EachOutputNeedsAName) {
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      StackingNet(R"pb(outputs { slot: "StepOutputs" vars: [ "ss", "is" ] }
                       attrs {
                         name: "step_outputs"
                         strings { values: [ "s_step" ] }
                       })pb"),
      2, {"ss"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("attribute \"step_outputs\" names 1 variables for 2 "
                        "outputs \"StepOutputs\""));
}

TEST(WhileStepOutputsTest, AStepOutputMustBeAVariableOfTheBody) {
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      StackingNet(R"pb(outputs { slot: "StepOutputs" vars: "ss" }
                       attrs {
                         name: "step_outputs"
                         strings { values: [ "nothing" ] }
                       })pb"),
      2, {"ss"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("nothing"));
}

}  // namespace
}  // namespace scopeflow
