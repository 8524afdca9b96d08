// Importing GELU and layer norm as torch.onnx writes them (chains of
// nodes) as one gelu and one layer_norm op.

#include <cmath>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using namespace onnx_testing;  // NOLINT: the test models' helpers

void AddScalar(onnx::ModelProto& model, const std::string& name,
               float value) {
  SetTensor(AddNode(model, "Constant", {}, {name}), "value",
            FloatProto(name, {}, {value}));
}

const std::vector<float> kX = {-3.0f, -1.5f, -0.4f, 0.0f,  0.3f,  1.0f,
                               2.2f,  3.5f,  -2.0f, 0.75f, -0.1f, 1.25f};

// Where the chain's result `y` is read from: "x/sqrt2" divides, "x*rsqrt2"
// multiplies; "x*a*half" multiplies x by 1 + erf first, "x*half*a" halves x
// first.
onnx::ModelProto Gelu(bool divide, bool halve_first, float sqrt2,
                      bool erf_is_output = false) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {3, 4});
  AddOutput(model, "y");
  if (erf_is_output) AddOutput(model, "erf");
  if (divide) {
    AddScalar(model, "sqrt2", sqrt2);
    AddNode(model, "Div", {"x", "sqrt2"}, {"scaled"});
  } else {
    AddInitializer(model, FloatProto("rsqrt2", {}, {1 / sqrt2}));
    AddNode(model, "Mul", {"rsqrt2", "x"}, {"scaled"});
  }
  AddNode(model, "Erf", {"scaled"}, {"erf"});
  AddScalar(model, "one", 1.0f);
  AddNode(model, "Add", {"erf", "one"}, {"gate"});
  AddScalar(model, "half", 0.5f);
  if (halve_first) {
    AddNode(model, "Mul", {"x", "half"}, {"half_x"});
    AddNode(model, "Mul", {"gate", "half_x"}, {"y"}, "last");
  } else {
    AddNode(model, "Mul", {"x", "gate"}, {"gated"});
    AddNode(model, "Mul", {"gated", "half"}, {"y"}, "last");
  }
  return model;
}

struct Imported {
  std::vector<std::string> ops;
  std::vector<float> y;
};

Imported ImportAndRun(const onnx::ModelProto& model, bool fuse, Dims dims) {
  ImportOptions options;
  options.fuse_decomposed = fuse;
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, options);
  EXPECT_TRUE(imported.ok()) << imported.status();
  if (!imported.ok()) return {};
  Imported result;
  result.ops = OpTypes(*imported);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", MakeTensor<float>(dims, kX)}});
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) result.y = Values<float>((*out)[0]);
  return result;
}

bool Has(const std::vector<std::string>& ops, const std::string& type) {
  return absl::c_linear_search(ops, type);
}

TEST(FuseDecomposedTest, ImportsTorchsGeluAsOneOp) {
  for (bool divide : {true, false}) {
    for (bool halve_first : {false, true}) {
      const onnx::ModelProto model = Gelu(divide, halve_first, M_SQRT2);
      const Imported fused = ImportAndRun(model, true, {3, 4});
      const Imported written = ImportAndRun(model, false, {3, 4});
      EXPECT_THAT(fused.ops, ::testing::ElementsAre("gelu"));
      EXPECT_TRUE(Has(written.ops, "erf"));
      ASSERT_EQ(fused.y.size(), kX.size());
      ASSERT_EQ(written.y.size(), kX.size());
      for (size_t i = 0; i < kX.size(); ++i) {
        const double x = kX[i];
        EXPECT_NEAR(fused.y[i], 0.5 * x * (1 + std::erf(x / M_SQRT2)), 1e-6);
        EXPECT_NEAR(fused.y[i], written.y[i], 1e-6);
      }
    }
  }
}

TEST(FuseDecomposedTest, LeavesAGeluChainWithAnotherReaderOrConstant) {
  // The erf is a graph output too; the divisor is sqrt(3).
  EXPECT_TRUE(Has(ImportAndRun(Gelu(true, false, M_SQRT2, true), true, {3, 4})
                      .ops,
                  "erf"));
  EXPECT_TRUE(Has(
      ImportAndRun(Gelu(true, false, std::sqrt(3.0f)), true, {3, 4}).ops,
      "erf"));
}

