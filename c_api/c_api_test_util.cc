#include "c_api/c_api_test_util.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "framework/param_io.h"
#include "framework/serving/mlp_fixture.h"

namespace scopeflow {
namespace c_api_testing {

const std::string& MlpParamsPath() {
  static const std::string* const path = [] {
    const char* test_dir = std::getenv("TEST_TMPDIR");
    const std::string dir =
        test_dir != nullptr ? test_dir
                            : std::filesystem::temp_directory_path().string();
    auto* file = new std::string(dir + "/scopeflow_c_api_mlp." +
                                 std::to_string(getpid()) + ".params");
    absl::StatusOr<std::unique_ptr<Scope>> parameters = MlpParameters();
    if (!parameters.ok()) std::abort();
    const absl::Status saved =
        SaveParams(**parameters, (*parameters)->LocalVarNames(), *file);
    if (!saved.ok()) std::abort();
    return file;
  }();
  return *path;
}

sf_predictor* LoadMlp() {
  sf_predictor* predictor = nullptr;
  EXPECT_TRUE(IsOk(sf_predictor_load(kMlpNet, MlpParamsPath().c_str(), nullptr,
                                     &predictor)));
  return predictor;
}

TakenStatus Take(sf_status* status) {
  TakenStatus taken{sf_status_code(status), sf_status_message(status)};
  sf_status_free(status);
  return taken;
}

::testing::AssertionResult IsOk(sf_status* status) {
  if (status == nullptr) return ::testing::AssertionSuccess();
  const TakenStatus taken = Take(status);
  return ::testing::AssertionFailure()
         << "code " << taken.code << ": " << taken.message;
}

}  // namespace c_api_testing
}  // namespace scopeflow
