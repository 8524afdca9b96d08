// The loader without an engine: every call that can fail says why, the
// others return their neutral values, and nothing crashes.
#include <cstdlib>
#include <string>

#include "c_api/scopeflow_c_api.h"
#include "gtest/gtest.h"

namespace {

TEST(LoaderMissingTest, EveryCallSaysWhy) {
  setenv("SCOPEFLOW_ENGINE", "no/such/libscopeflow_cpu.so", 1);
  EXPECT_STREQ(sf_engine_name(), "none");
  EXPECT_EQ(sf_api_version(), SF_API_VERSION);
  EXPECT_EQ(sf_dtype_size(SF_FLOAT32), 4u);

  sf_predictor* predictor = nullptr;
  sf_status* status =
      sf_predictor_load("net.pbtxt", nullptr, nullptr, &predictor);
  EXPECT_EQ(sf_status_code(status), SF_FAILED_PRECONDITION);
  const std::string message = sf_status_message(status);
  EXPECT_NE(message.find("libscopeflow: no engine could be loaded"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("no/such/libscopeflow_cpu.so"), std::string::npos)
      << message;
  sf_status_free(status);
  EXPECT_EQ(predictor, nullptr);

  sf_tensor* tensor = nullptr;
  status = sf_tensor_create(SF_FLOAT32, nullptr, 0, &tensor);
  EXPECT_EQ(sf_status_code(status), SF_FAILED_PRECONDITION);
  sf_status_free(status);
  EXPECT_EQ(sf_predictor_num_inputs(nullptr), 0u);
  EXPECT_EQ(sf_tensor_data(nullptr), nullptr);
  sf_tensor_free(nullptr);
}

}  // namespace
