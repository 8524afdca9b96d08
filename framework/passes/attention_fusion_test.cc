// attention_fusion on torch's exports (nn.MultiheadAttention with and
// without a mask at opsets 11, 13, 17, torchvision's ViT; written by
// testdata/attention/make_attention_models.py) against torch's outputs and
// the nets as written, fetches of fused-away variables, nets written as
// other exporters write attention (rank 4, scale on the scores, K
// transposed by the matmul or stored so), and what must not fuse.
#include "framework/passes/attention_fusion.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/op_test_util.h"
#include "framework/prepare.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::Contains;
using ::testing::Not;

absl::StatusOr<Tensor> ReadTensor(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError("cannot parse " + path);
  }
  return onnx_import::TensorFromOnnx(proto);
}

std::vector<std::string> OpTypes(const PreparedNet& prepared) {
  std::vector<std::string> types;
  for (const PreparedOp& op : prepared.ops()) types.push_back(op.spec->type());
  return types;
}

int Count(const std::vector<std::string>& types, const std::string& type) {
  return static_cast<int>(std::count(types.begin(), types.end(), type));
}

void ExpectNear(const Tensor& got, const Tensor& want, double tolerance) {
  ASSERT_EQ(got.dims(), want.dims());
  const std::vector<float> g = Values<float>(got);
  const std::vector<float> w = Values<float>(want);
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], w[i], tolerance) << "element " << i;
  }
}

struct Export {
  std::string name;
  int attentions;
};

class TorchExportTest : public ::testing::TestWithParam<Export> {};

TEST_P(TorchExportTest, FusesAndMatchesTorch) {
  const std::string prefix =
      "framework/passes/testdata/attention/" + GetParam().name;
  absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(prefix + ".onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<ImportedModel> imported = ImportOnnx(*model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<Tensor> x = ReadTensor(prefix + "_x.pb");
  absl::StatusOr<Tensor> y = ReadTensor(prefix + "_y.pb");
  ASSERT_TRUE(x.ok() && y.ok());

  absl::StatusOr<PreparedNet> fused =
      PrepareNet(imported->net, 0, CPUPlace(), PrepareOptions());
  ASSERT_TRUE(fused.ok()) << fused.status();
  const std::vector<std::string> types = OpTypes(*fused);
  EXPECT_EQ(Count(types, "attention"), GetParam().attentions);
  EXPECT_THAT(types, Not(Contains("softmax")));
  EXPECT_THAT(fused->passes(), Contains("attention_fusion"));
  // torch's layout: the transposes of the heads go with the fusion.
  for (const PreparedOp& op : fused->ops()) {
    if (op.spec->type() == "attention") {
      EXPECT_TRUE(op.attrs.Get<bool>("seq_first"));
    }
  }

  // The softmax's output, fused away, fetched beside the output.
  std::string probabilities;
  for (const OpDef& op : imported->net.blocks(0).ops()) {
    if (op.type() == "softmax") probabilities = op.outputs(0).vars(0);
  }
  ASSERT_FALSE(probabilities.empty());
  absl::StatusOr<PreparedNet> written =
      PrepareNet(imported->net, 0, CPUPlace(), PrepareOptions::AsWritten());
  ASSERT_TRUE(written.ok()) << written.status();
  Scope scope;
  ASSERT_TRUE(AddParamsToScope(*imported, scope).ok());
  const Executor executor;
  const std::string input = imported->inputs[0];
  const std::string output = imported->outputs[0];
  auto out = executor.Run(*fused, scope, {{input, *x}}, {output});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], *y, 1e-5);
  auto both =
      executor.Run(*fused, scope, {{input, *x}}, {output, probabilities});
  auto as_written =
      executor.Run(*written, scope, {{input, *x}}, {output, probabilities});
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_TRUE(as_written.ok()) << as_written.status();
  ExpectNear((*both)[0], *y, 1e-5);
  ExpectNear((*both)[1], (*as_written)[1], 0);
}

INSTANTIATE_TEST_SUITE_P(
    Exports, TorchExportTest,
    ::testing::Values(Export{"mha_opset11", 1}, Export{"mha_opset13", 1},
                      Export{"mha_opset17", 1}, Export{"mha_mask_opset11", 1},
                      Export{"mha_mask_opset13", 1},
                      Export{"mha_mask_opset17", 1}, Export{"vit_opset13", 1}),
    [](const ::testing::TestParamInfo<Export>& info) {
      return info.param.name;
    });

