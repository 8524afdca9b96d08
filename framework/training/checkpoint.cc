#include "framework/training/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "framework/param_io.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr char kPrefix[] = "ckpt-";
constexpr char kSuffix[] = ".sfparams";

}  // namespace

std::string CheckpointPath(const std::string& dir, int64_t step) {
  return absl::StrFormat("%s/%s%012d%s", dir, kPrefix, step, kSuffix);
}

absl::StatusOr<std::vector<CheckpointFile>> ListCheckpoints(
    const std::string& dir) {
  std::vector<CheckpointFile> files;
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string filename = entry.path().filename().string();
    absl::string_view name = filename;
    if (!absl::ConsumePrefix(&name, kPrefix) ||
        !absl::ConsumeSuffix(&name, kSuffix)) {
      continue;
    }
    int64_t step = 0;
    if (!absl::SimpleAtoi(name, &step)) continue;
    files.push_back({entry.path().string(), step});
  }
  SF_CHECK(!error, "cannot list checkpoint directory %s: %s", dir,
           error.message());
  std::sort(files.begin(), files.end(),
            [](const CheckpointFile& a, const CheckpointFile& b) {
              return a.step < b.step;
            });
  return files;
}

absl::Status SaveCheckpoint(const Scope& scope,
                            const std::vector<std::string>& names,
                            const std::string& dir, int64_t step, int keep) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  SF_CHECK(!error, "cannot create checkpoint directory %s: %s", dir,
           error.message());
  SF_RETURN_IF_ERROR(SaveParams(scope, names, CheckpointPath(dir, step)));
  SF_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(dir));
  for (size_t i = 0; i + std::max(keep, 1) < files.size(); ++i) {
    std::filesystem::remove(files[i].path, error);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<CheckpointFile>> RestoreLatestCheckpoint(
    const std::string& dir, Scope& scope, const Place& place) {
  SF_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(dir));
  if (files.empty()) return std::nullopt;
  const CheckpointFile& latest = files.back();
  absl::StatusOr<std::vector<std::string>> loaded =
      LoadParams(latest.path, scope, place);
  if (!loaded.ok()) {
    std::string earlier =
        files.size() > 1 ? absl::StrFormat(
                               "; the previous checkpoint %s was not touched: "
                               "move the damaged file away to resume from it",
                               files[files.size() - 2].path)
                         : "";
    return absl::Status(
        loaded.status().code(),
        absl::StrFormat("cannot resume from checkpoint %s: %s%s", latest.path,
                        loaded.status().message(), earlier));
  }
  return latest;
}

}  // namespace scopeflow
