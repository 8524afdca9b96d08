// while_grad against central differences of whole nets (float64), through
// loops of several iterations, none, and carried variables that feed each
// other.
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "framework/backward.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"loop\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

Tensor Scalar(double value) { return MakeTensor<double>({1}, {value}); }

// h_{t+1} = tanh(h_t * w + b) for t < k: a recurrence with its state
// carried (Init h0) and parameters read from the enclosing block (X).
constexpr char kRecurrence[] = R"pb(
  blocks {
    vars {
      name: "h0"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 3 ]
    }
    vars {
      name: "w"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 3 ]
    }
    vars {
      name: "b"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 3 ]
    }
    vars {
      name: "k"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 1 ]
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "j0" }
      attrs {
        name: "shape"
        i64s { values: [ 1 ] }
      }
      attrs { name: "dtype" i: 2 }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "j0" }
      inputs { slot: "Y" vars: "k" }
      outputs { slot: "Out" vars: "c" }
    }
    ops {
      type: "while"
      inputs { slot: "Condition" vars: "c" }
      inputs {
        slot: "X"
        vars: [ "w", "b", "k" ]
      }
      inputs {
        slot: "Init"
        vars: [ "h0", "j0" ]
      }
      outputs {
        slot: "Out"
        vars: [ "h", "j", "c" ]
      }
      outputs { slot: "StepScopes" vars: "steps" }
      attrs { name: "sub_block" block_idx: 1 }
    }
  }
  blocks {
    parent_idx: 0
    ops {
      type: "mul"
      inputs { slot: "X" vars: "h" }
      inputs { slot: "Y" vars: "w" }
      outputs { slot: "Out" vars: "p" }
    }
    ops {
      type: "add"
      inputs { slot: "X" vars: "p" }
      inputs { slot: "Y" vars: "b" }
      outputs { slot: "Out" vars: "q" }
    }
    ops {
      type: "tanh"
      inputs { slot: "X" vars: "q" }
      outputs { slot: "Out" vars: "h" }
    }
    ops {
      type: "increment"
      inputs { slot: "X" vars: "j" }
      outputs { slot: "Out" vars: "j" }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "j" }
      inputs { slot: "Y" vars: "k" }
      outputs { slot: "Out" vars: "c" }
    }
  }
)pb";

std::vector<Feed> RecurrenceFeeds(double k) {
  return {{"h0", MakeTensor<double>({3}, {0.3, -0.7, 1.2})},
          {"w", MakeTensor<double>({3}, {0.9, 1.4, -0.6})},
          {"b", MakeTensor<double>({3}, {0.1, -0.2, 0.05})},
          {"k", Scalar(k)}};
}

TEST(WhileGradTest, RecurrenceOverSeveralIterations) {
  GradCheckOptions options;
  options.wrt = {"h0", "w", "b"};
  for (double k : {1.0, 2.0, 5.0}) {
    EXPECT_TRUE(
        CheckNetGradient(Net(kRecurrence), RecurrenceFeeds(k), {"h"}, options)
            .ok())
        << k << ": "
        << CheckNetGradient(Net(kRecurrence), RecurrenceFeeds(k), {"h"},
                            options);
  }
}

TEST(WhileGradTest, NoIterationPassesInitThrough) {
  // h = h0: its gradient is the weight, and w and b get zeros.
  GradCheckOptions options;
  options.wrt = {"h0", "w", "b"};
  absl::Status status =
      CheckNetGradient(Net(kRecurrence), RecurrenceFeeds(0), {"h"}, options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(WhileGradTest, HandComputedGradientOfDoubling) {
  // h_{t+1} = 2 h_t (scale) for 3 iterations: dh/dh0 = 8.
  NetDef net = Net(kRecurrence);
  BlockDef& body = *net.mutable_blocks(1);
  body.mutable_ops()->DeleteSubrange(0, 3);
  OpDef scale;
  scale.set_type("scale");
  GradOpContext::SetInput(scale, "X", {"h"});
  GradOpContext::SetOutput(scale, "Out", {"h"});
  AttrDef* factor = scale.add_attrs();
  factor->set_name("scale");
  factor->set_f(2);
  *body.add_ops() = scale;
  net.mutable_blocks(0)->mutable_ops(2)->mutable_inputs(1)->clear_vars();
  net.mutable_blocks(0)->mutable_ops(2)->mutable_inputs(1)->add_vars("k");
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"h"}, {}, {"h0"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  std::vector<Feed> feeds = RecurrenceFeeds(3);
  feeds.erase(feeds.begin() + 1, feeds.begin() + 3);
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, feeds, {"h", (*grads)[0].grad});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              ::testing::ElementsAre(2.4, -5.6, 9.6));
  EXPECT_THAT(Values<double>((*out)[1]), ::testing::ElementsAre(8, 8, 8));
  // The iterations' scopes are dropped with the run.
  EXPECT_EQ(scope.num_kids(), 1);
}

