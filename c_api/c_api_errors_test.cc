// Bad input to the C API: each error is a status with a code and a
// message naming what was wrong, and leaves the out-parameters untouched.
#include <cstdint>
#include <string>
#include <vector>

#include "c_api/c_api_test_util.h"
#include "c_api/scopeflow_c_api.h"
#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using c_api_testing::IsOk;
using c_api_testing::LoadMlp;
using c_api_testing::Take;
using c_api_testing::TakenStatus;
using ::testing::HasSubstr;

class CApiErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    predictor_ = LoadMlp();
    ASSERT_NE(predictor_, nullptr);
  }
  void TearDown() override { sf_predictor_free(predictor_); }

  // Runs the MLP on one input tensor of `dtype` and `dims`, named `name`.
  TakenStatus RunOn(const char* name, sf_dtype dtype,
                    std::vector<int64_t> dims) {
    sf_tensor* input = nullptr;
    EXPECT_TRUE(
        IsOk(sf_tensor_create(dtype, dims.data(), dims.size(), &input)));
    sf_tensor* output = nullptr;
    const TakenStatus status =
        Take(sf_predictor_run(predictor_, &name, &input, 1, &output, 1));
    EXPECT_EQ(output, nullptr);
    sf_tensor_free(input);
    return status;
  }

  sf_predictor* predictor_ = nullptr;
};

TEST_F(CApiErrorsTest, WrongDtype) {
  const TakenStatus status = RunOn("image", SF_INT32, {2, 64});
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "input \"image\": expected dtype float32, got int32");
}

TEST_F(CApiErrorsTest, WrongShape) {
  const TakenStatus status = RunOn("image", SF_FLOAT32, {2, 63});
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "input \"image\": expected shape [-1, 64], got [2, 63]");
}

TEST_F(CApiErrorsTest, UnknownName) {
  const TakenStatus status = RunOn("img", SF_FLOAT32, {2, 64});
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "unknown input \"img\" (the model's inputs: image)");
}

TEST_F(CApiErrorsTest, MissingInput) {
  sf_tensor* output = nullptr;
  const TakenStatus status =
      Take(sf_predictor_run(predictor_, nullptr, nullptr, 0, &output, 1));
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_EQ(status.message, "missing input \"image\" (float32 [-1, 64])");
}

TEST_F(CApiErrorsTest, WrongNumberOfOutputs) {
  const char* name = "image";
  const int64_t dims[] = {1, 64};
  sf_tensor* input = nullptr;
  ASSERT_TRUE(IsOk(sf_tensor_create(SF_FLOAT32, dims, 2, &input)));
  sf_tensor* outputs[2] = {nullptr, nullptr};
  const TakenStatus status =
      Take(sf_predictor_run(predictor_, &name, &input, 1, outputs, 2));
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "sf_predictor_run: num_outputs is 2, but the model has 1 "
            "output(s)");
  sf_tensor_free(input);
}

TEST_F(CApiErrorsTest, OutputBufferOfAnotherShape) {
  const char* name = "image";
  const int64_t dims[] = {3, 64};
  sf_tensor* input = nullptr;
  ASSERT_TRUE(IsOk(sf_tensor_create(SF_FLOAT32, dims, 2, &input)));
  std::vector<float> buffer(20, -1.0f);
  const int64_t out_dims[] = {2, 10};
  sf_tensor* output = nullptr;
  ASSERT_TRUE(IsOk(
      sf_tensor_wrap(buffer.data(), 80, SF_FLOAT32, out_dims, 2, &output)));
  const TakenStatus status =
      Take(sf_predictor_run_into(predictor_, &name, &input, 1, &output, 1));
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "sf_predictor_run_into: output \"probabilities\": the run "
            "computed float32 [3, 10], but outputs[0] is float32 [2, 10]");
  EXPECT_EQ(buffer[0], -1.0f);  // Untouched.
  sf_tensor_free(output);
  sf_tensor_free(input);
}

