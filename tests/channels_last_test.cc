// The executor's layout rewrite on real ops, to NHWC and to NCHW8c: a CNN
// gives the same results rewritten as written, fetches of renamed
// variables still work, and errors name the ops of the net as written.
#include <cmath>
#include <random>
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

using ::testing::HasSubstr;

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(engine);
  return values;
}

// conv 3->16 (pad 1), relu, conv 16->16 (2 groups of 8 channels, pad 1),
// relu, max pool 2x2, conv 16->16 (no padding), sigmoid, conv 16->16
// (dilation 2, pad 2, stride 2), global average pool, flatten, fc 16->5.
// Every channel count fills blocks of 8, so NCHW8c keeps all of it. Its
// parameters are set in `scope`.
NetDef Cnn(Scope& scope) {
  NetText text;
  text.Var("x", {-1, 3, -1, -1});
  struct Layer {
    int64_t in, out, groups;
    std::string attrs, activation;
  };
  const std::vector<Layer> layers = {
      {3, 16, 1, "attrs { name: 'paddings' ints { values: [1, 1] } }", "relu"},
      {16, 16, 2,
       "attrs { name: 'paddings' ints { values: [1, 1] } } attrs { name: "
       "'groups' i: 2 }",
       "relu"},
      {16, 16, 1, "", "sigmoid"},
      {16, 16, 1,
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
        MakeTensor<float>(filter, Random(NumElements(filter), 10 + i));
    **scope.Var(b)->GetMutable<Tensor>() =
        MakeTensor<float>({l.out}, Random(l.out, 20 + i));
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
  text.Var("fc.w", {16, 5}, true);
  text.Var("fc.b", {5}, true);
  **scope.Var("fc.w")->GetMutable<Tensor>() =
      MakeTensor<float>({16, 5}, Random(80, 30));
  **scope.Var("fc.b")->GetMutable<Tensor>() =
      MakeTensor<float>({5}, Random(5, 31));
  text.Op("fc", {{"X", "features"}, {"W", "fc.w"}, {"Bias", "fc.b"}}, "logits");
  return text.Build();
}

ExecutorOptions AsWritten() {
  ExecutorOptions options;
  options.channels_last = false;
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
    options.channels_last = channels_last;
    options.activation_layout = GetParam();
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
        {{"x", MakeTensor<float>(dims, Random(NumElements(dims), 7))}},
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
  const bool blocked = GetParam() == ActivationLayout::kNchw8c;
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
        op.attrs.Get<std::string>("data_format") ==
            (blocked ? "NCHW8c" : "NHWC")) {
      ++rewritten_convs;
      fused_relus += op.attrs.Get<bool>("fuse_relu");
    }
  }
  EXPECT_EQ(rewritten_convs, 4);
  // Both relus run inside their convolutions; the sigmoid stays an op.
  EXPECT_EQ(fused_relus, 2);
  EXPECT_EQ(relus, 0);
  // NHWC: into the region before the first conv, out of it after the
  // global pool. NCHW8c: only out; the first conv reads the NCHW image.
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
  EXPECT_EQ(rewritten[1].dims(), (Dims{2, 16, 8, 8}));
  EXPECT_EQ(rewritten[2].dims(), (Dims{2, 16, 4, 4}));
  EXPECT_EQ(rewritten[3].dims(), (Dims{2, 16, 8, 8}));
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
        {{"x", MakeTensor<float>({1, 3, 2, 2}, Random(12, 1))}}, {"logits"});
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
  const Tensor x = MakeTensor<float>(dims, Random(NumElements(dims), 8));
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
      const std::string format =
          GetParam() == ActivationLayout::kNchw8c ? "NCHW8c" : "NHWC";
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
      // NCHW8c: the first convolution's gradient reads the 3-channel
      // image, which does not fit blocks, so it stays NCHW.
      EXPECT_EQ(conv_grads, GetParam() == ActivationLayout::kNchw8c ? 3 : 4);
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

INSTANTIATE_TEST_SUITE_P(
    Layouts, ChannelsLastTest,
    ::testing::Values(ActivationLayout::kNhwc, ActivationLayout::kNchw8c),
    [](const ::testing::TestParamInfo<ActivationLayout>& info) {
      return info.param == ActivationLayout::kNhwc ? "Nhwc" : "Nchw8c";
    });

// kAuto picks the layout this CPU prefers.
TEST(ActivationLayoutTest, AutoIsThePreferredLayout) {
  Scope scope;
  const NetDef net = Cnn(scope);
  absl::StatusOr<PreparedNet> prepared = Executor().Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const std::string expected =
      PreferredCpuActivationLayout() == ActivationLayout::kNchw8c ? "NCHW8c"
                                                                  : "NHWC";
  for (const PreparedOp& op : prepared->ops()) {
    if (op.spec->type() == "conv2d") {
      EXPECT_EQ(op.attrs.Get<std::string>("data_format"), expected);
    }
  }
}

}  // namespace
}  // namespace scopeflow