// Nets written by hand as other exporters write attention: rank 4
// [batch, heads, seq, head_dim].
std::string Op(const std::string& type, const std::string& ins,
               const std::string& out, const std::string& attrs = "") {
  return absl::StrCat("ops { type: '", type, "' ", ins,
                      " outputs { slot: 'Out' vars: '", out, "' } ", attrs,
                      " }\n");
}
std::string In(const std::string& slot, const std::string& var) {
  return absl::StrCat("inputs { slot: '", slot, "' vars: '", var, "' } ");
}

constexpr int64_t kB = 2, kH = 3, kL = 5, kD = 4;

NetDef Net(const std::string& ops, bool k_stored_transposed = false) {
  const std::string l = std::to_string(kL), d = std::to_string(kD);
  const std::string dims =
      absl::StrCat("[", kB, ", ", kH, ", ", l, ", ", d, "]");
  const std::string k_dims =
      k_stored_transposed
          ? absl::StrCat("[", kB, ", ", kH, ", ", d, ", ", l, "]")
          : dims;
  const std::string text = absl::StrCat(
      "name: 'attention' format_version: 1 blocks { ",
      "vars { name: 'q' dtype: DATA_TYPE_FLOAT32 shape: ", dims, " } ",
      "vars { name: 'k' dtype: DATA_TYPE_FLOAT32 shape: ", k_dims, " } ",
      "vars { name: 'v' dtype: DATA_TYPE_FLOAT32 shape: ", dims, " } ",
      "vars { name: 'mask' dtype: DATA_TYPE_FLOAT32 shape: [", kB, ", 1, 1, ",
      l, "] } ", "vars { name: 'c' dtype: DATA_TYPE_FLOAT32 shape: [1] } ", ops,
      "}");
  NetDef net;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  return net;
}

std::vector<Feed> Feeds(bool k_stored_transposed = false) {
  const Dims dims = {kB, kH, kL, kD};
  const Dims k_dims = k_stored_transposed ? Dims{kB, kH, kD, kL} : dims;
  return {{"q", MakeTensor<float>(dims, RandomFloats(NumElements(dims), 1))},
          {"k", MakeTensor<float>(k_dims, RandomFloats(NumElements(dims), 2))},
          {"v", MakeTensor<float>(dims, RandomFloats(NumElements(dims), 3))},
          {"mask", MakeTensor<float>({kB, 1, 1, kL},
                                     {0, 0, -1e4f, 0, 0, 0, -1e4f, 0, 0, 0})},
          {"c", MakeTensor<float>({1}, {2.0f})}};
}

// Prepares `net` fused and as written, runs both fetching "out" and
// `extra`; returns the fused net's op types.
std::vector<std::string> RunBoth(const NetDef& net,
                                 const std::vector<Feed>& feeds,
                                 const std::vector<std::string>& fetches = {
                                     "out"}) {
  absl::StatusOr<PreparedNet> fused =
      PrepareNet(net, 0, CPUPlace(), PrepareOptions());
  absl::StatusOr<PreparedNet> written =
      PrepareNet(net, 0, CPUPlace(), PrepareOptions::AsWritten());
  EXPECT_TRUE(fused.ok()) << fused.status();
  EXPECT_TRUE(written.ok()) << written.status();
  if (!fused.ok() || !written.ok()) return {};
  // Only what the net reads: not every net here reads the mask or c.
  std::vector<Feed> inputs;
  for (const Feed& feed : feeds) {
    const std::vector<std::string>& names = written->input_names();
    if (std::find(names.begin(), names.end(), feed.name) != names.end()) {
      inputs.push_back(feed);
    }
  }
  Scope scope;
  const Executor executor;
  auto got = executor.Run(*fused, scope, inputs, fetches);
  auto want = executor.Run(*written, scope, inputs, fetches);
  EXPECT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(want.ok()) << want.status();
  if (got.ok() && want.ok()) {
    for (size_t i = 0; i < fetches.size(); ++i) {
      SCOPED_TRACE(fetches[i]);
      ExpectNear((*got)[i], (*want)[i], 1e-5);
    }
  }
  return OpTypes(*fused);
}

// The attributes of the attention op `net` fuses into (null if none).
std::unique_ptr<Attributes> FusedAttrs(const NetDef& net) {
  absl::StatusOr<PreparedNet> fused =
      PrepareNet(net, 0, CPUPlace(), PrepareOptions());
  if (!fused.ok()) return nullptr;
  for (const PreparedOp& op : fused->ops()) {
    if (op.spec->type() == "attention") {
      return std::make_unique<Attributes>(op.attrs);
    }
  }
  return nullptr;
}

