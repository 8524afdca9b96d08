// The C API on the MLP of examples/mlp: loading, metadata, runs with
// library-owned and caller-owned outputs, against the probabilities
// computed by hand from the parameters (ReferenceMlp).
#include <cstring>
#include <string>
#include <vector>

#include "c_api/c_api_test_util.h"
#include "c_api/scopeflow_c_api.h"
#include "framework/serving/mlp_fixture.h"
#include "platform/cuda_runtime.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using c_api_testing::IsOk;
using c_api_testing::LoadMlp;

// A float32 [batch, 64] image batch in memory the test owns.
std::vector<float> Images(int batch, int seed) {
  const Tensor image = MlpInput(batch, seed);
  return std::vector<float>(image.data<float>(),
                            image.data<float>() + image.numel());
}

// ReferenceMlp on `images`.
std::vector<double> Reference(const std::vector<float>& images) {
  Tensor image;
  EXPECT_TRUE(image
                  .Allocate(CPUPlace(), kFloat32,
                            {static_cast<int64_t>(images.size() / 64), 64})
                  .ok());
  std::memcpy(image.data<float>(), images.data(), images.size() * 4);
  absl::StatusOr<std::unique_ptr<Scope>> parameters = MlpParameters();
  EXPECT_TRUE(parameters.ok());
  return ReferenceMlp(**parameters, image);
}

sf_tensor* Wrap(std::vector<float>& images) {
  const int64_t dims[] = {static_cast<int64_t>(images.size() / 64), 64};
  sf_tensor* tensor = nullptr;
  EXPECT_TRUE(IsOk(sf_tensor_wrap(images.data(), images.size() * sizeof(float),
                                  SF_FLOAT32, dims, 2, &tensor)));
  return tensor;
}

void ExpectNear(const float* values, const std::vector<double>& expected) {
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(values[i], expected[i], 1e-5) << "element " << i;
  }
}

TEST(CApiTest, VersionsAndDtypes) {
  EXPECT_GE(sf_api_version(), SF_API_VERSION);
  EXPECT_STREQ(sf_version_string(), "0.1.0");
  EXPECT_STREQ(sf_dtype_name(SF_FLOAT32), "float32");
  EXPECT_STREQ(sf_dtype_name(SF_INT8), "int8");
  EXPECT_STREQ(sf_dtype_name(SF_UINT64), "uint64");
  EXPECT_STREQ(sf_dtype_name(SF_BFLOAT16), "bfloat16");
  EXPECT_EQ(sf_dtype_size(SF_INT16), 2u);
  EXPECT_EQ(sf_dtype_size(SF_UINT32), 4u);
  EXPECT_EQ(sf_dtype_size(SF_BFLOAT16), 2u);
  EXPECT_STREQ(sf_dtype_name(SF_FLOAT8E5M2FNUZ), "float8e5m2fnuz");
  EXPECT_EQ(sf_dtype_size(SF_FLOAT8E4M3FN), 1u);
  EXPECT_STREQ(sf_dtype_name(static_cast<sf_dtype>(99)), "unspecified");
  EXPECT_EQ(sf_dtype_size(SF_FLOAT64), 8u);
  EXPECT_EQ(sf_dtype_size(SF_BOOL), 1u);
  EXPECT_EQ(sf_dtype_size(SF_DTYPE_UNSPECIFIED), 0u);
  EXPECT_EQ(sf_status_code(nullptr), SF_OK);
  EXPECT_STREQ(sf_status_message(nullptr), "");
  EXPECT_STREQ(sf_engine_name(), BuiltWithCuda() ? "cuda" : "cpu");
  EXPECT_EQ(sf_keep_freed_host_memory_for_reuse(), 1);
}

