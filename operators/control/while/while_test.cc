// while: hand-computed loops, nesting, the errors of Prepare and of runs,
// and memory that stays flat over many iterations.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/control/while/counter_net.h"
#include "platform/allocator.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A probe for the tests: Out = the number of kids of the scope holding the
// scope its op runs in (for an op of a loop body: the live iteration
// scopes of the while op), and the largest such number seen.
int max_kids_seen = 0;

absl::Status CountKidsKernel(KernelContext& context) {
  const int kids = context.scope()->parent()->num_kids();
  max_kids_seen = std::max(max_kids_seen, kids);
  context.Output("Out")->data<float>()[0] = static_cast<float>(kids);
  return absl::OkStatus();
}

SF_REGISTER_OP(while_test_count_kids)
    .Input("X")
    .Output("Out")
    .Infer([](InferContext& context) {
      context.SetOutput("Out", 0, kFloat32, {1});
      return absl::OkStatus();
    })
    .Kernel(DeviceType::kCPU, kInt64, &CountKidsKernel);

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"loop\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

absl::StatusOr<std::vector<Tensor>> RunNet(const NetDef& net,
                                           const std::vector<Feed>& feeds,
                                           const std::vector<std::string>& out,
                                           Scope* scope = nullptr) {
  Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      executor.Prepare(net, 0, CPUPlace()));
  Scope local;
  return executor.Run(prepared, scope != nullptr ? *scope : local, feeds, out);
}

absl::Status PrepareNet(const NetDef& net) {
  return Executor().Prepare(net, 0, CPUPlace()).status();
}

Tensor Int64(int64_t value) { return MakeTensor<int64_t>({1}, {value}); }
Tensor Float(float value) { return MakeTensor<float>({1}, {value}); }

TEST(WhileTest, CounterLoop) {
  const NetDef net = Net(kCounterLoopBlocks);
  for (int64_t n : {0, 1, 5, 100}) {
    absl::StatusOr<std::vector<Tensor>> out =
        RunNet(net, {{"n", Int64(n)}}, {"i", "s", "c"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(n)) << n;
    EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(n * (n + 1) / 2)) << n;
    EXPECT_THAT(Values<bool>((*out)[2]), ElementsAre(false)) << n;
  }
}

TEST(WhileTest, StepScopesGiveTheSameResults) {
  NetDef net = Net(kCounterLoopBlocks);
  OpSlot* steps = net.mutable_blocks(0)->mutable_ops(3)->add_outputs();
  steps->set_slot("StepScopes");
  steps->add_vars("steps");
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(net, {{"n", Int64(7)}}, {"i", "s"}, &scope);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(7));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(28));
}