TEST(AttentionFusionTest, BertStyleDivOnScoresTransposedKAndMask) {
  // MatMul(Q, Transpose(K, [0, 1, 3, 2])), Div by a scalar, Add mask.
  const NetDef net =
      Net(Op("transpose", In("X", "k"), "kt",
             "attrs { name: 'perm' ints { values: [0, 1, 3, 2] } }") +
          Op("matmul", In("X", "q") + In("Y", "kt"), "s") +
          Op("div", In("X", "s") + In("Y", "c"), "scaled") +
          Op("add", In("X", "scaled") + In("Y", "mask"), "masked") +
          Op("softmax", In("X", "masked"), "p") +
          Op("matmul", In("X", "p") + In("Y", "v"), "out"));
  EXPECT_EQ(RunBoth(net, Feeds()), std::vector<std::string>{"attention"});
  std::unique_ptr<Attributes> fused = FusedAttrs(net);
  ASSERT_NE(fused, nullptr);
  EXPECT_FALSE(fused->Get<bool>("transpose_k"));
  EXPECT_FALSE(fused->Get<bool>("seq_first"));
  // The scores and probabilities, fused away, can still be fetched.
  RunBoth(net, Feeds(), {"out", "p", "masked"});
}

TEST(AttentionFusionTest, ScaleOnEitherSideAndMatmulTransposes) {
  // Mul(c, S) with the scalar first, K transposed by the matmul, alpha.
  const NetDef net = Net(
      Op("matmul", In("X", "q") + In("Y", "k"), "s",
         "attrs { name: 'transpose_y' b: true } attrs { name: 'alpha' f: "
         "0.5 }") +
      Op("mul", In("X", "c") + In("Y", "s"), "scaled") +
      Op("softmax", In("X", "scaled"), "p", "attrs { name: 'axis' i64: 3 }") +
      Op("matmul", In("X", "p") + In("Y", "v"), "out"));
  EXPECT_EQ(RunBoth(net, Feeds()), std::vector<std::string>{"attention"});
  std::unique_ptr<Attributes> fused = FusedAttrs(net);
  ASSERT_NE(fused, nullptr);
  EXPECT_FLOAT_EQ(fused->Get<float>("scale"), 0.5f);
  // Q scaled before the product instead, and K stored transposed.
  const NetDef stored =
      Net(Op("mul", In("X", "q") + In("Y", "c"), "qs") +
              Op("matmul", In("X", "qs") + In("Y", "k"), "s") +
              Op("add", In("X", "mask") + In("Y", "s"), "masked") +
              Op("softmax", In("X", "masked"), "p") +
              Op("matmul", In("X", "p") + In("Y", "v"), "out"),
          /*k_stored_transposed=*/true);
  EXPECT_EQ(RunBoth(stored, Feeds(true)),
            std::vector<std::string>{"attention"});
  fused = FusedAttrs(stored);
  ASSERT_NE(fused, nullptr);
  EXPECT_TRUE(fused->Get<bool>("transpose_k"));
}

TEST(AttentionFusionTest, LeavesWhatIsNotAttention) {
  const std::string tail = Op("matmul", In("X", "p") + In("Y", "v"), "out");
  const std::string scores = Op("matmul", In("X", "q") + In("Y", "k"), "s",
                                "attrs { name: 'transpose_y' b: true }");
  // The probabilities read by another op too.
  std::vector<std::string> types =
      RunBoth(Net(scores + Op("softmax", In("X", "s"), "p") + tail +
                  Op("relu", In("X", "p"), "also")),
              Feeds(), {"out", "also"});
  EXPECT_THAT(types, Contains("softmax"));
  // Softmax along another axis.
  types = RunBoth(
      Net(scores +
          Op("softmax", In("X", "s"), "p", "attrs { name: 'axis' i64: 2 }") +
          tail),
      Feeds());
  EXPECT_THAT(types, Contains("softmax"));
  // Scores scaled by a tensor of more than one element (per key).
  types = RunBoth(Net(scores + Op("mul", In("X", "s") + In("Y", "mask"), "m") +
                      Op("softmax", In("X", "m"), "p") + tail),
                  Feeds());
  EXPECT_THAT(types, Contains("softmax"));
  // The values' product scaled (the output, not the scores).
  types = RunBoth(Net(scores + Op("softmax", In("X", "s"), "p") +
                      Op("matmul", In("X", "p") + In("Y", "v"), "out",
                         "attrs { name: 'alpha' f: 0.5 }")),
                  Feeds());
  EXPECT_THAT(types, Contains("softmax"));
  // Q rewritten between the product and the last matmul.
  types = RunBoth(Net(scores + Op("softmax", In("X", "s"), "p") +
                      Op("relu", In("X", "k"), "q") + tail),
                  Feeds());
  EXPECT_THAT(types, Contains("softmax"));
}

}  // namespace
}  // namespace scopeflow
