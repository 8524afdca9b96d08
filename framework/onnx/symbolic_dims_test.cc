// A model whose inputs' dimensions are named (dim_param), as exporters
// write dynamic axes: the names survive import, one imported net runs at
// several batch and image sizes, shape subgraphs (Shape, Gather, Concat,
// Reshape) follow the fed sizes, and inputs that disagree on a named size
// are refused.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "framework/serving/predictor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FloatProto;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::SetInt;
using onnx_testing::SetInts;

constexpr float kWeights[3][2] = {{1, 2}, {-1, 0.5f}, {0.25f, 3}};
constexpr float kBias[3] = {0.5f, -1, 2};

// y[n] = sum of conv1x1(x)[n] over channels and pixels (flattened through
// a shape subgraph) + m[n]: x [batch, 2, height, width], m [batch, 1].
onnx::ModelProto SumOfConvModel() {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {-1, 2, -1, -1});
  auto* x_dims = model.mutable_graph()
                     ->mutable_input(0)
                     ->mutable_type()
                     ->mutable_tensor_type()
                     ->mutable_shape();
  x_dims->mutable_dim(2)->set_dim_param("height");
  x_dims->mutable_dim(3)->set_dim_param("width");
  AddInput(model, "m", {-1, 1});
  AddInitializer(model, FloatProto("w", {3, 2, 1, 1},
                                   {kWeights[0][0], kWeights[0][1],
                                    kWeights[1][0], kWeights[1][1],
                                    kWeights[2][0], kWeights[2][1]}));
  AddInitializer(model,
                 FloatProto("b", {3}, {kBias[0], kBias[1], kBias[2]}));
  AddInitializer(model, Int64Proto("zero", {}, {0}));
  AddInitializer(model, Int64Proto("minus_one", {1}, {-1}));
  AddNode(model, "Conv", {"x", "w", "b"}, {"c"});
  AddNode(model, "Shape", {"c"}, {"s"});
  onnx::NodeProto* gather = AddNode(model, "Gather", {"s", "zero"}, {"n"});
  SetInt(gather, "axis", 0);
  AddInitializer(model, Int64Proto("axes0", {1}, {0}));
  AddNode(model, "Unsqueeze", {"n", "axes0"}, {"n1"});
  onnx::NodeProto* concat =
      AddNode(model, "Concat", {"n1", "minus_one"}, {"flat_shape"});
  SetInt(concat, "axis", 0);
  AddNode(model, "Reshape", {"c", "flat_shape"}, {"flat"});
  onnx::NodeProto* sum = AddNode(model, "ReduceSum", {"flat"}, {"r"});
  SetInts(sum, "axes", {1});
  SetInt(sum, "keepdims", 1);
  // ReduceSum takes axes as an input from opset 13.
  sum->clear_attribute();
  AddInitializer(model, Int64Proto("axes1", {1}, {1}));
  sum->add_input("axes1");
  SetInt(sum, "keepdims", 1);
  AddNode(model, "Add", {"r", "m"}, {"y"});
  AddOutput(model, "y");
  return model;
}

std::vector<float> Ramp(int64_t n, float step) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = step * static_cast<float>(i % 7);
  return values;
}

// What the model computes, by hand.
std::vector<float> Expected(const std::vector<float>& x, int64_t batch,
                            int64_t pixels, const std::vector<float>& m) {
  std::vector<float> y(batch);
  for (int64_t n = 0; n < batch; ++n) {
    double total = m[n];
    for (int o = 0; o < 3; ++o) {
      for (int64_t p = 0; p < pixels; ++p) {
        total += kWeights[o][0] * x[(n * 2 + 0) * pixels + p] +
                 kWeights[o][1] * x[(n * 2 + 1) * pixels + p] + kBias[o];
      }
    }
    y[n] = static_cast<float>(total);
  }
  return y;
}

absl::StatusOr<Predictor> PredictorOf(const ImportedModel& imported) {
  auto params = std::make_unique<Scope>();
  absl::Status added = AddParamsToScope(imported, *params);
  if (!added.ok()) return added;
  return Predictor::Create(imported.net, std::move(params));
}