// y = x * 2^k, j counting the doublings.
constexpr char kPowers[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 3 ]
    }
    vars {
      name: "k"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 1 ]
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "j0" }
      attrs {
        name: "shape"
        i64s { values: [ 1 ] }
      }
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
        vars: [ "x", "j0" ]
      }
      outputs {
        slot: "Out"
        vars: [ "y", "j", "c" ]
      }
      attrs { name: "sub_block" block_idx: 1 } MAX_ITERATIONS
    }
  }
  blocks {
    parent_idx: 0
    ops {
      type: "scale"
      inputs { slot: "X" vars: "y" }
      outputs { slot: "Out" vars: "y" }
      attrs { name: "scale" f: 2 }
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

NetDef Powers(const std::string& max_iterations = "") {
  return Net(
      absl::StrReplaceAll(kPowers, {{"MAX_ITERATIONS", max_iterations}}));
}

TEST(WhileTest, DoublesKTimes) {
  const Tensor x = MakeTensor<float>({3}, {1.5f, -2, 0.25f});
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(Powers(), {{"x", x}, {"k", Float(4)}}, {"y", "j", "x"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(24.0f, -32.0f, 4.0f));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(4.0f));
  // The initial value is not written.
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(1.5f, -2.0f, 0.25f));
}

TEST(WhileTest, MaxIterationsStopsARunawayLoop) {
  const NetDef net = Powers(R"pb(attrs { name: "max_iterations" i: 5 })pb");
  const Tensor x = MakeTensor<float>({3}, {1, 1, 1});
  absl::StatusOr<std::vector<Tensor>> five =
      RunNet(net, {{"x", x}, {"k", Float(5)}}, {"y"});
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_THAT(Values<float>((*five)[0]), ElementsAre(32.0f, 32.0f, 32.0f));
  absl::StatusOr<std::vector<Tensor>> six =
      RunNet(net, {{"x", x}, {"k", Float(6)}}, {"y"});
  ASSERT_FALSE(six.ok());
  EXPECT_THAT(six.status().message(),
              HasSubstr("op 2 (while): condition variable \"c\" still holds "
                        "after 5 iterations (attribute \"max_iterations\")"));
}

TEST(WhileTest, MaxIterationsMustBePositive) {
  absl::Status status =
      PrepareNet(Powers(R"pb(attrs { name: "max_iterations" i: 0 })pb"));
  EXPECT_THAT(status.message(),
              HasSubstr("op 2 (while): attribute \"max_iterations\""));
}

// Outer loop: i = 0 .. m-1, acc += i * x, computed by an inner loop that
// adds x to a copy of acc i times, reading x of block 0 and i of block 1.
// acc = x * (1 + m (m - 1) / 2).
constexpr char kNested[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2 ]
    }
    vars {
      name: "m"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 1 ]
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "i0" }
      attrs {
        name: "shape"
        i64s { values: [ 1 ] }
      }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "i0" }
      inputs { slot: "Y" vars: "m" }
      outputs { slot: "Out" vars: "ci" }
    }
    ops {
      type: "while"
      inputs { slot: "Condition" vars: "ci" }
      inputs {
        slot: "X"
        vars: [ "x", "m" ]
      }
      inputs {
        slot: "Init"
        vars: [ "x", "i0" ]
      }
      outputs {
        slot: "Out"
        vars: [ "acc", "i", "ci" ]
      }
      attrs { name: "sub_block" block_idx: 1 }
    }
  }
  blocks {
    parent_idx: 0
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "j0" }
      attrs {
        name: "shape"
        i64s { values: [ 1 ] }
      }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "j0" }
      inputs { slot: "Y" vars: "i" }
      outputs { slot: "Out" vars: "cj" }
    }
    ops {
      type: "while"
      inputs { slot: "Condition" vars: "cj" }
      inputs {
        slot: "X"
        vars: [ "x", "i" ]
      }
      inputs {
        slot: "Init"
        vars: [ "acc", "j0" ]
      }
      outputs {
        slot: "Out"
        vars: [ "t", "j", "cj" ]
      }
      attrs { name: "sub_block" block_idx: 2 }
    }
    ops {
      type: "assign"
      inputs { slot: "X" vars: "t" }
      outputs { slot: "Out" vars: "acc" }
    }
    ops {
      type: "increment"
      inputs { slot: "X" vars: "i" }
      outputs { slot: "Out" vars: "i" }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "i" }
      inputs { slot: "Y" vars: "m" }
      outputs { slot: "Out" vars: "ci" }
    }
  }
  blocks {
    parent_idx: 1
    ops {
      type: "add"
      inputs { slot: "X" vars: "t" }
      inputs { slot: "Y" vars: "x" }
      outputs { slot: "Out" vars: "t" }
    }
    ops {
      type: "increment"
      inputs { slot: "X" vars: "j" }
      outputs { slot: "Out" vars: "j" }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "j" }
      inputs { slot: "Y" vars: "i" }
      outputs { slot: "Out" vars: "cj" }
    }
  }
)pb";

TEST(WhileTest, NestedLoopsReadEveryEnclosingBlock) {
  const NetDef net = Net(kNested);
  const Tensor x = MakeTensor<float>({2}, {1, -2});
  for (int m : {0, 1, 4}) {
    absl::StatusOr<std::vector<Tensor>> out =
        RunNet(net, {{"x", x}, {"m", Float(m)}}, {"acc", "i"});
    ASSERT_TRUE(out.ok()) << out.status();
    const float times = 1 + m * (m - 1) / 2.0f;
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(times, -2 * times)) << m;
    EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(m)) << m;
  }
}

