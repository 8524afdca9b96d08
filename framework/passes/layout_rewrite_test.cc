#include "framework/passes/layout_rewrite.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "framework/op_spec.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

// Stand-ins with the layout roles of conv2d, pool2d, relu and an op that
// only knows NCHW; the rewrite reads nothing else of their specs.
SF_REGISTER_OP(lr_conv)
    .Input("Input")
    .Input("Filter")
    .Output("Output")
    .Attr("data_format", AttrType::kString, AttrValue(std::string("NCHW")))
    .Attr("fuse_relu", AttrType::kBool, AttrValue(false))
    .Layout(LayoutRole::kPrefersChannelsLast)
    .Grad(GradSpec("lr_conv_grad"));
// The one op the rewrite knows by name: a conv with fuse_relu absorbs it.
SF_REGISTER_OP(relu).Input("X").Output("Out").Layout(LayoutRole::kElementwise);
SF_REGISTER_OP(lr_pool)
    .Input("X")
    .Output("Out")
    .Output("Indices", /*optional=*/true)
    .Attr("data_format", AttrType::kString, AttrValue(std::string("NCHW")))
    .Layout(LayoutRole::kDataFormat)
    .Grad(GradSpec("lr_pool_grad"));
SF_REGISTER_OP(lr_act)
    .Input("X")
    .Input("Extra", /*optional=*/true)
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Grad(GradSpec("lr_act_grad"));
SF_REGISTER_OP(lr_fixed).Input("X").Output("Out");
// Two more ops the rewrite knows by name: along the channels, concat joins
// images; batch_norm in inference scales and shifts channels.
SF_REGISTER_OP(batch_norm)
    .Input("X")
    .Input("Scale")
    .Output("Y")
    .Output("SavedMean", /*optional=*/true)
    .Attr("is_test", AttrType::kBool, AttrValue(true))
    .Attr("fuse_relu", AttrType::kBool, AttrValue(false))
    .Attr("data_format", AttrType::kString, AttrValue(std::string("NCHW")));
SF_REGISTER_OP(concat)
    .Input("X", /*optional=*/false, /*variadic=*/true)
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(0));
// Two ops whose gradients are one op type: which of its slots hold images
// is not known, so the rewrite leaves it alone.
SF_REGISTER_OP(lr_twin_a)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Grad(GradSpec("lr_twin_grad"));
SF_REGISTER_OP(lr_twin_b)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Grad(GradSpec("lr_twin_grad"));

BlockDef ParseBlock(const std::string& text) {
  BlockDef block;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &block))
      << text;
  return block;
}

std::string Conv(const std::string& in, const std::string& out,
                 const std::string& format = "") {
  return "ops { type: 'lr_conv' inputs { slot: 'Input' vars: '" + in +
         "' } inputs { slot: 'Filter' vars: 'w' } outputs { slot: 'Output' "
         "vars: '" +
         out + "' } " +
         (format.empty()
              ? ""
              : "attrs { name: 'data_format' s: '" + format + "' }") +
         "}\n";
}

std::string GroupedConv(const std::string& in, const std::string& out,
                        int groups) {
  return "ops { type: 'lr_conv' inputs { slot: 'Input' vars: '" + in +
         "' } inputs { slot: 'Filter' vars: 'w' } outputs { slot: 'Output' "
         "vars: '" +
         out + "' } attrs { name: 'groups' i: " + std::to_string(groups) +
         " } }\n";
}

// An op of `type` with input and output slots and variables "Slot=var".
std::string OpOf(const std::string& type, const std::vector<std::string>& ins,
                 const std::vector<std::string>& outs) {
  std::string op = "ops { type: '" + type + "' ";
  for (const auto* slots : {&ins, &outs}) {
    for (const std::string& slot_var : *slots) {
      const size_t eq = slot_var.find('=');
      op += std::string(slots == &ins ? "inputs" : "outputs") + " { slot: '" +
            slot_var.substr(0, eq) + "' vars: '" + slot_var.substr(eq + 1) +
            "' } ";
    }
  }
  return op + "}\n";
}

std::string Unary(const std::string& type, const std::string& in,
                  const std::string& out) {
  return OpOf(type, {"X=" + in}, {"Out=" + out});
}

// "type(inputs -> outputs)[NHWC]" per op, to compare blocks at a glance
// (transfer_layout: "[NCHW>NCHW8c]").
std::vector<std::string> Summary(const BlockDef& block) {
  std::vector<std::string> ops;
  for (const OpDef& op : block.ops()) {
    std::string line = op.type() + "(";
    for (const OpSlot& slot : op.inputs()) {
      if (slot.slot() == "Filter") continue;
      for (const std::string& var : slot.vars()) line += var + " ";
    }
    line += "->";
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) line += " " + var;
    }
    line += ")";
    for (const AttrDef& attr : op.attrs()) {
      if (attr.name() == "data_format") line += "[" + attr.s() + "]";
      if (attr.name() == "src_format") line += "[" + attr.s();
      if (attr.name() == "dst_format") line += ">" + attr.s() + "]";
      if (attr.name() == "fuse_relu" && attr.b()) line += "[relu]";
      if (attr.name() == "axis")
        line += "[axis " + std::to_string(attr.i()) + "]";
      if (attr.name() == "perm") {
        line += "[";
        for (int axis : attr.ints().values()) line += std::to_string(axis);
        line += "]";
      }
    }
    ops.push_back(line);
  }
  return ops;
}