TEST_F(CApiErrorsTest, NullArguments) {
  sf_tensor* output = nullptr;
  const char* name = nullptr;
  const int64_t dims[] = {1, 64};
  sf_tensor* input = nullptr;
  ASSERT_TRUE(IsOk(sf_tensor_create(SF_FLOAT32, dims, 2, &input)));
  EXPECT_EQ(
      Take(sf_predictor_run(predictor_, &name, &input, 1, &output, 1)).message,
      "sf_predictor_run: input_names[0] is null");
  name = "image";
  EXPECT_EQ(
      Take(sf_predictor_run(nullptr, &name, &input, 1, &output, 1)).message,
      "sf_predictor_run: predictor is null");
  EXPECT_EQ(
      Take(sf_predictor_run(predictor_, &name, &input, 1, nullptr, 1)).message,
      "sf_predictor_run: outputs is null");
  sf_tensor* missing = nullptr;
  EXPECT_EQ(Take(sf_predictor_run(predictor_, &name, &missing, 1, &output, 1))
                .message,
            "sf_predictor_run: input \"image\" (inputs[0]) is null");
  EXPECT_EQ(Take(sf_predictor_load(nullptr, nullptr, nullptr, nullptr)).message,
            "sf_predictor_load: model_path is null");
  EXPECT_EQ(Take(sf_tensor_create(SF_FLOAT32, nullptr, 2, &output)).message,
            "sf_tensor_create: dims is null");
  sf_tensor_free(input);
}

TEST(CApiLoadErrorsTest, MissingFiles) {
  sf_predictor* predictor = nullptr;
  TakenStatus status = Take(
      sf_predictor_load("no/such/net.pbtxt", nullptr, nullptr, &predictor));
  EXPECT_NE(status.code, SF_OK);
  EXPECT_THAT(status.message, HasSubstr("no/such/net.pbtxt"));
  EXPECT_EQ(predictor, nullptr);

  status = Take(
      sf_predictor_load(kMlpNet, "no/such/mlp.params", nullptr, &predictor));
  EXPECT_NE(status.code, SF_OK);
  EXPECT_THAT(status.message, HasSubstr("no/such/mlp.params"));
  EXPECT_EQ(predictor, nullptr);

  status = Take(
      sf_predictor_load("no/such/model.onnx", nullptr, nullptr, &predictor));
  EXPECT_NE(status.code, SF_OK);
  EXPECT_THAT(status.message, HasSubstr("no/such/model.onnx"));
}

TEST(CApiLoadErrorsTest, MissingParameters) {
  sf_predictor* predictor = nullptr;
  const TakenStatus status =
      Take(sf_predictor_load(kMlpNet, nullptr, nullptr, &predictor));
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_THAT(status.message,
              HasSubstr("parameter \"fc1.w\" (float32 [64, 32]) is not in "
                        "the parameters"));
}

TEST(CApiLoadErrorsTest, BadOptions) {
  sf_options* options = nullptr;
  ASSERT_TRUE(IsOk(sf_options_create(&options)));
  TakenStatus status = Take(sf_options_set_place(options, "tpu"));
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_THAT(status.message, HasSubstr("tpu"));
  ASSERT_TRUE(IsOk(sf_options_add_output(options, "no_such_variable")));
  sf_predictor* predictor = nullptr;
  status = Take(sf_predictor_load(
      kMlpNet, c_api_testing::MlpParamsPath().c_str(), options, &predictor));
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "net \"mlp\" has no variable \"no_such_variable\" to output");
  EXPECT_EQ(predictor, nullptr);
  sf_options_free(options);
}

TEST(CApiTensorErrorsTest, BadTensors) {
  sf_tensor* tensor = nullptr;
  const int64_t dims[] = {2, 3};
  float data[6] = {};
  EXPECT_EQ(
      Take(sf_tensor_wrap(data, 20, SF_FLOAT32, dims, 2, &tensor)).message,
      "sf_tensor_wrap: float32 [2, 3] takes 24 bytes, but byte_size is 20");
  EXPECT_EQ(Take(sf_tensor_create(static_cast<sf_dtype>(42), dims, 2, &tensor))
                .message,
            "sf_tensor_create: 42 is no dtype (they are 1 to 17)");
  const int64_t negative[] = {2, -3};
  const TakenStatus status =
      Take(sf_tensor_create(SF_FLOAT32, negative, 2, &tensor));
  EXPECT_EQ(status.code, SF_INVALID_ARGUMENT);
  EXPECT_THAT(status.message, HasSubstr("negative dimension"));
  EXPECT_EQ(
      Take(sf_tensor_wrap(nullptr, 24, SF_FLOAT32, dims, 2, &tensor)).code,
      SF_INVALID_ARGUMENT);
  EXPECT_EQ(tensor, nullptr);
}

}  // namespace
}  // namespace scopeflow