// nn.LayerNorm(4) over x [3, 4] as torch.onnx writes it below opset 17.
onnx::ModelProto LayerNorm(int64_t axis, float exponent, int64_t gamma_size) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {3, 4});
  AddOutput(model, "y");
  SetInts(AddNode(model, "ReduceMean", {"x"}, {"mean"}), "axes", {axis});
  AddNode(model, "Sub", {"x", "mean"}, {"centered"});
  AddScalar(model, "two", exponent);
  AddNode(model, "Pow", {"centered", "two"}, {"square"});
  SetInts(AddNode(model, "ReduceMean", {"square"}, {"variance"}), "axes",
          {axis});
  AddScalar(model, "eps", 1e-5f);
  AddNode(model, "Add", {"variance", "eps"}, {"shifted"});
  AddNode(model, "Sqrt", {"shifted"}, {"deviation"});
  AddNode(model, "Div", {"centered", "deviation"}, {"normalized"});
  std::vector<float> gamma, beta;
  for (int64_t i = 0; i < gamma_size; ++i) {
    gamma.push_back(0.5f + 0.25f * i);
    beta.push_back(-0.1f * i);
  }
  AddInitializer(model, FloatProto("gamma", {gamma_size}, gamma));
  AddInitializer(model, FloatProto("beta", {gamma_size}, beta));
  // torch writes one parameter shared by equal ones through an Identity.
  AddNode(model, "Identity", {"gamma"}, {"gamma2"});
  AddNode(model, "Mul", {"normalized", "gamma2"}, {"scaled"});
  AddNode(model, "Add", {"scaled", "beta"}, {"y"});
  return model;
}

TEST(FuseDecomposedTest, ImportsTorchsLayerNormAsOneOp) {
  const onnx::ModelProto model = LayerNorm(-1, 2.0f, 4);
  const Imported fused = ImportAndRun(model, true, {3, 4});
  const Imported written = ImportAndRun(model, false, {3, 4});
  EXPECT_TRUE(Has(fused.ops, "layer_norm"));
  EXPECT_FALSE(Has(fused.ops, "pow"));
  EXPECT_FALSE(Has(written.ops, "layer_norm"));
  ASSERT_EQ(fused.y.size(), kX.size());
  ASSERT_EQ(written.y.size(), kX.size());
  for (size_t row = 0; row < 3; ++row) {
    double mean = 0, variance = 0;
    for (size_t c = 0; c < 4; ++c) mean += kX[row * 4 + c] / 4.0;
    for (size_t c = 0; c < 4; ++c) {
      variance += std::pow(kX[row * 4 + c] - mean, 2) / 4.0;
    }
    for (size_t c = 0; c < 4; ++c) {
      const double want = (kX[row * 4 + c] - mean) /
                              std::sqrt(variance + 1e-5) * (0.5 + 0.25 * c) -
                          0.1 * c;
      EXPECT_NEAR(fused.y[row * 4 + c], want, 1e-5);
      EXPECT_NEAR(fused.y[row * 4 + c], written.y[row * 4 + c], 1e-5);
    }
  }
}

TEST(FuseDecomposedTest, LeavesWhatIsNotALayerNorm) {
  // Over the first axis; a cube; a scale of one element (it broadcasts).
  EXPECT_FALSE(
      Has(ImportAndRun(LayerNorm(0, 2.0f, 4), true, {3, 4}).ops, "layer_norm"));
  EXPECT_FALSE(
      Has(ImportAndRun(LayerNorm(-1, 3.0f, 4), true, {3, 4}).ops, "layer_norm"));
  EXPECT_FALSE(
      Has(ImportAndRun(LayerNorm(-1, 2.0f, 1), true, {3, 4}).ops, "layer_norm"));
}

}  // namespace
}  // namespace scopeflow
