#include "framework/passes/conv_fusion.h"

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

using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kChannels = 16;

std::string Unary(const std::string& type, const std::string& x,
                  const std::string& out, const std::string& attrs = "") {
  return "ops { type: '" + type + "' inputs { slot: 'X' vars: '" + x +
         "' } outputs { slot: 'Out' vars: '" + out + "' } " + attrs + " }\n";
}

std::string Binary(const std::string& type, const std::string& x,
                   const std::string& y, const std::string& out) {
  return "ops { type: '" + type + "' inputs { slot: 'X' vars: '" + x +
         "' } inputs { slot: 'Y' vars: '" + y +
         "' } outputs { slot: 'Out' vars: '" + out + "' } }\n";
}

// A 3x3 convolution of `x` by "w" (and bias "b"), 16 channels to 16,
// padded to keep the image's size.
std::string Conv(const std::string& x, const std::string& out,
                 const std::string& attrs = "") {
  return "ops { type: 'conv2d' inputs { slot: 'Input' vars: '" + x +
         "' } inputs { slot: 'Filter' vars: 'w' } inputs { slot: 'Bias' "
         "vars: 'b' } outputs { slot: 'Output' vars: '" +
         out + "' } attrs { name: 'paddings' ints { values: [1, 1] } } " +
         attrs + " }\n";
}

// A net over "x" and "r" [2, 16, 5, 5], "w" [16, 16, 3, 3] and "b" [16]
// of `dtype`, all fed, running `ops`.
NetDef Net(const std::string& ops,
           const std::string& dtype = "DATA_TYPE_FLOAT32") {
  NetDef net;
  const std::string text =
      "name: 'conv_fusion' format_version: 1 blocks { "
      "vars { name: 'x' dtype: " +
      dtype +
      " shape: [2, 16, 5, 5] }\n"
      "vars { name: 'r' dtype: " +
      dtype +
      " shape: [2, 16, 5, 5] }\n"
      "vars { name: 'w' dtype: " +
      dtype +
      " shape: [16, 16, 3, 3] }\n"
      "vars { name: 'b' dtype: " +
      dtype + " shape: [16] }\n" + ops + "}";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  return net;
}

// Values in [-scale, scale], different for each `seed`.
Tensor Filled(const Dims& dims, int seed, float scale, DataType dtype) {
  Tensor t;
  EXPECT_TRUE(t.Allocate(CPUPlace(), dtype, dims).ok());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = scale * std::sin(0.37 * static_cast<double>(i) + seed);
    if (dtype == kFloat64) {
      t.data<double>()[i] = v;
    } else {
      t.data<float>()[i] = static_cast<float>(v);
    }
  }
  return t;
}

struct Ran {
  std::vector<std::string> passes;
  std::vector<std::string> op_types;
  std::vector<Tensor> fetched;
  absl::Status status;
};

Ran PrepareAndRun(const NetDef& net, const PrepareOptions& options,
                  const std::vector<std::string>& fetches,
                  DataType dtype = kFloat32) {
  Ran ran;
  absl::StatusOr<PreparedNet> prepared =
      PrepareNet(net, 0, CPUPlace(), options);
  ran.status = prepared.status();
  if (!prepared.ok()) return ran;
  ran.passes = prepared->passes();
  for (const PreparedOp& op : prepared->ops()) {
    ran.op_types.push_back(op.spec->type());
  }
  const std::vector<std::pair<std::string, Tensor>> all = {
      {"x", Filled({2, kChannels, 5, 5}, 1, 3.0f, dtype)},
      {"r", Filled({2, kChannels, 5, 5}, 2, 2.0f, dtype)},
      {"w", Filled({kChannels, kChannels, 3, 3}, 3, 0.1f, dtype)},
      {"b", Filled({kChannels}, 4, 0.5f, dtype)}};
  // The net's inputs among them.
  std::vector<Feed> feeds;
  for (const auto& [name, value] : all) {
    const int v = prepared->VarIndex(name);
    if (v >= 0 && prepared->is_input(v)) feeds.push_back({name, value});
  }
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> fetched =
      Executor().Run(*prepared, scope, feeds, fetches);
  ran.status = fetched.status();
  if (fetched.ok()) ran.fetched = *std::move(fetched);
  return ran;
}

void ExpectNear(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float w = want.data<float>()[i];
    ASSERT_NEAR(got.data<float>()[i], w, 1e-5f + 1e-5f * std::fabs(w)) << i;
  }
}