TEST(WhileTest, ANestedLoopMayNotWriteACarriedVariable) {
  // The inner loop writing the outer loop's acc directly.
  NetDef net = Net(kNested);
  OpDef& inner = *net.mutable_blocks(1)->mutable_ops(2);
  inner.mutable_outputs(0)->set_vars(0, "acc");
  inner.mutable_inputs(2)->set_vars(0, "x");
  net.mutable_blocks(1)->mutable_ops()->DeleteSubrange(3, 1);
  *net.mutable_blocks(2) = Net(R"pb(
                             blocks {
                               parent_idx: 1
                               ops {
                                 type: "add"
                                 inputs { slot: "X" vars: "acc" }
                                 inputs { slot: "Y" vars: "x" }
                                 outputs { slot: "Out" vars: "acc" }
                               }
                               ops {
                                 type: "increment"
                                 inputs { slot: "X" vars: "j" }
                                 outputs { slot: "Out" vars: "j" }
                               }
                               ops {
                                 type: "less"
                                 inputs { slot: "X" vars: "j" }
                                 inputs { slot: "Y" vars: "i" }
                                 outputs { slot: "Out" vars: "cj" }
                               }
                             }
                           )pb")
                               .blocks(0);
  EXPECT_THAT(PrepareNet(net).message(),
              HasSubstr("op 2 (while): block 1: op 2 (while) of the body "
                        "writes carried variable \"acc\" through its own "
                        "block"));
}

// Replaces block 1 of the powers net.
NetDef PowersWithBody(const std::string& body) {
  NetDef net = Powers();
  *net.mutable_blocks(1) =
      Net("blocks { parent_idx: 0 " + body + " }").blocks(0);
  return net;
}

constexpr char kCountOps[] = R"pb(
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
)pb";

TEST(WhileTest, TheBodyWritesAnEnclosingVariableNotInOut) {
  const NetDef net =
      PowersWithBody(absl::StrCat(R"pb(
                                    ops {
                                      type: "scale"
                                      inputs { slot: "X" vars: "y" }
                                      outputs { slot: "Out" vars: "k" }
                                    }
                                  )pb",
                                  kCountOps));
  EXPECT_THAT(PrepareNet(net).message(),
              HasSubstr("op 2 (while): block 1 writes variable \"k\" of an "
                        "enclosing block, which the op does not list among "
                        "its outputs"));
}

TEST(WhileTest, TheBodyReadsAnEnclosingVariableNotListed) {
  // z, written before the op, is not listed in X: the body may not read it.
  NetDef net = PowersWithBody(absl::StrCat(R"pb(
                                             ops {
                                               type: "add"
                                               inputs { slot: "X" vars: "y" }
                                               inputs { slot: "Y" vars: "z" }
                                               outputs { slot: "Out" vars: "y" }
                                             }
                                           )pb",
                                           kCountOps));
  BlockDef& main = *net.mutable_blocks(0);
  OpDef& fill = *main.add_ops();
  fill = main.ops(0);
  fill.mutable_outputs(0)->set_vars(0, "z");
  for (int i = main.ops_size() - 1; i > 0; --i) {
    main.mutable_ops()->SwapElements(i, i - 1);
  }
  EXPECT_THAT(PrepareNet(net).message(),
              HasSubstr("op 3 (while): block 1 reads variable \"z\" of an "
                        "enclosing block, which the op does not list among "
                        "its inputs"));
}

TEST(WhileTest, TheBodyMustWriteTheCondition) {
  const NetDef net = PowersWithBody(R"pb(
    ops {
      type: "increment"
      inputs { slot: "X" vars: "j" }
      outputs { slot: "Out" vars: "j" }
    }
  )pb");
  EXPECT_THAT(PrepareNet(net).message(),
              HasSubstr("op 2 (while): block 1: the body never writes the "
                        "condition variable \"c\" (input \"Condition\")"));
}

TEST(WhileTest, ConditionMustBeABoolScalarAmongTheOutputs) {
  NetDef net = Powers();
  // The condition j0: float.
  net.mutable_blocks(0)->mutable_ops(2)->mutable_inputs(0)->set_vars(0, "j0");
  EXPECT_THAT(PrepareNet(net).message(),
              HasSubstr("op 2 (while): input \"Condition\" (variable \"j0\") "
                        "must be a bool scalar, got float32"));

  NetDef wide = Powers();
  wide.mutable_blocks(0)
      ->mutable_ops(0)
      ->mutable_attrs(0)
      ->mutable_i64s()
      ->set_values(0, 2);
  wide.mutable_blocks(0)->mutable_vars(1)->set_shape(0, 2);
  EXPECT_THAT(PrepareNet(wide).message(),
              HasSubstr("op 2 (while): input \"Condition\" (variable \"c\") "
                        "must be a bool scalar (one element), got shape [2]"));

  NetDef not_out = Powers();
  not_out.mutable_blocks(0)
      ->mutable_ops(2)
      ->mutable_outputs(0)
      ->mutable_vars()
      ->RemoveLast();
  EXPECT_THAT(PrepareNet(not_out).message(),
              HasSubstr("op 2 (while): condition variable \"c\" must be "
                        "among the outputs \"Out\""));
}