TEST(SymbolicDimsTest, NamesSurviveImport) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(SumOfConvModel());
  ASSERT_TRUE(imported.ok()) << imported.status();
  const VarDef& x = imported->net.blocks(0).vars(0);
  ASSERT_EQ(x.name(), "x");
  EXPECT_THAT(x.shape(), ElementsAre(-1, 2, -1, -1));
  EXPECT_THAT(x.dim_names(), ElementsAre("batch", "", "height", "width"));
  absl::StatusOr<Predictor> predictor = PredictorOf(*imported);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  ASSERT_EQ(predictor->inputs().size(), 2u);
  EXPECT_EQ(predictor->inputs()[0].DebugString(),
            "x: float32 [batch, 2, height, width]");
  EXPECT_EQ(predictor->inputs()[1].DebugString(), "m: float32 [batch, 1]");
}

TEST(SymbolicDimsTest, OneNetRunsAtSeveralBatchAndImageSizes) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(SumOfConvModel());
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<Predictor> predictor = PredictorOf(*imported);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  struct Size {
    int64_t batch, height, width;
  };
  // Back to the first size last: a size seen before runs as well again.
  for (const Size& size : {Size{1, 3, 4}, Size{3, 5, 2}, Size{2, 1, 1},
                           Size{1, 3, 4}}) {
    SCOPED_TRACE(testing::Message() << size.batch << "x" << size.height << "x"
                                    << size.width);
    const int64_t pixels = size.height * size.width;
    const std::vector<float> x = Ramp(size.batch * 2 * pixels, 0.5f);
    const std::vector<float> m = Ramp(size.batch, -1.5f);
    absl::StatusOr<std::vector<Tensor>> y = predictor->Run(
        {{"x", MakeTensor<float>({size.batch, 2, size.height, size.width}, x)},
         {"m", MakeTensor<float>({size.batch, 1}, m)}});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_THAT((*y)[0].dims(), ElementsAre(size.batch, 1));
    const std::vector<float> expected = Expected(x, size.batch, pixels, m);
    for (int64_t n = 0; n < size.batch; ++n) {
      EXPECT_NEAR((*y)[0].data<float>()[n], expected[n],
                  1e-4 * (1 + std::abs(expected[n])));
    }
  }
}

TEST(SymbolicDimsTest, InputsDisagreeingOnANamedSizeAreRefused) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(SumOfConvModel());
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<Predictor> predictor = PredictorOf(*imported);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  absl::StatusOr<std::vector<Tensor>> y = predictor->Run(
      {{"x", MakeTensor<float>({2, 2, 3, 3}, std::vector<float>(36, 1.0f))},
       {"m", MakeTensor<float>({3, 1}, {1, 2, 3})}});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(),
              HasSubstr("input \"m\": dimension 0 (\"batch\") is 3, but input "
                        "\"x\" gave \"batch\" size 2"));
  // The predictor keeps serving.
  y = predictor->Run(
      {{"x", MakeTensor<float>({1, 2, 1, 1}, {1, 1})},
       {"m", MakeTensor<float>({1, 1}, {0})}});
  EXPECT_TRUE(y.ok()) << y.status();
}

TEST(SymbolicDimsTest, DimNamesMustMatchTheShape) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(SumOfConvModel());
  ASSERT_TRUE(imported.ok()) << imported.status();
  NetDef too_few = imported->net;
  too_few.mutable_blocks(0)->mutable_vars(0)->mutable_dim_names()->RemoveLast();
  ImportedModel model = *imported;
  model.net = too_few;
  absl::StatusOr<Predictor> predictor = PredictorOf(model);
  ASSERT_FALSE(predictor.ok());
  EXPECT_THAT(predictor.status().message(),
              HasSubstr("variable \"x\" names 3 dimension(s) but its shape "
                        "[-1, 2, -1, -1] has 4"));
  NetDef known_named = imported->net;
  known_named.mutable_blocks(0)->mutable_vars(0)->set_dim_names(1, "channels");
  model.net = known_named;
  predictor = PredictorOf(model);
  ASSERT_FALSE(predictor.ok());
  EXPECT_THAT(predictor.status().message(),
              HasSubstr("variable \"x\" names its dimension 1 \"channels\", "
                        "but only an unknown dimension (-1) may have a name"));
}

}  // namespace
}  // namespace scopeflow