PrepareOptions WithoutLayout() {
  PrepareOptions options;
  options.channels_last = false;
  return options;
}

// Fuses `ops` (writing "y") into one conv2d, which must compute what the
// net as written does, in NCHW and, read by another convolution, in the
// layout the CPU prefers.
void ExpectFusedIntoOneConv(const std::string& ops) {
  SCOPED_TRACE(ops);
  const NetDef net = Net(ops);
  const Ran written = PrepareAndRun(net, PrepareOptions::AsWritten(), {"y"});
  ASSERT_TRUE(written.status.ok()) << written.status.message();
  EXPECT_GT(written.op_types.size(), 1u);
  const Ran nchw = PrepareAndRun(net, WithoutLayout(), {"y"});
  ASSERT_TRUE(nchw.status.ok()) << nchw.status.message();
  EXPECT_THAT(nchw.passes, Contains("conv_fusion"));
  EXPECT_THAT(nchw.op_types, ElementsAre("conv2d"));
  ExpectNear(nchw.fetched[0], written.fetched[0]);

  const NetDef chain = Net(ops + Conv("y", "z"));
  const Ran chain_written =
      PrepareAndRun(chain, PrepareOptions::AsWritten(), {"z"});
  const Ran laid_out = PrepareAndRun(chain, PrepareOptions(), {"z"});
  ASSERT_TRUE(laid_out.status.ok()) << laid_out.status.message();
  EXPECT_THAT(laid_out.passes, Contains("layout"));
  // Only the two convolutions and the transfers into and out of the
  // layout.
  EXPECT_THAT(laid_out.op_types, Contains("conv2d").Times(2));
  EXPECT_THAT(laid_out.op_types,
              Each(AnyOf(Eq("conv2d"), Eq("transfer_layout"))));
  ExpectNear(laid_out.fetched[0], chain_written.fetched[0]);
}

TEST(ConvFusionTest, FusesEachActivationOneDnnHas) {
  const std::string cases[] = {
      Unary("relu", "t", "y"),
      Unary("leaky_relu", "t", "y", "attrs { name: 'alpha' f: 0.1 }"),
      Unary("elu", "t", "y", "attrs { name: 'alpha' f: 0.7 }"),
      // MobileNet V2's relu6.
      Unary("clip", "t", "y",
            "attrs { name: 'min' f: 0 } attrs { name: 'max' f: 6 }"),
      Unary("sigmoid", "t", "y"),
      Unary("tanh", "t", "y"),
      Unary("gelu", "t", "y"),
      Unary("gelu", "t", "y", "attrs { name: 'approximate' b: true }"),
      Unary("hard_sigmoid", "t", "y"),
      Unary("hard_swish", "t", "y"),
      Unary("silu", "t", "y"),
      Unary("mish", "t", "y"),
  };
  for (const std::string& activation : cases) {
    ExpectFusedIntoOneConv(Conv("x", "t") + activation);
  }
}

TEST(ConvFusionTest, FusesGatedActivations) {
  ExpectFusedIntoOneConv(Conv("x", "t") + Unary("sigmoid", "t", "g") +
                         Binary("mul", "t", "g", "y"));
  ExpectFusedIntoOneConv(Conv("x", "t") + Unary("sigmoid", "t", "g") +
                         Binary("mul", "g", "t", "y"));
  ExpectFusedIntoOneConv(Conv("x", "t") +
                         Unary("hard_sigmoid", "t", "g",
                               "attrs { name: 'alpha' f: 0.1666666716337204 } "
                               "attrs { name: 'beta' f: 0.5 }") +
                         Binary("mul", "t", "g", "y"));
}

TEST(ConvFusionTest, FusesTheResidualAddAndTheActivationAfter) {
  // ResNet's block end: Add(conv, shortcut), then Relu.
  ExpectFusedIntoOneConv(Conv("x", "t") + Binary("add", "t", "r", "s") +
                         Unary("relu", "s", "y"));
  ExpectFusedIntoOneConv(Conv("x", "t") + Binary("add", "r", "t", "y"));
  // The shortcut is the convolution's own input, which the fused op must
  // leave as it was: fetched after, it is still the feed.
  ExpectFusedIntoOneConv(Conv("x", "t") + Binary("add", "t", "x", "s") +
                         Unary("sigmoid", "s", "y"));
}

