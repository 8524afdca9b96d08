// conditional_block, and through it the executor's handling of blocks:
// enclosing variables, shadowing, nesting, the checks of Prepare.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"cond\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

Tensor Bool(bool value) { return MakeTensor<bool>({1}, {value}); }

absl::StatusOr<std::vector<Tensor>> RunNet(
    const NetDef& net, const std::vector<Feed>& feeds,
    const std::vector<std::string>& out) {
  Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      executor.Prepare(net, 0, CPUPlace()));
  Scope scope;
  return executor.Run(prepared, scope, feeds, out);
}

// y = x before the op; the block, when c holds, overwrites it with 2 x.
constexpr char kDoubleIf[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2 ]
    }
    vars {
      name: "c"
      dtype: DATA_TYPE_BOOL
      shape: [ 1 ]
    }
    ops {
      type: "assign"
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "y" }
    }
    ops {
      type: "conditional_block"
      inputs { slot: "Cond" vars: "c" }
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "y" }
      attrs { name: "sub_block" block_idx: 1 }
    }
  }
  blocks {
    parent_idx: 0
    ops {
      type: "scale"
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "y" }
      attrs { name: "scale" f: 2 }
    }
  }
)pb";

TEST(ConditionalBlockTest, RunsTheBlockOnlyWhenTheConditionHolds) {
  const NetDef net = Net(kDoubleIf);
  const Tensor x = MakeTensor<float>({2}, {1.5f, -3});
  absl::StatusOr<std::vector<Tensor>> taken =
      RunNet(net, {{"x", x}, {"c", Bool(true)}}, {"y"});
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_THAT(Values<float>((*taken)[0]), ElementsAre(3.0f, -6.0f));
  absl::StatusOr<std::vector<Tensor>> skipped =
      RunNet(net, {{"x", x}, {"c", Bool(false)}}, {"y"});
  ASSERT_TRUE(skipped.ok()) << skipped.status();
  EXPECT_THAT(Values<float>((*skipped)[0]), ElementsAre(1.5f, -3.0f));
}

TEST(ConditionalBlockTest, NestedBlocksReadEveryEnclosingBlock) {
  // Block 1 computes t = x + 1 and runs block 2, which writes
  // y = t * x from its parent's t and its grandparent's x.
  const NetDef net = Net(R"pb(
    blocks {
      vars {
        name: "x"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 2 ]
      }
      vars {
        name: "c"
        dtype: DATA_TYPE_BOOL
        shape: [ 1 ]
      }
      ops {
        type: "fill_constant"
        outputs { slot: "Out" vars: "y" }
        attrs {
          name: "shape"
          i64s { values: [ 2 ] }
        }
        attrs { name: "value" f: 0 }
      }
      ops {
        type: "conditional_block"
        inputs { slot: "Cond" vars: "c" }
        inputs {
          slot: "X"
          vars: [ "x", "c" ]
        }
        outputs { slot: "Out" vars: "y" }
        attrs { name: "sub_block" block_idx: 1 }
      }
    }
    blocks {
      parent_idx: 0
      ops {
        type: "scale"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "t" }
        attrs { name: "bias" f: 1 }
      }
      ops {
        type: "conditional_block"
        inputs { slot: "Cond" vars: "c" }
        inputs {
          slot: "X"
          vars: [ "x", "t" ]
        }
        outputs { slot: "Out" vars: "y" }
        attrs { name: "sub_block" block_idx: 2 }
      }
    }
    blocks {
      parent_idx: 1
      ops {
        type: "mul"
        inputs { slot: "X" vars: "t" }
        inputs { slot: "Y" vars: "x" }
        outputs { slot: "Out" vars: "y" }
      }
    }
  )pb");
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      net, {{"x", MakeTensor<float>({2}, {2, 3})}, {"c", Bool(true)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(6.0f, 12.0f));
}

TEST(ConditionalBlockTest, ADeclaredNameShadowsTheEnclosingVariable) {
  // Block 1 declares its own x = 10: y = 3 * 10, and the outer x is
  // untouched.
  const NetDef net = Net(R"pb(
    blocks {
      vars {
        name: "x"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 1 ]
      }
      vars {
        name: "c"
        dtype: DATA_TYPE_BOOL
        shape: [ 1 ]
      }
      ops {
        type: "assign"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "y" }
      }
      ops {
        type: "conditional_block"
        inputs { slot: "Cond" vars: "c" }
        outputs { slot: "Out" vars: "y" }
        attrs { name: "sub_block" block_idx: 1 }
      }
      ops {
        type: "scale"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "x_after" }
      }
    }
    blocks {
      parent_idx: 0
      vars {
        name: "x"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 1 ]
      }
      ops {
        type: "fill_constant"
        outputs { slot: "Out" vars: "x" }
        attrs {
          name: "shape"
          i64s { values: [ 1 ] }
        }
        attrs { name: "value" f: 10 }
      }
      ops {
        type: "scale"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "y" }
        attrs { name: "scale" f: 3 }
      }
    }
  )pb");
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(net, {{"x", MakeTensor<float>({1}, {2})}, {"c", Bool(true)}},
             {"y", "x_after"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(30.0f));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(2.0f));
}