// Two carried variables feeding each other, one only read: u' = u * v,
// v' = v + u' * s, and s (carried, never written) scales every step.
constexpr char kCoupled[] = R"pb(
  blocks {
    vars {
      name: "u0"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 2 ]
    }
    vars {
      name: "v0"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 2 ]
    }
    vars {
      name: "s0"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 2 ]
    }
    vars {
      name: "k"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 1 ]
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "j0" }
      attrs {
        name: "shape"
        i64s { values: [ 1 ] }
      }
      attrs { name: "dtype" i: 2 }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "j0" }
      inputs { slot: "Y" vars: "k" }
      outputs { slot: "Out" vars: "c" }
    }
    ops {
      type: "while"
      inputs { slot: "Condition" vars: "c" }
      inputs { slot: "X" vars: "k" }
      inputs {
        slot: "Init"
        vars: [ "u0", "v0", "s0", "j0" ]
      }
      outputs {
        slot: "Out"
        vars: [ "u", "v", "s", "j", "c" ]
      }
      outputs { slot: "StepScopes" vars: "steps" }
      attrs { name: "sub_block" block_idx: 1 }
    }
  }
  blocks {
    parent_idx: 0
    ops {
      type: "mul"
      inputs { slot: "X" vars: "u" }
      inputs { slot: "Y" vars: "v" }
      outputs { slot: "Out" vars: "u" }
    }
    ops {
      type: "mul"
      inputs { slot: "X" vars: "u" }
      inputs { slot: "Y" vars: "s" }
      outputs { slot: "Out" vars: "us" }
    }
    ops {
      type: "add"
      inputs { slot: "X" vars: "v" }
      inputs { slot: "Y" vars: "us" }
      outputs { slot: "Out" vars: "v" }
    }
    ops {
      type: "increment"
      inputs { slot: "X" vars: "j" }
      outputs { slot: "Out" vars: "j" }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "j" }
      inputs { slot: "Y" vars: "k" }
      outputs { slot: "Out" vars: "c" }
    }
  }
)pb";

TEST(WhileGradTest, CoupledCarriedVariables) {
  const std::vector<Feed> feeds = {{"u0", MakeTensor<double>({2}, {0.5, -0.8})},
                                   {"v0", MakeTensor<double>({2}, {1.1, 0.4})},
                                   {"s0", MakeTensor<double>({2}, {0.7, -0.3})},
                                   {"k", Scalar(3)}};
  GradCheckOptions options;
  options.wrt = {"u0", "v0", "s0"};
  absl::Status both =
      CheckNetGradient(Net(kCoupled), feeds, {"u", "v"}, options);
  EXPECT_TRUE(both.ok()) << both;
  // Only v weighed: the gradient of u's final value is a zero fill.
  absl::Status v_only = CheckNetGradient(Net(kCoupled), feeds, {"v"}, options);
  EXPECT_TRUE(v_only.ok()) << v_only;
  // s read-only and also an output.
  absl::Status with_s =
      CheckNetGradient(Net(kCoupled), feeds, {"u", "s"}, options);
  EXPECT_TRUE(with_s.ok()) << with_s;
}

TEST(WhileGradTest, DifferentiatingNeedsStepScopes) {
  NetDef net = Net(kRecurrence);
  net.mutable_blocks(0)->mutable_ops(2)->mutable_outputs()->RemoveLast();
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"h"}, {}, {"w"});
  ASSERT_FALSE(grads.ok());
  EXPECT_THAT(grads.status().message(),
              HasSubstr("op 2 (while): making its gradient: while: "
                        "differentiating it needs its output \"StepScopes\" "
                        "bound"));
}

}  // namespace
}  // namespace scopeflow