TEST(ConvFusionTest, ResidualFromAnotherConvolutionStaysInTheLayout) {
  // ResNet's downsampling block: the shortcut is a convolution too.
  const NetDef net =
      Net(Conv("x", "d") + Conv("x", "t") + Binary("add", "t", "d", "s") +
          Unary("relu", "s", "y"));
  const Ran written = PrepareAndRun(net, PrepareOptions::AsWritten(), {"y"});
  const Ran fused = PrepareAndRun(net, PrepareOptions(), {"y"});
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  // Into the layout once, out once, and nothing between.
  EXPECT_THAT(fused.op_types, Contains("conv2d").Times(2));
  EXPECT_LE(fused.op_types.size(), 4u);
  ExpectNear(fused.fetched[0], written.fetched[0]);
}

// EfficientNet's squeeze-excitation: the image times a per-channel scale
// computed from its mean, [N, C, 1, 1]. The mul broadcasts alike in every
// layout, so the image stays in the convolutions' layout through it.
TEST(ConvFusionTest, SqueezeExcitationScaleStaysInTheLayout) {
  const std::string pool =
      "ops { type: 'pool2d' inputs { slot: 'X' vars: 'a' } outputs { slot: "
      "'Out' vars: 'p' } attrs { name: 'pooling_type' s: 'avg' } attrs { "
      "name: 'ksize' ints { values: [1, 1] } } attrs { name: "
      "'global_pooling' b: true } }\n";
  for (const auto layout : {ActivationLayout::kNhwc, ActivationLayout::kNchw8c,
                            ActivationLayout::kNchw16c}) {
    for (const char* binary : {"mul", "add"}) {
      SCOPED_TRACE(binary);
      SCOPED_TRACE(static_cast<int>(layout));
      const NetDef net = Net(Conv("x", "t") + Unary("silu", "t", "a") + pool +
                             Unary("sigmoid", "p", "s") +
                             Binary(binary, "a", "s", "m") + Conv("m", "y"));
      const Ran written =
          PrepareAndRun(net, PrepareOptions::AsWritten(), {"y"});
      PrepareOptions options;
      options.activation_layout = layout;
      const Ran fused = PrepareAndRun(net, options, {"y"});
      ASSERT_TRUE(fused.status.ok()) << fused.status.message();
      EXPECT_THAT(fused.passes, Contains("layout"));
      // Into the layout once, out once.
      EXPECT_THAT(fused.op_types,
                  ElementsAre(AnyOf(Eq("transfer_layout"), Eq("transpose")),
                              "conv2d", "pool2d", "sigmoid", binary, "conv2d",
                              AnyOf(Eq("transfer_layout"), Eq("transpose"))));
      ExpectNear(fused.fetched[0], written.fetched[0]);
    }
  }
}

TEST(ConvFusionTest, FetchingAFusedAwayVariableRunsTheNetAsWritten) {
  const NetDef net = Net(Conv("x", "t") + Binary("add", "t", "r", "s") +
                         Unary("sigmoid", "s", "y"));
  const Ran written =
      PrepareAndRun(net, PrepareOptions::AsWritten(), {"t", "s", "y"});
  const Ran fused = PrepareAndRun(net, PrepareOptions(), {"t", "s", "y"});
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  ASSERT_EQ(fused.fetched.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ExpectNear(fused.fetched[i], written.fetched[i]);
  }
}

TEST(ConvFusionTest, LeavesWhatItCannotFuse) {
  const std::string cases[] = {
      // Another op reads the convolution's output.
      Conv("x", "t") + Unary("relu", "t", "y") + Unary("tanh", "t", "z"),
      // Clip's bounds as inputs: values the pass does not know.
      Conv("x", "t") +
          "ops { type: 'clip' inputs { slot: 'X' vars: 't' } "
          "inputs { slot: 'Min' vars: 'm' } outputs { slot: "
          "'Out' vars: 'y' } }\n",
      // An activation conv2d has no post-op for.
      Conv("x", "t") + Unary("exp", "t", "y"),
      // An add that broadcasts the other operand.
      Conv("x", "t") + Binary("add", "t", "p", "y"),
      // Read by a gate and by a mul of something else.
      Conv("x", "t") + Unary("sigmoid", "t", "g") +
          Binary("mul", "t", "r", "y"),
  };
  for (const std::string& ops : cases) {
    NetDef net = Net(ops);
    VarDef* m = net.mutable_blocks(0)->add_vars();
    m->set_name("m");
    m->set_dtype(DATA_TYPE_FLOAT32);
    m->add_shape(1);
    m->set_persistable(true);
    VarDef* p = net.mutable_blocks(0)->add_vars();
    p->set_name("p");
    p->set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t d : {1, 16, 1, 1}) p->add_shape(d);
    p->set_persistable(true);
    absl::StatusOr<PreparedNet> prepared =
        PrepareNet(net, 0, CPUPlace(), WithoutLayout());
    ASSERT_TRUE(prepared.ok()) << prepared.status() << ops;
    EXPECT_THAT(prepared->passes(), Not(Contains("conv_fusion"))) << ops;
  }
}

