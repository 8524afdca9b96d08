#include "framework/backward.h"

#include <algorithm>

#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Ops for this test only, so that it depends on no real operator family.
absl::Status SameInfo(InferContext& context) {
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

absl::Status GradInfo(InferContext& context) {
  if (context.HasOutput("X@GRAD"))
    context.SetOutput("X@GRAD", context.Input("X"));
  if (context.HasOutput("Y@GRAD"))
    context.SetOutput("Y@GRAD", context.Input("Y"));
  return absl::OkStatus();
}

absl::Status Square(KernelContext& context) {
  const Tensor& x = context.Input("X");
  for (int64_t i = 0; i < x.numel(); ++i) {
    context.Output("Out")->data<double>()[i] =
        x.data<double>()[i] * x.data<double>()[i];
  }
  return absl::OkStatus();
}

// `factor` 2 is right; the test registers a wrong one too.
template <int factor>
absl::Status SquareGrad(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& g = context.Input("Out@GRAD");
  for (int64_t i = 0; i < x.numel(); ++i) {
    context.Output("X@GRAD")->data<double>()[i] =
        factor * x.data<double>()[i] * g.data<double>()[i];
  }
  return absl::OkStatus();
}

absl::Status Mul(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  for (int64_t i = 0; i < x.numel(); ++i) {
    context.Output("Out")->data<double>()[i] =
        x.data<double>()[i] * y.data<double>()[i];
  }
  return absl::OkStatus();
}

absl::Status MulGrad(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  const Tensor& g = context.Input("Out@GRAD");
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (context.HasOutput("X@GRAD")) {
      context.Output("X@GRAD")->data<double>()[i] =
          y.data<double>()[i] * g.data<double>()[i];
    }
    if (context.HasOutput("Y@GRAD")) {
      context.Output("Y@GRAD")->data<double>()[i] =
          x.data<double>()[i] * g.data<double>()[i];
    }
  }
  return absl::OkStatus();
}

