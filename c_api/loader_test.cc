// The loader (loader.cc) linked alone, as libscopeflow.so is: it loads the
// engine named by SCOPEFLOW_ENGINE after passing over a file that is no
// library, forwards calls to it, and statuses and handles come back from
// it. Usage: loader_test NET ENGINE (softmax.pbtxt and the CPU engine).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "c_api/scopeflow_c_api.h"
#include "gtest/gtest.h"

namespace {

std::string net_path;

TEST(LoaderTest, ForwardsToTheEngine) {
  EXPECT_EQ(sf_api_version(), SF_API_VERSION);
  EXPECT_STREQ(sf_dtype_name(SF_INT64), "int64");
  EXPECT_STREQ(sf_engine_name(), "cpu");

  sf_predictor* predictor = nullptr;
  sf_status* status =
      sf_predictor_load(net_path.c_str(), nullptr, nullptr, &predictor);
  ASSERT_EQ(status, nullptr) << sf_status_message(status);
  EXPECT_STREQ(sf_predictor_name(predictor), "softmax");
  ASSERT_EQ(sf_predictor_num_inputs(predictor), 1u);
  EXPECT_EQ(sf_tensor_info_dim(sf_predictor_input(predictor, 0), 1), 3);

  float x[3] = {0, 1, 2};
  const int64_t dims[] = {1, 3};
  sf_tensor* input = nullptr;
  ASSERT_EQ(sf_tensor_wrap(x, sizeof x, SF_FLOAT32, dims, 2, &input), nullptr);
  const char* name = "x";
  sf_tensor* output = nullptr;
  ASSERT_EQ(sf_predictor_run(predictor, &name, &input, 1, &output, 1), nullptr);
  const auto* y = static_cast<const float*>(sf_tensor_const_data(output));
  const double total = 1 + std::exp(1.0) + std::exp(2.0);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[i], std::exp(i) / total, 1e-6);
  sf_tensor_free(output);

  // An engine's status, through the loader.
  name = "z";
  status = sf_predictor_run(predictor, &name, &input, 1, &output, 1);
  EXPECT_EQ(sf_status_code(status), SF_INVALID_ARGUMENT);
  EXPECT_STREQ(sf_status_message(status),
               "unknown input \"z\" (the model's inputs: x)");
  sf_status_free(status);
  sf_tensor_free(input);
  sf_predictor_free(predictor);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s NET ENGINE\n", argv[0]);
    return 2;
  }
  net_path = argv[1];
  // A file that dlopen refuses, then the engine.
  setenv("SCOPEFLOW_ENGINE", (net_path + ":" + argv[2]).c_str(), 1);
  return RUN_ALL_TESTS();
}