TEST(ConvFusionTest, LeavesFloat64AsWritten) {
  const NetDef net =
      Net(Conv("x", "t") + Unary("relu", "t", "y"), "DATA_TYPE_FLOAT64");
  const Ran ran = PrepareAndRun(net, WithoutLayout(), {"y"}, kFloat64);
  ASSERT_TRUE(ran.status.ok()) << ran.status;
  EXPECT_THAT(ran.op_types, ElementsAre("conv2d", "relu"));
}

TEST(ConvFusionTest, NoFusionWithoutFuseOps) {
  PrepareOptions options = WithoutLayout();
  options.fuse_ops = false;
  const Ran ran = PrepareAndRun(Net(Conv("x", "t") + Unary("relu", "t", "y")),
                                options, {"y"});
  EXPECT_THAT(ran.op_types, ElementsAre("conv2d", "relu"));
}

// conv2d's fused forms as a net may write them: float64 runs the
// reference, whose epilogue must agree with oneDNN's post-ops in float32.
TEST(ConvFusionTest, ReferenceEpilogueMatchesOneDnnPostOps) {
  const std::string ops =
      Conv("x", "y",
           "inputs { slot: 'Residual' vars: 'r' } attrs { name: "
           "'activation' s: 'hard_sigmoid' } attrs { name: "
           "'activation_alpha' f: 0.25 } attrs { name: 'activation_beta' "
           "f: 0.4 }");
  const Ran single = PrepareAndRun(Net(ops), WithoutLayout(), {"y"});
  const Ran wide = PrepareAndRun(Net(ops, "DATA_TYPE_FLOAT64"), WithoutLayout(),
                                 {"y"}, kFloat64);
  ASSERT_TRUE(single.status.ok()) << single.status;
  ASSERT_TRUE(wide.status.ok()) << wide.status;
  const Tensor& f = single.fetched[0];
  const Tensor& d = wide.fetched[0];
  int clipped = 0;
  for (int64_t i = 0; i < f.numel(); ++i) {
    EXPECT_NEAR(f.data<float>()[i], d.data<double>()[i], 1e-5) << i;
    clipped += d.data<double>()[i] == 0.0 || d.data<double>()[i] == 1.0;
  }
  // Both ends of the clip and values between are covered.
  EXPECT_GT(clipped, 0);
  EXPECT_LT(clipped, f.numel());
}

TEST(ConvFusionTest, ConvRejectsAResidualOfAnotherShape) {
  const Ran ran = PrepareAndRun(
      Net(Conv("x", "y", "inputs { slot: 'Residual' vars: 'b' }")),
      PrepareOptions::AsWritten(), {"y"});
  EXPECT_THAT(std::string(ran.status.message()),
              HasSubstr("input \"Residual\" (variable \"b\") has shape [16]: "
                        "expected Output's shape [2, 16, 5, 5]"));
}

TEST(ConvFusionTest, ConvRejectsFuseReluWithAnotherActivation) {
  const Ran ran = PrepareAndRun(
      Net(Conv("x", "y",
               "attrs { name: 'fuse_relu' b: true } attrs { name: "
               "'activation' s: 'tanh' }")),
      PrepareOptions::AsWritten(), {"y"});
  EXPECT_THAT(std::string(ran.status.message()),
              HasSubstr("attribute \"fuse_relu\" and activation \"tanh\" "
                        "both given"));
}

TEST(ConvFusionTest, ConvRejectsAnUnknownActivation) {
  const Ran ran = PrepareAndRun(
      Net(Conv("x", "y", "attrs { name: 'activation' s: 'swoosh' }")),
      PrepareOptions::AsWritten(), {"y"});
  EXPECT_THAT(std::string(ran.status.message()), HasSubstr("swoosh"));
}

}  // namespace
}  // namespace scopeflow
