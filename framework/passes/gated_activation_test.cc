#include "framework/passes/gated_activation.h"

#include <cmath>
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/prepare.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

std::string Unary(const std::string& type, const std::string& x,
                  const std::string& out, const std::string& attrs = "") {
  return "ops { type: '" + type + "' inputs { slot: 'X' vars: '" + x +
         "' } outputs { slot: 'Out' vars: '" + out + "' } " + attrs + " }\n";
}

std::string Mul(const std::string& x, const std::string& y,
                const std::string& out) {
  return "ops { type: 'mul' inputs { slot: 'X' vars: '" + x +
         "' } inputs { slot: 'Y' vars: '" + y +
         "' } outputs { slot: 'Out' vars: '" + out + "' } }\n";
}

// As torch.onnx writes nn.Hardswish below opset 14: HardSigmoid with
// alpha 1/6 (as float32) and beta 1/2.
const char kHardswishGate[] =
    "attrs { name: 'alpha' f: 0.1666666716337204 } "
    "attrs { name: 'beta' f: 0.5 }";

// A net feeding "x" [2, 3, 4] float32 into `ops`.
NetDef Net(const std::string& ops) {
  NetDef net;
  const std::string text =
      "name: 'gated' format_version: 1 blocks { "
      "vars { name: 'x' dtype: DATA_TYPE_FLOAT32 shape: [2, 3, 4] }\n" +
      ops + "}";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  return net;
}

Tensor Input() {
  Tensor x;
  EXPECT_TRUE(x.Allocate(CPUPlace(), kFloat32, {2, 3, 4}).ok());
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.data<float>()[i] = -4.5f + 0.4f * static_cast<float>(i);
  }
  return x;
}

struct Ran {
  std::vector<std::string> passes;
  std::vector<std::string> op_types;
  std::vector<Tensor> fetched;
};

Ran PrepareAndRun(const NetDef& net, const PrepareOptions& options,
        const std::vector<std::string>& fetches) {
  Ran ran;
  absl::StatusOr<PreparedNet> prepared =
      PrepareNet(net, 0, CPUPlace(), options);
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  if (!prepared.ok()) return ran;
  ran.passes = prepared->passes();
  for (const PreparedOp& op : prepared->ops()) {
    ran.op_types.push_back(op.spec->type());
  }
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> fetched =
      Executor().Run(*prepared, scope, {{"x", Input()}}, fetches);
  EXPECT_TRUE(fetched.ok()) << fetched.status();
  if (fetched.ok()) ran.fetched = *std::move(fetched);
  return ran;
}

void ExpectNear(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.numel(), want.numel());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float w = want.data<float>()[i];
    EXPECT_NEAR(got.data<float>()[i], w, 1e-6f + 1e-6f * std::fabs(w)) << i;
  }
}

// Fuses `ops` (writing "y") and checks the fused op and its values against
// the net as written.
void ExpectFused(const std::string& ops, const std::string& fused_type) {
  const NetDef net = Net(ops);
  const Ran fused = PrepareAndRun(net, PrepareOptions(), {"y"});
  const Ran written = PrepareAndRun(net, PrepareOptions::AsWritten(), {"y"});
  EXPECT_THAT(fused.passes, ElementsAre("gated_activation"));
  EXPECT_THAT(fused.op_types, ElementsAre(fused_type));
  EXPECT_THAT(written.op_types.size(), 2u);
  ASSERT_EQ(fused.fetched.size(), 1u);
  ASSERT_EQ(written.fetched.size(), 1u);
  ExpectNear(fused.fetched[0], written.fetched[0]);
}

TEST(GatedActivationTest, FusesSigmoidAndMulIntoSilu) {
  ExpectFused(Unary("sigmoid", "x", "g") + Mul("x", "g", "y"), "silu");
  ExpectFused(Unary("sigmoid", "x", "g") + Mul("g", "x", "y"), "silu");
}

TEST(GatedActivationTest, FusesHardSigmoidAndMulIntoHardSwish) {
  ExpectFused(Unary("hard_sigmoid", "x", "g", kHardswishGate) +
                  Mul("x", "g", "y"),
              "hard_swish");
  ExpectFused(Unary("hard_sigmoid", "x", "g", kHardswishGate) +
                  Mul("g", "x", "y"),
              "hard_swish");
}

TEST(GatedActivationTest, SiluValuesAreXTimesItsSigmoid) {
  const Ran fused = PrepareAndRun(Net(Unary("sigmoid", "x", "g") + Mul("x", "g", "y")),
                        PrepareOptions(), {"y"});
  ASSERT_EQ(fused.fetched.size(), 1u);
  const Tensor x = Input();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data<float>()[i];
    EXPECT_NEAR(fused.fetched[0].data<float>()[i], v / (1 + std::exp(-v)),
                1e-6);
  }
}

TEST(GatedActivationTest, FetchingTheGateRunsTheNetAsWritten) {
  const Ran ran = PrepareAndRun(Net(Unary("sigmoid", "x", "g") + Mul("x", "g", "y")),
                      PrepareOptions(), {"g", "y"});
  ASSERT_EQ(ran.fetched.size(), 2u);
  const Tensor x = Input();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data<float>()[i];
    const double sigmoid = 1 / (1 + std::exp(-v));
    EXPECT_NEAR(ran.fetched[0].data<float>()[i], sigmoid, 1e-6);
    EXPECT_NEAR(ran.fetched[1].data<float>()[i], v * sigmoid, 1e-6);
  }
}

TEST(GatedActivationTest, LeavesWhatIsNotXTimesItsGate) {
  const std::string cases[] = {
      // Another op reads the gate.
      Unary("sigmoid", "x", "g") + Mul("x", "g", "y") + Unary("relu", "g", "z"),
      // The gate times something else, or times itself.
      Unary("relu", "x", "r") + Unary("sigmoid", "x", "g") +
          Mul("r", "g", "y"),
      Unary("sigmoid", "x", "g") + Mul("g", "g", "y"),
      // hard_sigmoid with ONNX's default alpha 0.2: not hard_swish's gate.
      Unary("hard_sigmoid", "x", "g",
            "attrs { name: 'alpha' f: 0.2 } attrs { name: 'beta' f: 0.5 }") +
          Mul("x", "g", "y"),
      // Another gate: tanh.
      Unary("tanh", "x", "g") + Mul("x", "g", "y"),
  };
  for (const std::string& ops : cases) {
    const Ran ran = PrepareAndRun(Net(ops), PrepareOptions(), {"y"});
    EXPECT_TRUE(ran.passes.empty()) << ops;
  }
}

TEST(GatedActivationTest, NoFusionWithoutFuseOps) {
  PrepareOptions options;
  options.fuse_ops = false;
  const Ran ran =
      PrepareAndRun(Net(Unary("sigmoid", "x", "g") + Mul("x", "g", "y")), options, {"y"});
  EXPECT_TRUE(ran.passes.empty());
  EXPECT_THAT(ran.op_types, ElementsAre("sigmoid", "mul"));
}

}  // namespace
}  // namespace scopeflow