absl::Status PrepareStatus(const std::string& blocks) {
  return Executor().Prepare(Net(blocks), 0, CPUPlace()).status();
}

// kDoubleIf with the block's op replaced.
std::string WithBlockOp(const std::string& op,
                        const std::string& block_extra = "parent_idx: 0") {
  return R"pb(
           blocks {
             vars {
               name: "x"
               dtype: DATA_TYPE_FLOAT32
               shape: [ 2 ]
             }
             vars {
               name: "c"
               dtype: DATA_TYPE_BOOL
               shape: [ 1 ]
             }
             ops {
               type: "assign"
               inputs { slot: "X" vars: "x" }
               outputs { slot: "Out" vars: "y" }
             }
             ops {
               type: "conditional_block"
               inputs { slot: "Cond" vars: "c" }
               outputs { slot: "Out" vars: "y" }
               attrs { name: "sub_block" block_idx: 1 }
             }
           }
           blocks {)pb" +
         block_extra + " ops { " + op + " } }";
}

TEST(ConditionalBlockTest, PrepareNamesAnEnclosingReadTheOpDoesNotList) {
  const absl::Status status = PrepareStatus(WithBlockOp(R"pb(
    type: "scale"
    inputs { slot: "X" vars: "x" }
    outputs { slot: "Out" vars: "y" }
  )pb"));
  EXPECT_THAT(status.message(),
              HasSubstr("op 1 (conditional_block): block 1 reads variable "
                        "\"x\" of an enclosing block, which the op does not "
                        "list among its inputs"));
}

TEST(ConditionalBlockTest, PrepareNamesAnEnclosingWriteTheOpDoesNotList) {
  const absl::Status status = PrepareStatus(WithBlockOp(R"pb(
    type: "scale"
    inputs { slot: "X" vars: "y" }
    outputs { slot: "Out" vars: "c" }
  )pb"));
  EXPECT_THAT(status.message(),
              HasSubstr("block 1 writes variable \"c\" of an enclosing block, "
                        "which the op does not list among its outputs"));
}

TEST(ConditionalBlockTest, PrepareNamesAReadOfAVariableNoBlockDefines) {
  const absl::Status status = PrepareStatus(WithBlockOp(R"pb(
    type: "scale"
    inputs { slot: "X" vars: "nowhere" }
    outputs { slot: "Out" vars: "y" }
  )pb"));
  EXPECT_THAT(status.message(),
              HasSubstr("op 1 (conditional_block): block 1: op 0 (scale): "
                        "input \"X\" reads variable \"nowhere\" before any op "
                        "writes it"));
}

TEST(ConditionalBlockTest, PrepareChecksTheBlockIndexAndItsParent) {
  NetDef net = Net(kDoubleIf);
  net.mutable_blocks(0)->mutable_ops(1)->mutable_attrs(0)->set_block_idx(7);
  EXPECT_THAT(Executor().Prepare(net, 0, CPUPlace()).status().message(),
              HasSubstr("op 1 (conditional_block): attribute \"sub_block\" "
                        "names block 7"));
  net = Net(kDoubleIf);
  net.mutable_blocks(1)->clear_parent_idx();
  EXPECT_THAT(Executor().Prepare(net, 0, CPUPlace()).status().message(),
              HasSubstr("names block 1, whose parent_idx is -1; the block of "
                        "an op in block 0 must have parent_idx 0"));
}

TEST(ConditionalBlockTest, PrepareBoundsHowDeepBlocksNest) {
  // Block b runs block b + 1, 100 deep.
  std::string text;
  for (int b = 0; b < 100; ++b) {
    text += "blocks { ";
    if (b == 0) {
      text += "vars { name: 'c' dtype: DATA_TYPE_BOOL shape: [ 1 ] } ";
    } else {
      text += absl::StrCat("parent_idx: ", b - 1, " ");
    }
    text += absl::StrCat(
        "ops { type: 'conditional_block' inputs { slot: 'Cond' vars: 'c' } "
        "attrs { name: 'sub_block' block_idx: ",
        b + 1, " } } } ");
  }
  text += "blocks { parent_idx: 99 }";
  EXPECT_THAT(PrepareStatus(text).message(),
              HasSubstr("block 65 would be nested 65 blocks deep (at most "
                        "64)"));
}

TEST(ConditionalBlockTest, TheConditionMustBeOneBool) {
  NetDef net = Net(kDoubleIf);
  net.mutable_blocks(0)->mutable_vars(1)->set_dtype(DATA_TYPE_FLOAT32);
  EXPECT_THAT(Executor().Prepare(net, 0, CPUPlace()).status().message(),
              HasSubstr("op 1 (conditional_block): input \"Cond\" (variable "
                        "\"c\") must be bool, got float32"));
  net = Net(kDoubleIf);
  net.mutable_blocks(0)->mutable_vars(1)->set_shape(0, 2);
  EXPECT_THAT(Executor().Prepare(net, 0, CPUPlace()).status().message(),
              HasSubstr("must hold one element, got shape [2]"));
}

// Prepare cannot know the size; inference at run time checks it.
TEST(ConditionalBlockTest, AConditionOfUnknownSizeMustHoldOneBoolAtRunTime) {
  NetDef net = Net(kDoubleIf);
  net.mutable_blocks(0)->mutable_vars(1)->set_shape(0, -1);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(net,
             {{"x", MakeTensor<float>({2}, {1, 2})},
              {"c", MakeTensor<bool>({2}, {true, false})}},
             {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 1 (conditional_block): input \"Cond\" (variable "
                        "\"c\") must hold one element, got shape [2]"));
}

// y = x * x inside the block, differentiable: the block's scope is kept.
constexpr char kSquareIf[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 3 ]
    }
    vars {
      name: "c"
      dtype: DATA_TYPE_BOOL
      shape: [ 1 ]
    }
    ops {
      type: "conditional_block"
      inputs { slot: "Cond" vars: "c" }
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "y" }
      outputs { slot: "Scope" vars: "y_scope" }
      attrs { name: "sub_block" block_idx: 1 }
    }
  }
  blocks {
    parent_idx: 0
    ops {
      type: "mul"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "x" }
      outputs { slot: "Out" vars: "sq" }
    }
    ops {
      type: "tanh"
      inputs { slot: "X" vars: "sq" }
      outputs { slot: "Out" vars: "y" }
    }
  }
)pb";