TEST(WhileTest, ACarriedVariableKeepsItsShape) {
  const NetDef net =
      PowersWithBody(absl::StrCat(R"pb(
                                    ops {
                                      type: "concat"
                                      inputs {
                                        slot: "X"
                                        vars: [ "y", "y" ]
                                      }
                                      outputs { slot: "Out" vars: "y" }
                                    }
                                  )pb",
                                  kCountOps));
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      net, {{"x", MakeTensor<float>({3}, {1, 2, 3})}, {"k", Float(2)}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 2 (while): iteration 0 changed carried variable "
                        "\"y\" from Tensor<float32, [3], cpu> to "
                        "Tensor<float32, [6], cpu>"));
}

// The counter loop with a [4096] float temporary per iteration and the
// probe counting the while op's live iteration scopes.
NetDef CounterWithProbe(bool training) {
  NetDef net = Net(kCounterLoopBlocks);
  BlockDef& body = *net.mutable_blocks(1);
  absl::StatusOr<NetDef> extra = ParseNetText(R"pb(
    format_version: 1
    blocks {
      ops {
        type: "fill_constant"
        outputs { slot: "Out" vars: "big" }
        attrs {
          name: "shape"
          i64s { values: [ 4096 ] }
        }
        attrs { name: "value" f: 1 }
      }
      ops {
        type: "while_test_count_kids"
        inputs { slot: "X" vars: "i" }
        outputs { slot: "Out" vars: "kids" }
      }
    }
  )pb");
  EXPECT_TRUE(extra.ok()) << extra.status();
  for (const OpDef& op : extra->blocks(0).ops()) *body.add_ops() = op;
  if (training) {
    OpSlot* steps = net.mutable_blocks(0)->mutable_ops(3)->add_outputs();
    steps->set_slot("StepScopes");
    steps->add_vars("steps");
  }
  return net;
}

int64_t BytesInUse() {
  absl::StatusOr<AllocatorStats> stats = GetAllocatorStats(CPUPlace());
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats->bytes_in_use;
}

int64_t PeakOfRun(const PreparedNet& prepared, Scope& scope, int64_t n) {
  absl::StatusOr<Allocator*> allocator = GetAllocator(CPUPlace());
  EXPECT_TRUE(allocator.ok());
  (*allocator)->ResetPeakBytesInUse();
  absl::StatusOr<std::vector<Tensor>> out =
      Executor().Run(prepared, scope, {{"n", Int64(n)}}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  absl::StatusOr<AllocatorStats> stats = GetAllocatorStats(CPUPlace());
  return stats->peak_bytes_in_use;
}

TEST(WhileTest, MemoryStaysFlatOverTenThousandIterations) {
  Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(CounterWithProbe(/*training=*/false), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  PeakOfRun(*prepared, scope, 1);  // Fills the run scope caches.
  const int kids_before = scope.num_kids();
  const int64_t in_use_before = BytesInUse();
  max_kids_seen = 0;
  const int64_t peak_short = PeakOfRun(*prepared, scope, 10);
  const int64_t peak_long = PeakOfRun(*prepared, scope, 10000);
  // One iteration scope at a time, reused.
  EXPECT_EQ(max_kids_seen, 1);
  EXPECT_EQ(peak_long, peak_short);
  EXPECT_GE(peak_long - in_use_before, 4096 * 4);
  EXPECT_EQ(BytesInUse(), in_use_before);
  EXPECT_EQ(scope.num_kids(), kids_before);
}

TEST(WhileTest, StepScopesAreKeptForTheRunThenDropped) {
  Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(CounterWithProbe(/*training=*/true), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  PeakOfRun(*prepared, scope, 1);
  const int kids_before = scope.num_kids();
  const int64_t in_use_before = BytesInUse();
  max_kids_seen = 0;
  const int64_t peak = PeakOfRun(*prepared, scope, 100);
  // Each iteration's scope lives until the run ends, with its temporary.
  EXPECT_EQ(max_kids_seen, 100);
  EXPECT_GE(peak - in_use_before, 100 * 4096 * 4);
  EXPECT_EQ(BytesInUse(), in_use_before);
  EXPECT_EQ(scope.num_kids(), kids_before);
}

}  // namespace
}  // namespace scopeflow
