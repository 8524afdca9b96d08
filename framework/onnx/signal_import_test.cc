// Importing DFT, STFT and MelWeightMatrix: the ops they map to, the axis per
// opset (attribute at 17, input at 20, folded when constant), and what runs.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FindAttr;
using onnx_testing::FindOp;
using onnx_testing::InputSlots;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

TEST(SignalImportTest, DftAxisAttributeAtOpset17) {
  onnx::ModelProto model = Model(17);
  AddInput(model, "x", {1, 4, 1});
  onnx::NodeProto* node = AddNode(model, "DFT", {"x"}, {"y"});
  SetInt(node, "onesided", 1);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("dft"));
  // rfft([1, 2, 3, 4]) = 10, -2+2i, -2.
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 4, 1}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3, 2));
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(testing::FloatNear(1e-5f),
                        std::vector<float>{10, 0, -2, 2, -2, 0}));
}

TEST(SignalImportTest, DftAxisInputAtOpset20FedOrConstant) {
  // Fed: read at run time.
  onnx::ModelProto model = Model(20);
  AddInput(model, "x", {2, 3, 1});
  AddInput(model, "a", {}, onnx::TensorProto::INT64);
  AddNode(model, "DFT", {"x", "", "a"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* dft = FindOp(*imported, "dft");
  ASSERT_NE(dft, nullptr);
  EXPECT_THAT(InputSlots(*dft), ElementsAre("X", "Axis"));
  // Along axis 0: [x0 + x1, x0 - x1] per column.
  auto out = RunNet(*imported,
                    {{"x", MakeTensor<float>({2, 3, 1}, {1, 2, 3, 4, 5, 6})},
                     {"a", MakeTensor<int64_t>({}, {0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(testing::FloatNear(1e-5f),
                std::vector<float>{5, 0, 7, 0, 9, 0, -3, 0, -3, 0, -3, 0}));
  // Constant: becomes the attribute.
  model = Model(20);
  AddInput(model, "x", {2, 3, 1});
  AddInitializer(model, Int64Proto("a", {}, {0}));
  AddNode(model, "DFT", {"x", "", "a"}, {"y"});
  AddOutput(model, "y");
  imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  dft = FindOp(*imported, "dft");
  ASSERT_NE(dft, nullptr);
  EXPECT_THAT(InputSlots(*dft), ElementsAre("X"));
  EXPECT_EQ(FindAttr(*dft, "axis")->i(), 0);
}

TEST(SignalImportTest, DftBeforeOpset17IsRejected) {
  onnx::ModelProto model = Model(16);
  AddInput(model, "x", {1, 4, 1});
  AddNode(model, "DFT", {"x"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("ONNX DFT exists from opset 17 on"));
}

TEST(SignalImportTest, StftWithAWindow) {
  onnx::ModelProto model = Model(17);
  AddInput(model, "s", {1, 6, 1});
  AddInput(model, "w", {4});
  AddInitializer(model, Int64Proto("step", {}, {2}));
  AddNode(model, "STFT", {"s", "step", "w"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("stft"));
  // Frames [0, 1, 2, 3] and [2, 3, 4, 5] times [1, 0, 1, 0]: [0, 2] and
  // [2, 4]; bins 0, 1, 2 of x0 + x2, x0 - x2, x0 + x2.
  auto out = RunNet(*imported,
                    {{"s", MakeTensor<float>({1, 6, 1}, {0, 1, 2, 3, 4, 5})},
                     {"w", MakeTensor<float>({4}, {1, 0, 1, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 3, 2));
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(testing::FloatNear(1e-5f),
                std::vector<float>{2, 0, -2, 0, 2, 0, 6, 0, -2, 0, 6, 0}));
}

TEST(SignalImportTest, MelWeightMatrixInDouble) {
  onnx::ModelProto model = Model(17);
  AddInitializer(model, Int64Proto("mels", {}, {4}));
  AddInitializer(model, Int64Proto("n", {}, {16}));
  AddInitializer(model, Int64Proto("rate", {}, {1600}));
  AddInput(model, "low", {});
  AddInput(model, "high", {});
  onnx::NodeProto* node = AddNode(model, "MelWeightMatrix",
                                  {"mels", "n", "rate", "low", "high"}, {"y"});
  SetInt(node, "output_datatype", onnx::TensorProto::DOUBLE);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(*imported, {{"low", MakeTensor<float>({}, {100})},
                                {"high", MakeTensor<float>({}, {800})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(9, 4));
  // Bands of one bin each, centred on bins 2 to 5.
  std::vector<double> expected(36, 0.0);
  for (int band = 0; band < 4; ++band) expected[(band + 2) * 4 + band] = 1;
  EXPECT_THAT(Values<double>((*out)[0]), Pointwise(DoubleNear(0), expected));
}

}  // namespace
}  // namespace scopeflow
