// The C API on an ONNX model: y = relu(x W + b), x of a symbolic batch,
// its parameters from the model's initializers or from a parameter file.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "c_api/scopeflow_c_api.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "framework/param_io.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FloatProto;

const std::vector<float> kW = {1, -2, 0.5f, 3, -1, 1};  // [3, 2]
const std::vector<float> kB = {0.25f, -0.5f};

onnx::ModelProto LinearRelu() {
  onnx::ModelProto model = onnx_testing::Model(13);
  AddInput(model, "x", {-1, 3});
  AddInitializer(model, FloatProto("W", {3, 2}, kW));
  AddInitializer(model, FloatProto("b", {2}, kB));
  AddNode(model, "MatMul", {"x", "W"}, {"xw"});
  AddNode(model, "Add", {"xw", "b"}, {"z"});
  AddNode(model, "Relu", {"z"}, {"y"});
  AddOutput(model, "y");
  return model;
}

std::string WriteModel(const onnx::ModelProto& model) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/linear_relu.onnx";
  std::ofstream file(path, std::ios::binary);
  model.SerializeToOstream(&file);
  return path;
}

// relu(x W + b) by hand, times `scale` (parameters scaled by it).
std::vector<float> Expected(const std::vector<float>& x, float scale) {
  std::vector<float> y;
  for (size_t r = 0; r < x.size() / 3; ++r) {
    for (int j = 0; j < 2; ++j) {
      float sum = kB[j];
      for (int i = 0; i < 3; ++i) sum += x[r * 3 + i] * kW[i * 2 + j];
      y.push_back(scale * std::max(sum, 0.0f));
    }
  }
  return y;
}

std::vector<float> RunModel(sf_predictor* predictor, std::vector<float> x) {
  const int64_t dims[] = {static_cast<int64_t>(x.size() / 3), 3};
  sf_tensor* input = nullptr;
  sf_status* status = sf_tensor_wrap(x.data(), x.size() * sizeof(float),
                                     SF_FLOAT32, dims, 2, &input);
  EXPECT_EQ(status, nullptr) << sf_status_message(status);
  const char* name = "x";
  sf_tensor* output = nullptr;
  status = sf_predictor_run(predictor, &name, &input, 1, &output, 1);
  EXPECT_EQ(status, nullptr) << sf_status_message(status);
  const auto* values = static_cast<const float*>(sf_tensor_const_data(output));
  std::vector<float> y(values, values + sf_tensor_num_elements(output));
  sf_tensor_free(output);
  sf_tensor_free(input);
  return y;
}

TEST(CApiOnnxTest, LoadsMetadataAndRuns) {
  const std::string path = WriteModel(LinearRelu());
  sf_predictor* predictor = nullptr;
  sf_status* status =
      sf_predictor_load(path.c_str(), nullptr, nullptr, &predictor);
  ASSERT_EQ(status, nullptr) << sf_status_message(status);
  ASSERT_EQ(sf_predictor_num_inputs(predictor), 1u);
  const sf_tensor_info* x = sf_predictor_input(predictor, 0);
  EXPECT_STREQ(sf_tensor_info_name(x), "x");
  EXPECT_EQ(sf_tensor_info_dtype(x), SF_FLOAT32);
  ASSERT_EQ(sf_tensor_info_rank(x), 2);
  EXPECT_EQ(sf_tensor_info_dim(x, 0), -1);
  EXPECT_STREQ(sf_tensor_info_dim_name(x, 0), "batch");
  EXPECT_EQ(sf_tensor_info_dim(x, 1), 3);
  ASSERT_EQ(sf_predictor_num_outputs(predictor), 1u);
  EXPECT_STREQ(sf_tensor_info_name(sf_predictor_output(predictor, 0)), "y");

  const std::vector<float> input = {1, 2, 3, -1, 0.5f, -2};
  const std::vector<float> y = RunModel(predictor, input);
  const std::vector<float> expected = Expected(input, 1);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], expected[i]);
  sf_predictor_free(predictor);
}

TEST(CApiOnnxTest, ParameterFileReplacesInitializers) {
  const onnx::ModelProto model = LinearRelu();
  const std::string path = WriteModel(model);
  // Every parameter the import keeps, doubled: the outputs double.
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  Scope doubled;
  std::vector<std::string> names;
  for (const NamedTensor& param : imported->params) {
    Tensor* tensor = *doubled.Var(param.name)->GetMutable<Tensor>();
    *tensor = *param.tensor.CopyTo(CPUPlace());
    for (int64_t i = 0; i < tensor->numel(); ++i) {
      tensor->data<float>()[i] *= 2;
    }
    names.push_back(param.name);
  }
  const std::string params =
      std::string(std::getenv("TEST_TMPDIR")) + "/doubled.params";
  ASSERT_TRUE(SaveParams(doubled, names, params).ok());

  sf_predictor* predictor = nullptr;
  sf_status* status =
      sf_predictor_load(path.c_str(), params.c_str(), nullptr, &predictor);
  ASSERT_EQ(status, nullptr) << sf_status_message(status);
  const std::vector<float> input = {1, 2, 3, 0.5f, 0.5f, 0.5f};
  const std::vector<float> y = RunModel(predictor, input);
  const std::vector<float> expected = Expected(input, 2);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], expected[i]);
  sf_predictor_free(predictor);
}

TEST(CApiOnnxTest, NotAnOnnxFile) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/garbage.onnx";
  std::ofstream(path) << "not a protobuf \xff\xff\xff";
  sf_predictor* predictor = nullptr;
  sf_status* status =
      sf_predictor_load(path.c_str(), nullptr, nullptr, &predictor);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(sf_status_message(status)).find(path),
            std::string::npos)
      << sf_status_message(status);
  sf_status_free(status);
  EXPECT_EQ(predictor, nullptr);
}

}  // namespace
}  // namespace scopeflow