TEST(CApiTest, Metadata) {
  sf_predictor* predictor = LoadMlp();
  ASSERT_NE(predictor, nullptr);
  EXPECT_STREQ(sf_predictor_name(predictor), "mlp");
  ASSERT_EQ(sf_predictor_num_inputs(predictor), 1u);
  ASSERT_EQ(sf_predictor_num_outputs(predictor), 1u);
  const sf_tensor_info* input = sf_predictor_input(predictor, 0);
  EXPECT_STREQ(sf_tensor_info_name(input), "image");
  EXPECT_EQ(sf_tensor_info_dtype(input), SF_FLOAT32);
  ASSERT_EQ(sf_tensor_info_rank(input), 2);
  EXPECT_EQ(sf_tensor_info_dim(input, 0), -1);
  EXPECT_EQ(sf_tensor_info_dim(input, 1), 64);
  EXPECT_EQ(sf_tensor_info_dim(input, 2), -1);
  EXPECT_STREQ(sf_tensor_info_dim_name(input, 0), "");
  const sf_tensor_info* output = sf_predictor_output(predictor, 0);
  EXPECT_STREQ(sf_tensor_info_name(output), "probabilities");
  EXPECT_EQ(sf_tensor_info_dim(output, 1), 10);
  EXPECT_EQ(sf_predictor_input(predictor, 1), nullptr);
  EXPECT_EQ(sf_predictor_output(predictor, 1), nullptr);
  sf_predictor_free(predictor);
}

TEST(CApiTest, RunReturnsOutputsTheCallerOwns) {
  sf_predictor* predictor = LoadMlp();
  ASSERT_NE(predictor, nullptr);
  std::vector<float> images = Images(3, 7);
  sf_tensor* image = Wrap(images);
  const char* names[] = {"image"};
  sf_tensor* output = nullptr;
  ASSERT_TRUE(IsOk(sf_predictor_run(predictor, names, &image, 1, &output, 1)));
  EXPECT_EQ(sf_tensor_dtype(output), SF_FLOAT32);
  ASSERT_EQ(sf_tensor_rank(output), 2);
  EXPECT_EQ(sf_tensor_dim(output, 0), 3);
  EXPECT_EQ(sf_tensor_dim(output, 1), 10);
  EXPECT_EQ(sf_tensor_num_elements(output), 30);
  EXPECT_EQ(sf_tensor_byte_size(output), 120u);
  const std::vector<double> expected = Reference(images);
  ExpectNear(static_cast<const float*>(sf_tensor_const_data(output)), expected);

  // The output is the caller's: writing it changes no later run, and a
  // later run changes neither it nor the caller's input memory.
  std::memset(sf_tensor_data(output), 0, sf_tensor_byte_size(output));
  const std::vector<float> before = images;
  sf_tensor* again = nullptr;
  ASSERT_TRUE(IsOk(sf_predictor_run(predictor, names, &image, 1, &again, 1)));
  ExpectNear(static_cast<const float*>(sf_tensor_const_data(again)), expected);
  EXPECT_EQ(static_cast<const float*>(sf_tensor_const_data(output))[0], 0.0f);
  EXPECT_EQ(images, before);
  sf_tensor_free(again);
  sf_tensor_free(output);
  sf_tensor_free(image);
  sf_predictor_free(predictor);
}

TEST(CApiTest, RunIntoTheCallersBuffers) {
  sf_predictor* predictor = LoadMlp();
  ASSERT_NE(predictor, nullptr);
  std::vector<float> images = Images(2, 3);
  sf_tensor* image = Wrap(images);
  std::vector<float> probabilities(20, -1.0f);
  const int64_t dims[] = {2, 10};
  sf_tensor* output = nullptr;
  ASSERT_TRUE(IsOk(
      sf_tensor_wrap(probabilities.data(), 80, SF_FLOAT32, dims, 2, &output)));
  const char* names[] = {"image"};
  ASSERT_TRUE(
      IsOk(sf_predictor_run_into(predictor, names, &image, 1, &output, 1)));
  ExpectNear(probabilities.data(), Reference(images));
  sf_tensor_free(output);
  sf_tensor_free(image);
  sf_predictor_free(predictor);
}