TEST(LayoutRewriteTest, KeepsAChainChannelsLastBetweenTwoTransposes) {
  const BlockDef block = ParseBlock(
      "vars { name: 'w' persistable: true }\n"
      "vars { name: 'c1' shape: [-1, 8, 4, 4] }\n" +
      Conv("x", "c1") + Unary("lr_act", "c1", "r1") + Conv("r1", "c2") +
      Unary("lr_act", "c2", "r2") + Unary("lr_pool", "r2", "p") +
      Unary("lr_fixed", "p", "y"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(
      Summary(rewrite->block),
      ElementsAre(
          "transpose(x -> x@NHWC)[0231]", "lr_conv(x@NHWC -> c1@NHWC)[NHWC]",
          "lr_act(c1@NHWC -> r1@NHWC)", "lr_conv(r1@NHWC -> c2@NHWC)[NHWC]",
          "lr_act(c2@NHWC -> r2@NHWC)", "lr_pool(r2@NHWC -> p@NHWC)[NHWC]",
          "transpose(p@NHWC -> p)[0312]", "lr_fixed(p -> y)"));
  EXPECT_THAT(rewrite->source_op, ElementsAre(0, 0, 1, 2, 3, 4, 4, 5));
  // The NCHW declaration of c1 would not fit its NHWC replacement.
  ASSERT_EQ(rewrite->block.vars_size(), 1);
  EXPECT_EQ(rewrite->block.vars(0).name(), "w");
}

// A training block: the gradient ops of the region's ops read and write
// its layout too, their image gradients renamed with the activations; the
// filter's gradient keeps its name.
TEST(LayoutRewriteTest, TakesGradientOpsIntoTheRegion) {
  const BlockDef block = ParseBlock(
      "vars { name: 'w' persistable: true }\n" + Conv("x", "c1") +
      Unary("lr_act", "c1", "r1") + Unary("lr_pool", "r1", "p") +
      Unary("lr_fixed", "p", "y") +
      OpOf("lr_pool_grad", {"X=r1", "Out@GRAD=p@GRAD"}, {"X@GRAD=r1@GRAD"}) +
      OpOf("lr_act_grad", {"Out=r1", "Out@GRAD=r1@GRAD"}, {"X@GRAD=c1@GRAD"}) +
      OpOf("lr_conv_grad", {"Input=x", "Filter=w", "Output@GRAD=c1@GRAD"},
           {"Input@GRAD=x@GRAD", "Filter@GRAD=w@GRAD"}) +
      Unary("lr_fixed", "x@GRAD", "z"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(
      Summary(rewrite->block),
      ElementsAre(
          "transpose(x -> x@NHWC)[0231]", "lr_conv(x@NHWC -> c1@NHWC)[NHWC]",
          "lr_act(c1@NHWC -> r1@NHWC)", "lr_pool(r1@NHWC -> p@NHWC)[NHWC]",
          "transpose(p@NHWC -> p)[0312]", "lr_fixed(p -> y)",
          "transpose(p@GRAD -> p@GRAD@NHWC)[0231]",
          "lr_pool_grad(r1@NHWC p@GRAD@NHWC -> r1@GRAD@NHWC)[NHWC]",
          "lr_act_grad(r1@NHWC r1@GRAD@NHWC -> c1@GRAD@NHWC)",
          "lr_conv_grad(x@NHWC c1@GRAD@NHWC -> x@GRAD@NHWC w@GRAD)[NHWC]",
          "transpose(x@GRAD@NHWC -> x@GRAD)[0312]", "lr_fixed(x@GRAD -> z)"));
  EXPECT_THAT(rewrite->source_op,
              ElementsAre(0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7));
}

TEST(LayoutRewriteTest, LeavesAGradientOpOfTwoForwardOpsAlone) {
  // c1 would join c0 in the region but for the twins' gradient op, which
  // reads it as written.
  const BlockDef block =
      ParseBlock(Conv("x", "c0") + Conv("c0", "c1") + Conv("c1", "c2") +
                 Unary("lr_fixed", "c2", "y") +
                 OpOf("lr_twin_grad", {"Out=c1", "Out@GRAD=g"}, {"X@GRAD=h"}));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("transpose(x -> x@NHWC)[0231]",
                          "lr_conv(x@NHWC -> c0@NHWC)[NHWC]",
                          "lr_conv(c0@NHWC -> c1@NHWC)[NHWC]",
                          "transpose(c1@NHWC -> c1)[0312]", "lr_conv(c1 -> c2)",
                          "lr_fixed(c2 -> y)", "lr_twin_grad(c1 g -> h)"));
}

// An output an NCHW op reads leaves the region after its writer; a later
// op reading it in the layout reads the layout's copy, not a second
// transpose of it.
TEST(LayoutRewriteTest, ReadsAnOutputLeavingTheRegionInItsLayout) {
  const BlockDef block =
      ParseBlock(Conv("x", "c0") + Conv("c0", "a") +
                 Unary("lr_fixed", "a", "y") + Unary("lr_pool", "a", "p") +
                 Conv("p", "q") + Unary("lr_fixed", "q", "z"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("transpose(x -> x@NHWC)[0231]",
                          "lr_conv(x@NHWC -> c0@NHWC)[NHWC]",
                          "lr_conv(c0@NHWC -> a@NHWC)[NHWC]",
                          "transpose(a@NHWC -> a)[0312]", "lr_fixed(a -> y)",
                          "lr_pool(a@NHWC -> p@NHWC)[NHWC]",
                          "lr_conv(p@NHWC -> q@NHWC)[NHWC]",
                          "transpose(q@NHWC -> q)[0312]", "lr_fixed(q -> z)"));
}

TEST(LayoutRewriteTest, LeavesABlockWithoutConvolutionsAlone) {
  const BlockDef block =
      ParseBlock(Unary("lr_fixed", "x", "a") + Unary("lr_act", "a", "b") +
                 Unary("lr_pool", "b", "c") + Unary("lr_act", "c", "d") +
                 Unary("lr_pool", "d", "e"));
  EXPECT_FALSE(RewriteChannelsLast(block).has_value());
}

TEST(LayoutRewriteTest, LeavesAVariableAnNchwOpAlsoReads) {
  // r1 feeds lr_fixed too, so it stays NCHW, and so does c1 (lr_act's input
  // and output share a layout): nothing is left to keep channels-last.
  const BlockDef block =
      ParseBlock(Conv("x", "c1") + Unary("lr_act", "c1", "r1") +
                 Unary("lr_fixed", "r1", "side") + Conv("r1", "c2"));
  EXPECT_FALSE(RewriteChannelsLast(block).has_value());
}

TEST(LayoutRewriteTest, LeavesOutputsNoOpReads) {
  // c2 is what a caller fetches: it keeps its name and layout.
  const BlockDef block = ParseBlock(Conv("x", "c1") + Conv("c1", "c2"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("transpose(x -> x@NHWC)[0231]",
                          "lr_conv(x@NHWC -> c1@NHWC)[NHWC]",
                          "lr_conv(c1@NHWC -> c2@NHWC)[NHWC]",
                          "transpose(c2@NHWC -> c2)[0312]"));
}

TEST(LayoutRewriteTest, LeavesPersistableAndTwiceWrittenVariables) {
  const BlockDef persistable =
      ParseBlock("vars { name: 'c1' persistable: true }\n" + Conv("x", "c1") +
                 Conv("c1", "c2") + Unary("lr_fixed", "c2", "y"));
  EXPECT_FALSE(RewriteChannelsLast(persistable).has_value());
  const BlockDef twice =
      ParseBlock(Conv("x", "c1") + Unary("lr_fixed", "x", "c1") +
                 Conv("c1", "c2") + Unary("lr_fixed", "c2", "y"));
  EXPECT_FALSE(RewriteChannelsLast(twice).has_value());
}

TEST(LayoutRewriteTest, LeavesAVariableReadBeforeItIsWritten) {
  const BlockDef block = ParseBlock(Conv("c1", "c2") + Conv("x", "c1") +
                                    Unary("lr_fixed", "c2", "y"));
  EXPECT_FALSE(RewriteChannelsLast(block).has_value());
}

TEST(LayoutRewriteTest, LeavesOpsAlreadyChannelsLastOrWithIndices) {
  const BlockDef nhwc =
      ParseBlock(Conv("x", "c1", "NHWC") + Conv("c1", "c2", "NHWC") +
                 Unary("lr_fixed", "c2", "y"));
  EXPECT_FALSE(RewriteChannelsLast(nhwc).has_value());
  // The pool's Indices number NCHW positions: it stays NCHW, and its input
  // with it.
  const BlockDef indices = ParseBlock(
      Conv("x", "c1") +
      "ops { type: 'lr_pool' inputs { slot: 'X' vars: 'c1' } outputs { "
      "slot: 'Out' vars: 'p' } outputs { slot: 'Indices' vars: 'i' } }\n" +
      Unary("lr_fixed", "p", "y"));
  EXPECT_FALSE(RewriteChannelsLast(indices).has_value());
}

TEST(LayoutRewriteTest, LeavesElementwiseOpsWithASecondInput) {
  const BlockDef block = ParseBlock(
      Conv("x", "c1") +
      "ops { type: 'lr_act' inputs { slot: 'X' vars: 'c1' } inputs { slot: "
      "'Extra' vars: 'e' } outputs { slot: 'Out' vars: 'r1' } }\n" +
      Conv("r1", "c2") + Unary("lr_fixed", "c2", "y"));
  EXPECT_FALSE(RewriteChannelsLast(block).has_value());
}

TEST(LayoutRewriteTest, TransposesAnInputOnceForItsReaders) {
  const BlockDef block = ParseBlock(
      Conv("x", "a") + Conv("x", "b") + Conv("a", "c") + Conv("b", "d") +
      Unary("lr_fixed", "c", "y") + Unary("lr_fixed", "d", "z"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(
      Summary(rewrite->block),
      ElementsAre(
          "transpose(x -> x@NHWC)[0231]", "lr_conv(x@NHWC -> a@NHWC)[NHWC]",
          "lr_conv(x@NHWC -> b@NHWC)[NHWC]", "lr_conv(a@NHWC -> c@NHWC)[NHWC]",
          "transpose(c@NHWC -> c)[0312]", "lr_conv(b@NHWC -> d@NHWC)[NHWC]",
          "transpose(d@NHWC -> d)[0312]", "lr_fixed(c -> y)",
          "lr_fixed(d -> z)"));
}

TEST(LayoutRewriteTest, TransposesAgainAfterTheInputChanges) {
  const BlockDef block =
      ParseBlock("vars { name: 'x' persistable: true }\n" + Conv("x", "a") +
                 Conv("a", "a2") + Unary("lr_fixed", "a2", "y") +
                 Unary("lr_fixed", "y", "x") + Conv("x", "b") +
                 Conv("b", "b2") + Unary("lr_fixed", "b2", "z"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(
      Summary(rewrite->block),
      ElementsAre(
          "transpose(x -> x@NHWC)[0231]", "lr_conv(x@NHWC -> a@NHWC)[NHWC]",
          "lr_conv(a@NHWC -> a2@NHWC)[NHWC]", "transpose(a2@NHWC -> a2)[0312]",
          "lr_fixed(a2 -> y)", "lr_fixed(y -> x)",
          "transpose(x -> x@NHWC2)[0231]", "lr_conv(x@NHWC2 -> b@NHWC)[NHWC]",
          "lr_conv(b@NHWC -> b2@NHWC)[NHWC]", "transpose(b2@NHWC -> b2)[0312]",
          "lr_fixed(b2 -> z)"));
}

TEST(LayoutRewriteTest, PicksNamesTheBlockDoesNotUse) {
  const BlockDef block = ParseBlock(Conv("x", "c1") + Conv("c1", "c2") +
                                    Unary("lr_fixed", "c2", "y") +
                                    Unary("lr_fixed", "y", "c1@NHWC"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_EQ(Summary(rewrite->block)[1], "lr_conv(x@NHWC -> c1@NHWC2)[NHWC]");
}

TEST(LayoutRewriteTest, FusesAReluIntoTheConvolutionItReads) {
  // relu(c1) is fused; relu(c2) leaves the region (r2 feeds an NCHW op),
  // so c2 does too and its relu stays a relu.
  const BlockDef block = ParseBlock(
      Conv("x", "c1") + Unary("relu", "c1", "r1") + Conv("r1", "c2") +
      Unary("relu", "c2", "r2") + Unary("lr_fixed", "r2", "y"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("transpose(x -> x@NHWC)[0231]",
                          "lr_conv(x@NHWC -> r1@NHWC)[relu][NHWC]",
                          "lr_conv(r1@NHWC -> c2@NHWC)[NHWC]",
                          "transpose(c2@NHWC -> c2)[0312]", "relu(c2 -> r2)",
                          "lr_fixed(r2 -> y)"));
  EXPECT_THAT(rewrite->source_op, ElementsAre(0, 0, 2, 2, 3, 4));
}

TEST(LayoutRewriteTest, FusesNoReluWhereAnotherOpReadsTheConvolution) {
  const BlockDef block =
      ParseBlock(Conv("x", "c1") + Unary("relu", "c1", "r1") +
                 Conv("c1", "c2") + Conv("r1", "c3") +
                 Unary("lr_fixed", "c2", "y") + Unary("lr_fixed", "c3", "z"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(block);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_EQ(Summary(rewrite->block)[1], "lr_conv(x@NHWC -> c1@NHWC)[NHWC]");
  EXPECT_EQ(Summary(rewrite->block)[2], "relu(c1@NHWC -> r1@NHWC)");
}

// Channel counts as inference would give them to RewriteChannelBlocked.
using Channels = absl::flat_hash_map<std::string, int64_t>;

TEST(ChannelBlockedRewriteTest, KeepsAChainBlockedFromAnImageInput) {
  // x holds an image's 3 channels: the first convolution reads it as it is.
  const BlockDef block =
      ParseBlock(Conv("x", "c1") + Unary("relu", "c1", "r1") +
                 Conv("r1", "c2") + Unary("lr_act", "c2", "r2") +
                 Unary("lr_pool", "r2", "p") + Unary("lr_fixed", "p", "y"));
  const Channels channels = {{"x", 3},   {"c1", 8}, {"r1", 8}, {"c2", 16},
                             {"r2", 16}, {"p", 16}, {"y", 16}};
  const std::optional<LayoutRewrite> rewrite =
      RewriteChannelBlocked(block, channels, ActivationLayout::kNchw8c);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("lr_conv(x -> r1@NCHW8c)[relu][NCHW8c]",
                          "lr_conv(r1@NCHW8c -> c2@NCHW8c)[NCHW8c]",
                          "lr_act(c2@NCHW8c -> r2@NCHW8c)",
                          "lr_pool(r2@NCHW8c -> p@NCHW8c)[NCHW8c]",
                          "transfer_layout(p@NCHW8c -> p)[NCHW8c>NCHW]",
                          "lr_fixed(p -> y)"));
  EXPECT_THAT(rewrite->source_op, ElementsAre(0, 2, 3, 4, 4, 5));
}

TEST(ChannelBlockedRewriteTest, EntersThroughATransferWhereChannelsFit) {
  const BlockDef block = ParseBlock(Conv("x", "c1") + Conv("c1", "c2") +
                                    Unary("lr_fixed", "c2", "y"));
  const std::optional<LayoutRewrite> rewrite =
      RewriteChannelBlocked(block, {{"x", 16}, {"c1", 8}, {"c2", 8}, {"y", 8}},
                            ActivationLayout::kNchw8c);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("transfer_layout(x -> x@NCHW8c)[NCHW>NCHW8c]",
                          "lr_conv(x@NCHW8c -> c1@NCHW8c)[NCHW8c]",
                          "lr_conv(c1@NCHW8c -> c2@NCHW8c)[NCHW8c]",
                          "transfer_layout(c2@NCHW8c -> c2)[NCHW8c>NCHW]",
                          "lr_fixed(c2 -> y)"));
}

TEST(ChannelBlockedRewriteTest, LeavesConvolutionsWhoseOutputsDoNotFit) {
  // b has 12 channels: the convolution writing it stays NCHW, and so does
  // the one before (a would have to leave the layout again at once); the
  // convolution reading b reads it as NCHW and starts a region.
  const BlockDef block =
      ParseBlock(Conv("x", "a") + Conv("a", "b") + Conv("b", "c") +
                 Conv("c", "d") + Unary("lr_fixed", "d", "y"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelBlocked(
      block, {{"x", 3}, {"a", 8}, {"b", 12}, {"c", 8}, {"d", 8}},
      ActivationLayout::kNchw8c);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("lr_conv(x -> a)", "lr_conv(a -> b)",
                          "lr_conv(b -> c@NCHW8c)[NCHW8c]",
                          "lr_conv(c@NCHW8c -> d@NCHW8c)[NCHW8c]",
                          "transfer_layout(d@NCHW8c -> d)[NCHW8c>NCHW]",
                          "lr_fixed(d -> y)"));
}

TEST(ChannelBlockedRewriteTest, BlocksGroupsOfWholeBlocksAndDepthwise) {
  const BlockDef block =
      ParseBlock(Conv("x", "a") + GroupedConv("a", "b", 16) +
                 GroupedConv("b", "c", 2) + Unary("lr_fixed", "c", "y"));
  const std::optional<LayoutRewrite> rewrite =
      RewriteChannelBlocked(block, {{"x", 3}, {"a", 16}, {"b", 16}, {"c", 16}},
                            ActivationLayout::kNchw8c);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("lr_conv(x -> a@NCHW8c)[NCHW8c]",
                          "lr_conv(a@NCHW8c -> b@NCHW8c)[NCHW8c]",
                          "lr_conv(b@NCHW8c -> c@NCHW8c)[NCHW8c]",
                          "transfer_layout(c@NCHW8c -> c)[NCHW8c>NCHW]",
                          "lr_fixed(c -> y)"));
}

TEST(ChannelBlockedRewriteTest, LeavesGroupsOfPartBlocks) {
  // 4 channels per group (oneDNN has no blocked kernel for them): that
  // convolution stays as written, and so does the one before it.
  const BlockDef block =
      ParseBlock(Conv("x", "a") + GroupedConv("a", "b", 4) + Conv("b", "c") +
                 Conv("c", "d") + Unary("lr_fixed", "d", "y"));
  const std::optional<LayoutRewrite> rewrite = RewriteChannelBlocked(
      block, {{"x", 3}, {"a", 16}, {"b", 16}, {"c", 16}, {"d", 16}},
      ActivationLayout::kNchw8c);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("lr_conv(x -> a)", "lr_conv(a -> b)",
                          "transfer_layout(b -> b@NCHW8c)[NCHW>NCHW8c]",
                          "lr_conv(b@NCHW8c -> c@NCHW8c)[NCHW8c]",
                          "lr_conv(c@NCHW8c -> d@NCHW8c)[NCHW8c]",
                          "transfer_layout(d@NCHW8c -> d)[NCHW8c>NCHW]",
                          "lr_fixed(d -> y)"));
  // A grouped convolution of an NCHW image stays as written too.
  const BlockDef image =
      ParseBlock(GroupedConv("x", "a", 3) + Conv("a", "b") + Conv("b", "c") +
                 Unary("lr_fixed", "c", "y"));
  const std::optional<LayoutRewrite> from_image =
      RewriteChannelBlocked(image, {{"x", 3}, {"a", 24}, {"b", 8}, {"c", 8}},
                            ActivationLayout::kNchw8c);
  ASSERT_TRUE(from_image.has_value());
  EXPECT_THAT(Summary(from_image->block),
              ElementsAre("lr_conv(x -> a)",
                          "transfer_layout(a -> a@NCHW8c)[NCHW>NCHW8c]",
                          "lr_conv(a@NCHW8c -> b@NCHW8c)[NCHW8c]",
                          "lr_conv(b@NCHW8c -> c@NCHW8c)[NCHW8c]",
                          "transfer_layout(c@NCHW8c -> c)[NCHW8c>NCHW]",
                          "lr_fixed(c -> y)"));
}

TEST(ChannelBlockedRewriteTest, CountsTheConvolutionsLeftOut) {
  const BlockDef block =
      ParseBlock(Conv("x", "a") + Conv("a", "b") + Conv("b", "c") +
                 Conv("c", "d") + Unary("lr_fixed", "d", "y"));
  const Channels channels = {{"x", 3}, {"a", 8}, {"b", 12}, {"c", 8}, {"d", 8}};
  const std::optional<LayoutRewrite> blocked =
      RewriteChannelBlocked(block, channels, ActivationLayout::kNchw8c);
  ASSERT_TRUE(blocked.has_value());
  EXPECT_EQ(blocked->convolutions_left_out, 2);
  const std::optional<LayoutRewrite> nhwc = RewriteChannelsLast(block);
  ASSERT_TRUE(nhwc.has_value());
  EXPECT_EQ(nhwc->convolutions_left_out, 0);
}

// In 16-channel blocks, a multiple of 8 is not enough: the convolution
// writing a's 24 channels stays as written, and the one reading them reads
// NCHW and writes blocks.
TEST(ChannelBlockedRewriteTest, BlocksOf16TakeMultiplesOf16) {
  const BlockDef block =
      ParseBlock(Conv("x", "a") + Conv("a", "b") + Unary("relu", "b", "r") +
                 Conv("r", "c") + Unary("lr_pool", "c", "p") +
                 Unary("lr_fixed", "p", "y"));
  const Channels channels = {{"x", 3},  {"a", 24}, {"b", 32}, {"r", 32},
                             {"c", 64}, {"p", 64}, {"y", 64}};
  const std::optional<LayoutRewrite> rewrite =
      RewriteChannelBlocked(block, channels, ActivationLayout::kNchw16c);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(
      Summary(rewrite->block),
      ElementsAre("lr_conv(x -> a)", "lr_conv(a -> r@NCHW16c)[relu][NCHW16c]",
                  "lr_conv(r@NCHW16c -> c@NCHW16c)[NCHW16c]",
                  "lr_pool(c@NCHW16c -> p@NCHW16c)[NCHW16c]",
                  "transfer_layout(p@NCHW16c -> p)[NCHW16c>NCHW]",
                  "lr_fixed(p -> y)"));
  EXPECT_EQ(rewrite->convolutions_left_out, 1);
  // The same net in 8-channel blocks takes every convolution.
  const std::optional<LayoutRewrite> blocks_of_8 =
      RewriteChannelBlocked(block, channels, ActivationLayout::kNchw8c);
  ASSERT_TRUE(blocks_of_8.has_value());
  EXPECT_EQ(blocks_of_8->convolutions_left_out, 0);
}

// Groups must fill whole blocks of 16 too: 8 channels per group leave
// that convolution as written, and the one before it.
TEST(ChannelBlockedRewriteTest, BlocksOf16LeaveGroupsOf8) {
  const BlockDef block =
      ParseBlock(Conv("x", "a") + GroupedConv("a", "b", 4) + Conv("b", "c") +
                 Conv("c", "d") + Unary("lr_fixed", "d", "y"));
  const Channels channels = {
      {"x", 3}, {"a", 32}, {"b", 32}, {"c", 32}, {"d", 32}};
  const std::optional<LayoutRewrite> rewrite =
      RewriteChannelBlocked(block, channels, ActivationLayout::kNchw16c);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("lr_conv(x -> a)", "lr_conv(a -> b)",
                          "transfer_layout(b -> b@NCHW16c)[NCHW>NCHW16c]",
                          "lr_conv(b@NCHW16c -> c@NCHW16c)[NCHW16c]",
                          "lr_conv(c@NCHW16c -> d@NCHW16c)[NCHW16c]",
                          "transfer_layout(d@NCHW16c -> d)[NCHW16c>NCHW]",
                          "lr_fixed(d -> y)"));
  EXPECT_EQ(rewrite->convolutions_left_out, 2);
}

TEST(ChannelBlockedRewriteTest, LeavesVariablesOfUnknownChannels) {
  const BlockDef block = ParseBlock(Conv("x", "c1") + Conv("c1", "c2") +
                                    Unary("lr_fixed", "c2", "y"));
  EXPECT_FALSE(
      RewriteChannelBlocked(block, {}, ActivationLayout::kNchw8c).has_value());
  EXPECT_FALSE(RewriteChannelBlocked(block, {{"c1", -1}, {"c2", -1}},
                                     ActivationLayout::kNchw8c)
                   .has_value());
}

std::string Concat(const std::vector<std::string>& ins, const std::string& out,
                   int axis) {
  std::string op = "ops { type: 'concat' inputs { slot: 'X' ";
  for (const std::string& in : ins) op += "vars: '" + in + "' ";
  return op + "} outputs { slot: 'Out' vars: '" + out +
         "' } attrs { name: 'axis' i: " + std::to_string(axis) + " } }\n";
}

// Two branches of a block joined along the channels (an Inception or fire
// module, a DenseNet layer): x -> a, x -> b, concat(a, b) -> c, c -> d.
BlockDef Branches(int axis) {
  return ParseBlock(Conv("x", "a") + Conv("x", "b") +
                    Concat({"a", "b"}, "c", axis) + Conv("c", "d") +
                    Unary("lr_fixed", "d", "y"));
}

absl::flat_hash_map<std::string, Dims> BranchImages(int64_t a, int64_t b) {
  return {{"x", {1, 3, 8, 8}},     {"a", {1, a, 8, 8}},  {"b", {1, b, 8, 8}},
          {"c", {1, a + b, 8, 8}}, {"d", {1, 16, 8, 8}}, {"y", {1, 16, 8, 8}}};
}

TEST(LayoutRewriteTest, ConcatenatesChannelsLastAlongTheLastAxis) {
  const auto images = BranchImages(8, 8);
  for (int axis : {1, -3}) {
    const std::optional<LayoutRewrite> rewrite =
        RewriteChannelsLast(Branches(axis), &images);
    ASSERT_TRUE(rewrite.has_value());
    EXPECT_THAT(Summary(rewrite->block),
                ElementsAre("transpose(x -> x@NHWC)[0231]",
                            "lr_conv(x@NHWC -> a@NHWC)[NHWC]",
                            "lr_conv(x@NHWC -> b@NHWC)[NHWC]",
                            "concat(a@NHWC b@NHWC -> c@NHWC)[axis 3]",
                            "lr_conv(c@NHWC -> d@NHWC)[NHWC]",
                            "transpose(d@NHWC -> d)[0312]", "lr_fixed(d -> y)"))
        << "axis " << axis;
  }
}

// Where the concat cannot join, each branch's convolution is alone between
// NCHW variables, and no region is left to rewrite.
TEST(LayoutRewriteTest, LeavesAConcatAlongAnotherAxis) {
  const auto images = BranchImages(8, 8);
  EXPECT_FALSE(RewriteChannelsLast(Branches(2), &images).has_value());
  EXPECT_TRUE(RewriteChannelsLast(Branches(1), &images).has_value());
}

TEST(LayoutRewriteTest, LeavesAConcatWithoutKnownImages) {
  EXPECT_FALSE(RewriteChannelsLast(Branches(1)).has_value());
}

std::string BatchNorm(const std::string& in, const std::string& out,
                      const std::string& extra = "") {
  return "ops { type: 'batch_norm' inputs { slot: 'X' vars: '" + in +
         "' } inputs { slot: 'Scale' vars: 's' } outputs { slot: 'Y' vars: '" +
         out + "' } " + extra + " }\n";
}

TEST(LayoutRewriteTest, NormalizesInferenceImagesInTheLayout) {
  const absl::flat_hash_map<std::string, Dims> images = {{"x", {1, 3, 8, 8}},
                                                         {"c", {1, 8, 8, 8}},
                                                         {"n", {1, 8, 8, 8}},
                                                         {"d", {1, 8, 8, 8}},
                                                         {"y", {1, 8, 8, 8}}};
  const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(
      ParseBlock(Conv("x", "c") + BatchNorm("c", "n") + Conv("n", "d") +
                 Unary("lr_fixed", "d", "y")),
      &images);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("transpose(x -> x@NHWC)[0231]",
                          "lr_conv(x@NHWC -> c@NHWC)[NHWC]",
                          "batch_norm(c@NHWC s -> n@NHWC)[NHWC]",
                          "lr_conv(n@NHWC -> d@NHWC)[NHWC]",
                          "transpose(d@NHWC -> d)[0312]", "lr_fixed(d -> y)"));
}

TEST(LayoutRewriteTest, FusesAReluIntoTheBatchNormItReads) {
  const absl::flat_hash_map<std::string, Dims> images = {
      {"x", {1, 3, 8, 8}}, {"c", {1, 8, 8, 8}}, {"n", {1, 8, 8, 8}},
      {"r", {1, 8, 8, 8}}, {"d", {1, 8, 8, 8}}, {"y", {1, 8, 8, 8}}};
  const std::optional<LayoutRewrite> rewrite =
      RewriteChannelsLast(ParseBlock(Conv("x", "c") + BatchNorm("c", "n") +
                                     Unary("relu", "n", "r") + Conv("r", "d") +
                                     Unary("lr_fixed", "d", "y")),
                          &images);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("transpose(x -> x@NHWC)[0231]",
                          "lr_conv(x@NHWC -> c@NHWC)[NHWC]",
                          "batch_norm(c@NHWC s -> r@NHWC)[relu][NHWC]",
                          "lr_conv(r@NHWC -> d@NHWC)[NHWC]",
                          "transpose(d@NHWC -> d)[0312]", "lr_fixed(d -> y)"));
}

TEST(LayoutRewriteTest, LeavesTrainingBatchNormsInNchw) {
  absl::flat_hash_map<std::string, Dims> images = {{"x", {1, 3, 8, 8}},
                                                   {"c", {1, 8, 8, 8}},
                                                   {"n", {1, 8, 8, 8}},
                                                   {"d", {1, 8, 8, 8}},
                                                   {"y", {1, 8, 8, 8}}};
  images["e"] = {1, 8, 8, 8};
  for (const std::string& extra :
       {std::string("attrs { name: 'is_test' b: false }"),
        std::string("outputs { slot: 'SavedMean' vars: 'm' }")}) {
    const std::optional<LayoutRewrite> rewrite = RewriteChannelsLast(
        ParseBlock(Conv("x", "c") + Conv("c", "e") +
                   BatchNorm("e", "n", extra) + Conv("n", "d") +
                   Unary("lr_fixed", "d", "y")),
        &images);
    ASSERT_TRUE(rewrite.has_value());
    EXPECT_THAT(
        Summary(rewrite->block),
        ::testing::Contains(::testing::StartsWith("batch_norm(e s -> n")))
        << extra;
  }
}

TEST(ChannelBlockedRewriteTest, ConcatenatesWholeBlocksAlongAxisOne) {
  const auto images = BranchImages(16, 32);
  Channels channels;
  for (const auto& [name, dims] : images) channels[name] = dims[1];
  const std::optional<LayoutRewrite> rewrite = RewriteChannelBlocked(
      Branches(1), channels, ActivationLayout::kNchw16c, &images);
  ASSERT_TRUE(rewrite.has_value());
  EXPECT_THAT(Summary(rewrite->block),
              ElementsAre("lr_conv(x -> a@NCHW16c)[NCHW16c]",
                          "lr_conv(x -> b@NCHW16c)[NCHW16c]",
                          "concat(a@NCHW16c b@NCHW16c -> c@NCHW16c)[axis 1]",
                          "lr_conv(c@NCHW16c -> d@NCHW16c)[NCHW16c]",
                          "transfer_layout(d@NCHW16c -> d)[NCHW16c>NCHW]",
                          "lr_fixed(d -> y)"));
}

TEST(ChannelBlockedRewriteTest, LeavesAConcatOfPartBlocks) {
  // b's 8 channels would end mid-block in c's 16-channel blocks.
  for (int64_t b : {8, 16}) {
    const auto images = BranchImages(16, b);
    Channels channels;
    for (const auto& [name, dims] : images) channels[name] = dims[1];
    EXPECT_EQ(RewriteChannelBlocked(Branches(1), channels,
                                    ActivationLayout::kNchw16c, &images)
                  .has_value(),
              b == 16)
        << b << " channels";
  }
}

TEST(PreferredLayoutTest, FollowsTheCpuAndOneDnnsCap) {
  // Uncapped: the blocks the widest vectors fill.
  EXPECT_EQ(PreferredActivationLayoutFor(true, true, nullptr),
            ActivationLayout::kNchw16c);
  EXPECT_EQ(PreferredActivationLayoutFor(false, true, nullptr),
            ActivationLayout::kNchw8c);
  EXPECT_EQ(PreferredActivationLayoutFor(false, false, nullptr),
            ActivationLayout::kNhwc);
  EXPECT_EQ(PreferredActivationLayoutFor(true, true, ""),
            ActivationLayout::kNchw16c);
  EXPECT_EQ(PreferredActivationLayoutFor(true, true, "ALL"),
            ActivationLayout::kNchw16c);
  EXPECT_EQ(PreferredActivationLayoutFor(true, true, "avx512_core_amx"),
            ActivationLayout::kNchw16c);
  // Capped below AVX-512 or AVX2, oneDNN has no kernels for those blocks.
  EXPECT_EQ(PreferredActivationLayoutFor(true, true, "AVX2"),
            ActivationLayout::kNchw8c);
  EXPECT_EQ(PreferredActivationLayoutFor(true, true, "avx2_vnni"),
            ActivationLayout::kNchw8c);
  EXPECT_EQ(PreferredActivationLayoutFor(true, true, "SSE41"),
            ActivationLayout::kNhwc);
  EXPECT_EQ(PreferredActivationLayoutFor(false, true, "AVX"),
            ActivationLayout::kNhwc);
  // A cap above the CPU changes nothing.
  EXPECT_EQ(PreferredActivationLayoutFor(false, true, "AVX512_CORE"),
            ActivationLayout::kNchw8c);
}

}  // namespace
}  // namespace scopeflow
