#include "tools/serve_testing.h"

#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "framework/param_io.h"
#include "framework/serving/mlp_fixture.h"
#include "platform/file.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::Status WriteMlpVersion(const std::string& model_dir, int64_t version,
                             float bias_shift) {
  namespace fs = std::filesystem;
  const fs::path staging =
      fs::path(model_dir).parent_path() / absl::StrCat(".staging-", version);
  std::error_code error;
  fs::create_directories(staging, error);
  SF_CHECK(!error, "cannot make %s: %s", staging.string(), error.message());
  SF_ASSIGN_OR_RETURN(std::string net, ReadFile(kMlpNet));
  SF_RETURN_IF_ERROR(
      WriteFileAtomically((staging / "model.pbtxt").string(), net));
  SF_ASSIGN_OR_RETURN(std::unique_ptr<Scope> parameters, MlpParameters());
  Tensor* bias = *parameters->FindVar("fc2.b")->GetMutable<Tensor>();
  for (int64_t i = 0; i < bias->numel(); ++i) {
    bias->data<float>()[i] += bias_shift * static_cast<float>(i);
  }
  SF_RETURN_IF_ERROR(SaveParams(*parameters,
                                {"fc1.w", "fc1.b", "fc2.w", "fc2.b"},
                                (staging / "params").string()));
  fs::create_directories(model_dir, error);
  fs::rename(staging, fs::path(model_dir) / absl::StrCat(version), error);
  SF_CHECK(!error, "cannot move %s into %s: %s", staging.string(), model_dir,
           error.message());
  return absl::OkStatus();
}

}  // namespace scopeflow
