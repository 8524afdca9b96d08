// The executor's layout rewrite on real ops, to NHWC, NCHW8c and NCHW16c:
// a CNN gives the same results rewritten as written, fetches of renamed
// variables still work, and errors name the ops of the net as written.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/benchmarks/net_text.h"

namespace scopeflow {
namespace {

using ::testing::Each;
using ::testing::HasSubstr;

// The data_format value of `layout`.
const char* FormatName(ActivationLayout layout) {
  switch (layout) {
    case ActivationLayout::kNchw8c:
      return "NCHW8c";
    case ActivationLayout::kNchw16c:
      return "NCHW16c";
    default:
      return "NHWC";
  }
}

// With C = `channels`: conv 3->C (pad 1), relu, conv C->C (2 groups, pad
// 1), relu, max pool 2x2, conv C->C (no padding), sigmoid, conv C->C
// (dilation 2, pad 2, stride 2), global average pool, flatten, fc C->5.
// With 32 channels every count fills blocks of 8 and 16 (the groups' too),
// so NCHW8c and NCHW16c keep all of it. Its parameters are set in `scope`.
NetDef Cnn(Scope& scope, int64_t channels = 32) {
  const int64_t c = channels;
  NetText text;
  text.Var("x", {-1, 3, -1, -1});
  struct Layer {
    int64_t in, out, groups;
    std::string attrs, activation;
  };
  const std::vector<Layer> layers = {
      {3, c, 1, "attrs { name: 'paddings' ints { values: [1, 1] } }", "relu"},
      {c, c, 2,
       "attrs { name: 'paddings' ints { values: [1, 1] } } attrs { name: "
       "'groups' i: 2 }",
       "relu"},
      {c, c, 1, "", "sigmoid"},
      {c, c, 1,
       "attrs { name: 'paddings' ints { values: [2, 2] } } attrs { name: "
       "'dilations' ints { values: [2, 2] } } attrs { name: 'strides' ints { "
       "values: [2, 2] } }",
       ""}};
  std::string in = "x";
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const std::string w = absl::StrCat("conv", i, ".w");
    const std::string b = absl::StrCat("conv", i, ".b");
    const Dims filter = {l.out, l.in / l.groups, 3, 3};
    text.Var(w, {filter.begin(), filter.end()}, true);
    text.Var(b, {l.out}, true);
    **scope.Var(w)->GetMutable<Tensor>() =
        MakeTensor<float>(filter, RandomFloats(NumElements(filter), 10 + i));
    **scope.Var(b)->GetMutable<Tensor>() =
        MakeTensor<float>({l.out}, RandomFloats(l.out, 20 + i));
    const std::string out = absl::StrCat("conv", i);
    text.Op("conv2d", {{"Input", in}, {"Filter", w}, {"Bias", b}}, out, l.attrs,
            "Output");
    in = out;
    if (!l.activation.empty()) {
      text.Op(l.activation, {{"X", out}}, out + ".act");
      in = out + ".act";
    }
    if (i == 1) {
      text.Op("pool2d", {{"X", in}}, "pooled",
              "attrs { name: 'pooling_type' s: 'max' } attrs { name: 'ksize' "
              "ints { values: [2, 2] } } attrs { name: 'strides' ints { "
              "values: [2, 2] } }");
      in = "pooled";
    }
  }
  text.Op("pool2d", {{"X", in}}, "gap",
          "attrs { name: 'pooling_type' s: 'avg' } attrs { name: 'ksize' ints "
          "{ values: [1, 1] } } attrs { name: 'global_pooling' b: true }");
  text.Op("flatten", {{"X", "gap"}}, "features");
  text.Var("fc.w", {c, 5}, true);
  text.Var("fc.b", {5}, true);
  **scope.Var("fc.w")->GetMutable<Tensor>() =
      MakeTensor<float>({c, 5}, RandomFloats(c * 5, 30));
  **scope.Var("fc.b")->GetMutable<Tensor>() =
      MakeTensor<float>({5}, RandomFloats(5, 31));
  text.Op("fc", {{"X", "features"}, {"W", "fc.w"}, {"Bias", "fc.b"}}, "logits");
  return text.Build();
}

// Without the conv-fusion pass either, which fuses the relus too.
ExecutorOptions AsWritten() {
  ExecutorOptions options;
  options.prepare.channels_last = false;
  options.prepare.fuse_ops = false;
  return options;
}

void ExpectNear(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.dims(), expected.dims());
  const std::vector<float> a = Values<float>(actual);
  const std::vector<float> e = Values<float>(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], e[i], 1e-4 * (1 + std::abs(e[i]))) << "element " << i;
  }
}