TEST(CApiTest, LibraryTensorsAreZeroedAndWritable) {
  const int64_t dims[] = {4, 64};
  sf_tensor* image = nullptr;
  ASSERT_TRUE(IsOk(sf_tensor_create(SF_FLOAT32, dims, 2, &image)));
  ASSERT_EQ(sf_tensor_byte_size(image), 4u * 64 * 4);
  auto* values = static_cast<float*>(sf_tensor_data(image));
  for (int i = 0; i < 256; ++i) EXPECT_EQ(values[i], 0.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values) % 64, 0u);
  std::vector<float> images = Images(4, 11);
  std::memcpy(values, images.data(), 1024);

  sf_predictor* predictor = LoadMlp();
  ASSERT_NE(predictor, nullptr);
  const char* names[] = {"image"};
  sf_tensor* output = nullptr;
  ASSERT_TRUE(IsOk(sf_predictor_run(predictor, names, &image, 1, &output, 1)));
  ExpectNear(static_cast<const float*>(sf_tensor_const_data(output)),
             Reference(images));
  sf_tensor_free(output);

  // New contents through the same handle give the new answer.
  images = Images(4, 12);
  std::memcpy(sf_tensor_data(image), images.data(), 1024);
  ASSERT_TRUE(IsOk(sf_predictor_run(predictor, names, &image, 1, &output, 1)));
  ExpectNear(static_cast<const float*>(sf_tensor_const_data(output)),
             Reference(images));
  sf_tensor_free(output);
  sf_tensor_free(image);
  sf_predictor_free(predictor);

  sf_tensor* scalar = nullptr;
  ASSERT_TRUE(IsOk(sf_tensor_create(SF_INT64, nullptr, 0, &scalar)));
  EXPECT_EQ(sf_tensor_rank(scalar), 0);
  EXPECT_EQ(sf_tensor_num_elements(scalar), 1);
  sf_tensor_free(scalar);
}

TEST(CApiTest, ChosenOutputsAndClones) {
  sf_options* options = nullptr;
  ASSERT_TRUE(IsOk(sf_options_create(&options)));
  ASSERT_TRUE(IsOk(sf_options_add_output(options, "hidden.relu")));
  ASSERT_TRUE(IsOk(sf_options_add_output(options, "probabilities")));
  ASSERT_TRUE(IsOk(sf_options_set_place(options, "cpu")));
  sf_predictor* predictor = nullptr;
  ASSERT_TRUE(IsOk(sf_predictor_load(
      kMlpNet, c_api_testing::MlpParamsPath().c_str(), options, &predictor)));
  sf_options_free(options);
  ASSERT_EQ(sf_predictor_num_outputs(predictor), 2u);
  EXPECT_STREQ(sf_tensor_info_name(sf_predictor_output(predictor, 0)),
               "hidden.relu");

  sf_predictor* clone = nullptr;
  ASSERT_TRUE(IsOk(sf_predictor_clone(predictor, &clone)));
  sf_predictor_free(predictor);  // The clone outlives it.
  std::vector<float> images = Images(1, 5);
  sf_tensor* image = Wrap(images);
  const char* names[] = {"image"};
  sf_tensor* outputs[2] = {nullptr, nullptr};
  ASSERT_TRUE(IsOk(sf_predictor_run(clone, names, &image, 1, outputs, 2)));
  EXPECT_EQ(sf_tensor_dim(outputs[0], 1), 32);
  const auto* hidden =
      static_cast<const float*>(sf_tensor_const_data(outputs[0]));
  for (int i = 0; i < 32; ++i) EXPECT_GE(hidden[i], 0.0f);
  ExpectNear(static_cast<const float*>(sf_tensor_const_data(outputs[1])),
             Reference(images));
  sf_tensor_free(outputs[0]);
  sf_tensor_free(outputs[1]);
  sf_tensor_free(image);
  sf_predictor_free(clone);
}

TEST(CApiTest, FreeingNullIsANoOp) {
  sf_status_free(nullptr);
  sf_tensor_free(nullptr);
  sf_options_free(nullptr);
  sf_predictor_free(nullptr);
  EXPECT_EQ(sf_predictor_num_inputs(nullptr), 0u);
  EXPECT_EQ(sf_tensor_info_rank(nullptr), -1);
  EXPECT_EQ(sf_tensor_data(nullptr), nullptr);
}

}  // namespace
}  // namespace scopeflow