TEST(ConditionalBlockTest, GradientMatchesNumericWhenTheBlockRuns) {
  const absl::Status status = CheckNetGradient(
      Net(kSquareIf),
      {{"x", MakeTensor<double>({3}, {0.3, -0.7, 1.1})}, {"c", Bool(true)}},
      {"y"});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(ConditionalBlockTest, GradientIsZeroWhenTheBlockDoesNotRun) {
  NetDef net = Net(kSquareIf);
  VarDef* seed = net.mutable_blocks(0)->add_vars();
  seed->set_name("y_seed");
  seed->set_dtype(DATA_TYPE_FLOAT64);
  seed->add_shape(3);
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"y"}, {"y_seed"}, {"x"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  const Tensor x = MakeTensor<double>({3}, {0.3, -0.7, 1.1});
  const Tensor ones = MakeTensor<double>({3}, {1, 1, 1});
  absl::StatusOr<std::vector<Tensor>> skipped =
      RunNet(net, {{"x", x}, {"c", Bool(false)}, {"y_seed", ones}},
             {(*grads)[0].grad});
  ASSERT_TRUE(skipped.ok()) << skipped.status();
  EXPECT_THAT(Values<double>((*skipped)[0]), ElementsAre(0.0, 0.0, 0.0));
  // And when it runs: d tanh(x^2) / dx = 2 x (1 - tanh(x^2)^2).
  absl::StatusOr<std::vector<Tensor>> taken = RunNet(
      net, {{"x", x}, {"c", Bool(true)}, {"y_seed", ones}}, {(*grads)[0].grad});
  ASSERT_TRUE(taken.ok()) << taken.status();
  const double t = std::tanh(0.09);
  EXPECT_NEAR(Values<double>((*taken)[0])[0], 0.6 * (1 - t * t), 1e-12);
}

TEST(ConditionalBlockTest, DifferentiatingWithoutTheScopeOutputIsAnError) {
  NetDef net = Net(kSquareIf);
  net.mutable_blocks(0)->mutable_ops(0)->mutable_outputs()->RemoveLast();
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"y"}, {}, {"x"});
  EXPECT_THAT(grads.status().message(),
              HasSubstr("differentiating it needs its output \"Scope\""));
}

}  // namespace
}  // namespace scopeflow