class ChannelsLastTest : public ::testing::TestWithParam<ActivationLayout> {
 protected:
  ChannelsLastTest() : net_(Cnn(scope_)) {}

  ExecutorOptions Options(bool channels_last) const {
    ExecutorOptions options;
    options.prepare.channels_last = channels_last;
    options.prepare.fuse_ops = channels_last;
    options.prepare.activation_layout = GetParam();
    return options;
  }

  // Runs the CNN on a random [batch, 3, size, size] input, fetching
  // `fetches`, rewritten (`channels_last`) or as written.
  std::vector<Tensor> Run(bool channels_last, int64_t batch, int64_t size,
                          const std::vector<std::string>& fetches) {
    Executor executor(Options(channels_last));
    absl::StatusOr<PreparedNet> prepared =
        executor.Prepare(net_, 0, CPUPlace());
    EXPECT_TRUE(prepared.ok()) << prepared.status();
    EXPECT_EQ(prepared->rewritten(), channels_last);
    const Dims dims = {batch, 3, size, size};
    absl::StatusOr<std::vector<Tensor>> out = executor.Run(
        *prepared, scope_,
        {{"x", MakeTensor<float>(dims, RandomFloats(NumElements(dims), 7))}},
        fetches);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : std::vector<Tensor>();
  }

  Scope scope_;
  NetDef net_;
};

TEST_P(ChannelsLastTest, RewritesTheConvolutions) {
  absl::StatusOr<PreparedNet> prepared =
      Executor(Options(true)).Prepare(net_, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_TRUE(prepared->rewritten());
  const bool blocked = GetParam() != ActivationLayout::kNhwc;
  int rewritten_convs = 0;
  int fused_relus = 0;
  int relayouts = 0;
  int relus = 0;
  for (const PreparedOp& op : prepared->ops()) {
    if (op.spec->type() == (blocked ? "transfer_layout" : "transpose")) {
      ++relayouts;
    }
    if (op.spec->type() == "relu") ++relus;
    if (op.spec->type() == "conv2d" &&
        op.attrs.Get<std::string>("data_format") == FormatName(GetParam())) {
      ++rewritten_convs;
      fused_relus += op.attrs.Get<bool>("fuse_relu");
    }
  }
  EXPECT_EQ(rewritten_convs, 4);
  // Both relus run inside their convolutions; the sigmoid stays an op.
  EXPECT_EQ(fused_relus, 2);
  EXPECT_EQ(relus, 0);
  // NHWC: into the region before the first conv, out of it after the
  // global pool. Blocked: only out; the first conv reads the NCHW image.
  EXPECT_EQ(relayouts, blocked ? 1 : 2);
  EXPECT_EQ(prepared->VarIndex("conv1.act"), -1);
  EXPECT_GE(prepared->VarIndex("logits"), 0);
}

TEST_P(ChannelsLastTest, GivesTheResultsOfTheNetAsWritten) {
  for (int64_t batch : {1, 3}) {
    for (int64_t size : {9, 16}) {
      SCOPED_TRACE(absl::StrCat("batch ", batch, ", size ", size));
      const std::vector<Tensor> rewritten = Run(true, batch, size, {"logits"});
      const std::vector<Tensor> written = Run(false, batch, size, {"logits"});
      ASSERT_EQ(rewritten.size(), 1u);
      ASSERT_EQ(written.size(), 1u);
      ExpectNear(rewritten[0], written[0]);
    }
  }
}

TEST_P(ChannelsLastTest, FetchesARenamedVariableInNchw) {
  // conv0 is not even computed apart from its relu in the rewritten block.
  const std::vector<std::string> fetches = {"logits", "conv1.act", "pooled",
                                            "conv0"};
  const std::vector<Tensor> rewritten = Run(true, 2, 8, fetches);
  const std::vector<Tensor> written = Run(false, 2, 8, fetches);
  ASSERT_EQ(rewritten.size(), 4u);
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(rewritten[1].dims(), (Dims{2, 32, 8, 8}));
  EXPECT_EQ(rewritten[2].dims(), (Dims{2, 32, 4, 4}));
  EXPECT_EQ(rewritten[3].dims(), (Dims{2, 32, 8, 8}));
  for (int i = 0; i < 4; ++i) ExpectNear(rewritten[i], written[i]);
}

TEST_P(ChannelsLastTest, ErrorsNameTheOpOfTheNetAsWritten) {
  // After the pool, a 1x1 image is too small for conv2 (3x3, no padding):
  // op 5 of the net as written, whichever plan runs.
  for (bool channels_last : {true, false}) {
    SCOPED_TRACE(channels_last ? "rewritten" : "as written");
    Executor executor(Options(channels_last));
    absl::StatusOr<PreparedNet> prepared =
        executor.Prepare(net_, 0, CPUPlace());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    absl::StatusOr<std::vector<Tensor>> out = executor.Run(
        *prepared, scope_,
        {{"x", MakeTensor<float>({1, 3, 2, 2}, RandomFloats(12, 1))}},
        {"logits"});
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("op 5 (conv2d)"));
    EXPECT_THAT(out.status().message(), HasSubstr("\"pooled"));
  }
}

