#include "tools/serve_models.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;

std::string ModelName(const std::string& model_dir) {
  std::error_code error;
  fs::path path = fs::weakly_canonical(fs::path(model_dir), error);
  if (error) path = fs::path(model_dir).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  return path.filename().string();
}

int64_t VersionOf(const std::shared_ptr<const ServedModel>& model) {
  return model == nullptr ? 0 : model->version;
}

bool IsFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ListModelVersions(
    const std::string& model_dir) {
  std::error_code error;
  fs::directory_iterator it(model_dir, error);
  SF_CHECK_CODE(!error, absl::StatusCode::kNotFound,
                "cannot list model folder %s: %s", model_dir, error.message());
  std::vector<int64_t> versions;
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) break;
    const std::string name = it->path().filename().string();
    int64_t version = 0;
    std::error_code not_a_folder;
    const bool digits = !name.empty() && std::all_of(name.begin(), name.end(),
                                                     absl::ascii_isdigit);
    if (digits && absl::SimpleAtoi(name, &version) && version > 0 &&
        it->is_directory(not_a_folder)) {
      versions.push_back(version);
    }
  }
  SF_CHECK_CODE(!error, absl::StatusCode::kNotFound,
                "cannot list model folder %s: %s", model_dir, error.message());
  std::sort(versions.begin(), versions.end());
  return versions;
}

absl::StatusOr<std::unique_ptr<ServedModel>> LoadModelVersion(
    const std::string& model_dir, int64_t version,
    const PredictorOptions& options) {
  const fs::path folder = fs::path(model_dir) / absl::StrCat(version);
  const fs::path binary = folder / "model.pb";
  const fs::path text = folder / "model.pbtxt";
  const fs::path params = folder / "params";
  const bool has_binary = IsFile(binary);
  const bool has_text = IsFile(text);
  SF_CHECK(has_binary || has_text,
           "model folder %s has neither model.pb nor model.pbtxt",
           folder.string());
  SF_CHECK(!(has_binary && has_text),
           "model folder %s has both model.pb and model.pbtxt; keep one",
           folder.string());
  absl::StatusOr<Predictor> predictor =
      Predictor::Load((has_binary ? binary : text).string(),
                      IsFile(params) ? params.string() : "", options);
  if (!predictor.ok()) {
    return absl::Status(predictor.status().code(),
                        absl::StrCat("model folder ", folder.string(), ": ",
                                     predictor.status().message()));
  }
  return std::make_unique<ServedModel>(
      ServedModel{ModelName(model_dir), version, *std::move(predictor)});
}

ModelManager::ModelManager(std::string model_dir, PredictorOptions options,
                           ServeMetrics* metrics)
    : model_dir_(std::move(model_dir)),
      name_(ModelName(model_dir_)),
      options_(std::move(options)),
      metrics_(metrics) {}

ModelManager::~ModelManager() { StopPolling(); }

absl::Status ModelManager::LoadNewest() {
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                      ListModelVersions(model_dir_));
  SF_CHECK_CODE(!versions.empty(), absl::StatusCode::kNotFound,
                "model folder %s has no version folder (expected %s/1/ "
                "holding model.pb or model.pbtxt, and params)",
                model_dir_, model_dir_);
  return Poll().status();
}

absl::StatusOr<bool> ModelManager::Poll() {
  std::lock_guard<std::mutex> loading(load_mutex_);
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                      ListModelVersions(model_dir_));
  const std::shared_ptr<const ServedModel> served = current();
  if (versions.empty() ||
      (served != nullptr && versions.back() <= served->version)) {
    return false;
  }
  absl::StatusOr<std::unique_ptr<ServedModel>> loaded =
      LoadModelVersion(model_dir_, versions.back(), options_);
  if (metrics_ != nullptr) metrics_->CountModelLoad(loaded.ok());
  if (!loaded.ok()) return loaded.status();
  std::shared_ptr<const ServedModel> next = *std::move(loaded);
  {
    MutexLock lock(&mutex_);
    current_.swap(next);
  }
  // `next` now holds the old version; it is destroyed here unless a request
  // still holds it, in which case the last such request destroys it.
  return true;
}

std::shared_ptr<const ServedModel> ModelManager::current() const {
  ReaderMutexLock lock(&mutex_);
  return current_;
}

void ModelManager::StartPolling(absl::Duration interval) {
  StopPolling();
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = false;
  }
  poller_ = std::thread([this, interval] { PollLoop(interval); });
}

void ModelManager::StopPolling() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = true;
  }
  stop_signal_.notify_all();
  if (poller_.joinable()) poller_.join();
}

void ModelManager::PollLoop(absl::Duration interval) {
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_signal_.wait_for(lock, absl::ToChronoNanoseconds(interval),
                                [this] { return stop_; })) {
    lock.unlock();
    const absl::StatusOr<bool> swapped = Poll();
    if (!swapped.ok()) {
      const std::string error(swapped.status().message());
      if (error != last_error_) {
        std::fprintf(stderr, "serve: %s (still serving version %lld)\n",
                     error.c_str(),
                     static_cast<long long>(VersionOf(current())));
        last_error_ = error;
      }
    } else if (*swapped) {
      last_error_.clear();
      std::fprintf(stderr, "serve: now serving model %s version %lld\n",
                   name_.c_str(), static_cast<long long>(VersionOf(current())));
    }
    lock.lock();
  }
}

}  // namespace scopeflow