SF_REGISTER_OP(test_square)
    .Input("X")
    .Output("Out")
    .Infer(SameInfo)
    .Grad(GradSpec("test_square_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat64, &Square);

SF_REGISTER_OP(test_square_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(GradInfo)
    .Kernel(DeviceType::kCPU, kFloat64, &SquareGrad<2>);

SF_REGISTER_OP(test_wrong_square)
    .Input("X")
    .Output("Out")
    .Infer(SameInfo)
    .Grad(GradSpec("test_wrong_square_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat64, &Square);

SF_REGISTER_OP(test_wrong_square_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(GradInfo)
    .Kernel(DeviceType::kCPU, kFloat64, &SquareGrad<3>);

SF_REGISTER_OP(test_mul)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(SameInfo)
    .Grad(GradSpec("test_mul_grad")
              .ReadInput("X")
              .ReadInput("Y")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Y"))
    .Kernel(DeviceType::kCPU, kFloat64, &Mul);

SF_REGISTER_OP(test_mul_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(GradInfo)
    .Kernel(DeviceType::kCPU, kFloat64, &MulGrad);

NetDef ParseNet(const std::string& text) {
  NetDef net;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  net.set_format_version(kNetFormatVersion);
  return net;
}

// loss = sum(square(x * w), x * w): d loss / d w = x * (2 x w + 1).
const char* const kNet =
    "name: \"net\" blocks { "
    "vars { name: \"x\" dtype: DATA_TYPE_FLOAT64 shape: 3 } "
    "vars { name: \"w\" dtype: DATA_TYPE_FLOAT64 shape: 3 persistable: true } "
    "ops { type: \"test_mul\" inputs { slot: \"X\" vars: \"x\" } "
    "  inputs { slot: \"Y\" vars: \"w\" } outputs { slot: \"Out\" vars: \"h\" "
    "} } "
    "ops { type: \"test_square\" inputs { slot: \"X\" vars: \"h\" } "
    "  outputs { slot: \"Out\" vars: \"h2\" } } "
    "ops { type: \"sum\" inputs { slot: \"X\" vars: [\"h2\", \"h\"] } "
    "  outputs { slot: \"Out\" vars: \"loss\" } } }";

TEST(AppendBackwardTest, GradientOfParametersSumsContributions) {
  NetDef net = ParseNet(kNet);
  auto grads = AppendBackward(net, "loss");
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 1u);
  EXPECT_EQ((*grads)[0].var, "w");
  EXPECT_EQ((*grads)[0].grad, "w@GRAD");
  // h is read by two ops, so its two contributions are summed.
  const auto& ops = net.blocks(0).ops();
  EXPECT_TRUE(std::any_of(ops.begin(), ops.end(), [](const OpDef& op) {
    return op.type() == "sum" && op.outputs(0).vars(0) == "h@GRAD";
  }));

  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  *scope.Var("w")->GetMutable<Tensor>().value() =
      MakeTensor<double>({3}, {1, 2, -1});
  auto out = executor.Run(*prepared, scope,
                          {{"x", MakeTensor<double>({3}, {3, 0.5, 2})}},
                          {"w@GRAD", "loss"});
  ASSERT_TRUE(out.ok()) << out.status();
  // x * (2 x w + 1) per element.
  EXPECT_THAT(Values<double>((*out)[0]),
              ElementsAre(3 * (2 * 3 + 1), 0.5 * (2 * 0.5 * 2 + 1),
                          2 * (2 * 2 * -1 + 1)));
  EXPECT_THAT(Values<double>((*out)[1]), ElementsAre(9 + 3, 1 + 1, 4 - 2));
}

TEST(AppendBackwardTest, ExplicitWrtAndAFedTargetGradient) {
  NetDef net = ParseNet(kNet);
  VarDef* seed = net.mutable_blocks(0)->add_vars();
  seed->set_name("seed");
  seed->set_dtype(kFloat64);
  seed->add_shape(3);
  auto grads = AppendGradients(net, {"h"}, {"seed"}, {"x", "w"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 2u);
  // h's only gradient is the seed itself.
  EXPECT_EQ((*grads)[0].grad, "x@GRAD");
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  *scope.Var("w")->GetMutable<Tensor>().value() =
      MakeTensor<double>({3}, {1, 2, 3});
  auto out = executor.Run(*prepared, scope,
                          {{"x", MakeTensor<double>({3}, {4, 5, 6})},
                           {"seed", MakeTensor<double>({3}, {1, 10, 100})}},
                          {"x@GRAD", "w@GRAD"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(1, 20, 300));
  EXPECT_THAT(Values<double>((*out)[1]), ElementsAre(4, 50, 600));
}

TEST(AppendBackwardTest, StopGradientCutsThePath) {
  NetDef net = ParseNet(kNet);
  for (VarDef& var : *net.mutable_blocks(0)->mutable_vars()) {
    if (var.name() == "w") var.set_stop_gradient(true);
  }
  auto grads = AppendBackward(net, "loss");
  ASSERT_FALSE(grads.ok());
  EXPECT_THAT(grads.status().message(), HasSubstr("depends on no parameter"));
  auto explicit_grads = AppendBackward(net, "loss", {"w"});
  ASSERT_FALSE(explicit_grads.ok());
  EXPECT_THAT(explicit_grads.status().message(),
              HasSubstr("\"w\" cannot have a gradient"));
}

TEST(AppendBackwardTest, OpsThatDoNotReachTheLossAreLeftOut) {
  NetDef net = ParseNet(kNet);
  // An extra branch from w that the loss does not read.
  OpDef* extra = net.mutable_blocks(0)->add_ops();
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "type: \"test_square\" inputs { slot: \"X\" vars: \"w\" } outputs { "
      "slot: \"Out\" vars: \"unused\" }",
      extra));
  auto grads = AppendBackward(net, "loss");
  ASSERT_TRUE(grads.ok()) << grads.status();
  for (const OpDef& op : net.blocks(0).ops()) {
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) {
        EXPECT_NE(var, "unused@GRAD");
      }
    }
  }
}

TEST(AppendBackwardTest, Errors) {
  {
    NetDef net = ParseNet(kNet);
    auto grads = AppendBackward(net, "nothing");
    ASSERT_FALSE(grads.ok());
    EXPECT_THAT(grads.status().message(), HasSubstr("target \"nothing\""));
  }
  {
    NetDef net = ParseNet(kNet);
    auto grads = AppendBackward(net, "loss", {"x", "h3"});
    ASSERT_FALSE(grads.ok());
    EXPECT_THAT(grads.status().message(), HasSubstr("\"h3\""));
  }
  {
    NetDef net = ParseNet(kNet);
    ASSERT_TRUE(AppendBackward(net, "loss").ok());
    auto again = AppendBackward(net, "loss");
    ASSERT_FALSE(again.ok());
    EXPECT_THAT(again.status().message(), HasSubstr("only once"));
  }
  {
    NetDef net = ParseNet(kNet);
    net.mutable_blocks(0)->mutable_ops(0)->set_type("no_such_op");
    auto grads = AppendBackward(net, "loss");
    ASSERT_FALSE(grads.ok());
    EXPECT_THAT(grads.status().message(), HasSubstr("invalid net"));
  }
}

TEST(CheckGradientTest, PassesARightGradientAndCatchesAWrongOne) {
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<double>({2, 2}, {0.5, -1.5, 2, 3})},
      {"y", MakeTensor<double>({2, 2}, {1, 2, -3, 0.25})}};
  EXPECT_TRUE(CheckGradient("type: \"test_mul\" inputs { slot: \"X\" vars: "
                            "\"x\" } inputs { slot: \"Y\" vars: \"y\" } "
                            "outputs { slot: \"Out\" vars: \"z\" }",
                            feeds)
                  .ok());
  EXPECT_TRUE(CheckGradient("type: \"test_square\" inputs { slot: \"X\" vars: "
                            "\"x\" } outputs { slot: \"Out\" vars: \"z\" }",
                            {feeds[0]})
                  .ok());
  absl::Status wrong = CheckGradient(
      "type: \"test_wrong_square\" inputs { slot: \"X\" vars: \"x\" } outputs "
      "{ slot: \"Out\" vars: \"z\" }",
      {feeds[0]});
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.message(), HasSubstr("gradient of \"x\" element 0"));
}

}  // namespace
}  // namespace scopeflow