TEST_P(ChannelsLastTest, LeavesTheNetAloneOffTheOption) {
  absl::StatusOr<PreparedNet> prepared =
      Executor(AsWritten()).Prepare(net_, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(prepared->rewritten());
  EXPECT_EQ(prepared->ops().size(),
            static_cast<size_t>(net_.blocks(0).ops_size()));
}

// Training: the gradient ops of the region's ops take its layout too, their
// gradients renamed with the activations, and every parameter's gradient
// is the one of the net as written.
TEST_P(ChannelsLastTest, GradientsOfATrainingNetMatchTheNetAsWritten) {
  NetDef train = net_;
  NetText loss;
  loss.Op("mean", {{"X", "logits"}}, "loss");
  const NetDef loss_net = loss.Build();
  for (const OpDef& op : loss_net.blocks(0).ops()) {
    *train.mutable_blocks(0)->add_ops() = op;
  }
  absl::StatusOr<std::vector<VarGrad>> grads = AppendBackward(train, "loss");
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<std::string> fetches;
  for (const VarGrad& grad : *grads) fetches.push_back(grad.grad);
  ASSERT_EQ(fetches.size(), 10u);  // Four filters, four biases, fc's two.
  const Dims dims = {3, 3, 12, 12};
  const Tensor x = MakeTensor<float>(dims, RandomFloats(NumElements(dims), 8));
  std::vector<std::vector<Tensor>> results;
  for (bool channels_last : {true, false}) {
    Executor executor(Options(channels_last));
    absl::StatusOr<PreparedNet> prepared =
        executor.Prepare(train, 0, CPUPlace());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    ASSERT_EQ(prepared->rewritten(), channels_last);
    if (channels_last) {
      // The parameters' gradients keep their names: this plan runs.
      ASSERT_EQ(&prepared->PlanFor(fetches), &*prepared);
      const std::string format = FormatName(GetParam());
      int conv_grads = 0;
      int pool_grads = 0;
      for (const PreparedOp& op : prepared->ops()) {
        const std::string& type = op.spec->type();
        if ((type == "conv2d_grad" || type == "pool2d_grad") &&
            op.attrs.Get<std::string>("data_format") == format) {
          ++(type == "conv2d_grad" ? conv_grads : pool_grads);
        }
      }
      EXPECT_EQ(pool_grads, 2);
      // Blocked: the first convolution's gradient reads the 3-channel
      // image, which does not fit blocks, so it stays NCHW.
      EXPECT_EQ(conv_grads, GetParam() == ActivationLayout::kNhwc ? 4 : 3);
    }
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, scope_, {{"x", x}}, fetches);
    ASSERT_TRUE(out.ok()) << out.status();
    results.push_back(*out);
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    SCOPED_TRACE(fetches[i]);
    ExpectNear(results[0][i], results[1][i]);
  }
}

// x -> conv 3->16 + relu -> two branches, 1x1 conv 16->16 and 3x3 conv
// 16->32, joined along the channels (a fire or Inception module) ->
// batch_norm -> relu (DenseNet's pre-activation) -> conv 48->16 -> global
// average pool -> flatten -> "out". Parameters in `scope`.
NetDef Branches(Scope& scope) {
  NetText text;
  text.Var("x", {-1, 3, -1, -1});
  int seed = 40;
  auto conv = [&](const std::string& in, const std::string& out,
                  int64_t in_channels, int64_t out_channels, int64_t size) {
    const Dims filter = {out_channels, in_channels, size, size};
    const std::string w = out + ".w";
    text.Var(w, {filter.begin(), filter.end()}, true);
    **scope.Var(w)->GetMutable<Tensor>() =
        MakeTensor<float>(filter, RandomFloats(NumElements(filter), seed++));
    text.Op(
        "conv2d", {{"Input", in}, {"Filter", w}}, out,
        size == 3 ? "attrs { name: 'paddings' ints { values: [1, 1] } }" : "",
        "Output");
  };
  conv("x", "stem", 3, 16, 3);
  text.Op("relu", {{"X", "stem"}}, "stem.act");
  conv("stem.act", "a", 16, 16, 1);
  conv("stem.act", "b", 16, 32, 3);
  // One slot binding both branches: the Var/Op helpers bind one per slot.
  text.Op("concat", {{"X", "a' vars: 'b"}}, "c", "attrs { name: 'axis' i: 1 }");
  std::vector<std::pair<std::string, std::string>> norm = {{"X", "c"}};
  for (const char* slot : {"Scale", "Bias", "Mean", "Variance"}) {
    const std::string name = absl::StrCat("norm.", slot);
    text.Var(name, {48}, true);
    std::vector<float> values = RandomFloats(48, seed++);
    // A variance must be positive.
    for (float& v : values) v = std::abs(v) + 0.5f;
    **scope.Var(name)->GetMutable<Tensor>() = MakeTensor<float>({48}, values);
    norm.push_back({slot, name});
  }
  text.Op("batch_norm", norm, "normed", "", "Y");
  text.Op("relu", {{"X", "normed"}}, "normed.act");
  conv("normed.act", "d", 48, 16, 3);
  text.Op("pool2d", {{"X", "d"}}, "gap",
          "attrs { name: 'pooling_type' s: 'avg' } attrs { name: 'ksize' ints "
          "{ values: [1, 1] } } attrs { name: 'global_pooling' b: true }");
  text.Op("flatten", {{"X", "gap"}}, "out");
  return text.Build();
}

