// Helpers of the C API's tests: the MLP's parameters in a file, and
// statuses checked and freed.
#ifndef SCOPEFLOW_C_API_C_API_TEST_UTIL_H_
#define SCOPEFLOW_C_API_C_API_TEST_UTIL_H_

#include <string>

#include "c_api/scopeflow_c_api.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace c_api_testing {

// examples/mlp's parameters (MlpParameters()) saved to a file under
// TEST_TMPDIR (or the system's temporary directory), once per process; its
// path.
const std::string& MlpParamsPath();

// Loads the MLP with MlpParamsPath(); fails the test on an error.
sf_predictor* LoadMlp();

// Takes a status: its code and message, freed.
struct TakenStatus {
  sf_code code;
  std::string message;
};
TakenStatus Take(sf_status* status);

// Passes for a null (success) status, else fails with its message (and
// frees it).
::testing::AssertionResult IsOk(sf_status* status);

}  // namespace c_api_testing
}  // namespace scopeflow

#endif  // SCOPEFLOW_C_API_C_API_TEST_UTIL_H_