TEST_P(ChannelsLastTest, ConcatenatesBranchesInTheLayout) {
  Scope scope;
  const NetDef net = Branches(scope);
  absl::StatusOr<PreparedNet> prepared =
      Executor(Options(true)).Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const bool blocked = GetParam() != ActivationLayout::kNhwc;
  int relayouts = 0;
  int concats = 0;
  int norms = 0;
  for (const PreparedOp& op : prepared->ops()) {
    if (op.spec->type() == (blocked ? "transfer_layout" : "transpose")) {
      ++relayouts;
    }
    if (op.spec->type() == "concat") {
      ++concats;
      EXPECT_EQ(op.attrs.Get<int32_t>("axis"), blocked ? 1 : 3);
    }
    if (op.spec->type() == "batch_norm") {
      ++norms;
      EXPECT_EQ(op.attrs.Get<std::string>("data_format"),
                FormatName(GetParam()));
      EXPECT_TRUE(op.attrs.Get<bool>("fuse_relu"));
    }
    EXPECT_NE(op.spec->type(), "relu");
  }
  EXPECT_EQ(concats, 1);
  EXPECT_EQ(norms, 1);
  // NHWC: into the layout before the stem and out after the pool. Blocked:
  // out only, the stem reads the NCHW image.
  EXPECT_EQ(relayouts, blocked ? 1 : 2);
  const Dims dims = {2, 3, 10, 10};
  const Tensor x = MakeTensor<float>(dims, RandomFloats(NumElements(dims), 9));
  absl::StatusOr<std::vector<Tensor>> rewritten =
      Executor(Options(true)).Run(*prepared, scope, {{"x", x}}, {"out"});
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  Executor written(AsWritten());
  absl::StatusOr<PreparedNet> plain = written.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<std::vector<Tensor>> expected =
      written.Run(*plain, scope, {{"x", x}}, {"out"});
  ASSERT_TRUE(expected.ok()) << expected.status();
  ExpectNear((*rewritten)[0], (*expected)[0]);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, ChannelsLastTest,
    ::testing::Values(ActivationLayout::kNhwc, ActivationLayout::kNchw8c,
                      ActivationLayout::kNchw16c),
    [](const ::testing::TestParamInfo<ActivationLayout>& info) {
      return std::string(FormatName(info.param));
    });

// The data_format of each conv2d `net` prepares to under kAuto.
std::vector<std::string> AutoConvFormats(const NetDef& net) {
  absl::StatusOr<PreparedNet> prepared = Executor().Prepare(net, 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  std::vector<std::string> formats;
  if (!prepared.ok()) return formats;
  for (const PreparedOp& op : prepared->ops()) {
    if (op.spec->type() == "conv2d") {
      formats.push_back(op.attrs.Get<std::string>("data_format"));
    }
  }
  return formats;
}

// kAuto picks the layout this CPU prefers.
TEST(ActivationLayoutTest, AutoIsThePreferredLayout) {
  Scope scope;
  EXPECT_THAT(AutoConvFormats(Cnn(scope)),
              Each(FormatName(PreferredCpuActivationLayout())));
}

// ... except where channel counts leave convolutions out of its blocks:
// with 8 channels (in groups of 4), neither blocks of 8 nor of 16 take all
// of the CNN's convolutions, and NHWC does.
TEST(ActivationLayoutTest, AutoTakesNhwcWhereBlocksLeaveConvolutionsOut) {
  Scope scope;
  EXPECT_THAT(AutoConvFormats(Cnn(scope, /*channels=*/8)), Each("NHWC"));
}

}  // namespace
}  // namespace scopeflow
