#include "tools/serve_models.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;

bool IsFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// The version a folder name stands for: its digits read as a decimal
// number, or 0 if it is not one.
int64_t VersionOfName(const std::string& name) {
  int64_t version = 0;
  const bool digits = !name.empty() && std::all_of(name.begin(), name.end(),
                                                   absl::ascii_isdigit);
  return digits && absl::SimpleAtoi(name, &version) && version > 0 ? version
                                                                   : 0;
}

// What a version folder and its files are now: each one's path, inode,
// size, and times of change (ctime too, so that a folder or file replaced
// by one with the same contents and mtime, say by `cp -p` and a rename,
// still counts as changed). A load that failed is tried again only once
// this differs.
std::string Fingerprint(const std::string& folder) {
  std::string out;
  auto add = [&out](const std::string& path) {
    struct stat info;
    if (::lstat(path.c_str(), &info) != 0) {
      absl::StrAppend(&out, path, " unreadable\n");
      return;
    }
    absl::StrAppend(&out, path, " ", info.st_ino, " ", info.st_size, " ",
                    info.st_mtim.tv_sec, ".", info.st_mtim.tv_nsec, " ",
                    info.st_ctim.tv_sec, ".", info.st_ctim.tv_nsec, "\n");
  };
  add(folder);
  std::error_code error;
  fs::recursive_directory_iterator it(folder, error);
  for (; !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    add(it->path().string());
  }
  if (error) absl::StrAppend(&out, "unlistable: ", error.message());
  return out;
}

}  // namespace

std::string ModelNameOfFolder(const std::string& model_dir) {
  std::error_code error;
  fs::path path = fs::weakly_canonical(fs::path(model_dir), error);
  if (error) path = fs::path(model_dir).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  return path.filename().string();
}

absl::StatusOr<std::vector<int64_t>> ListModelVersions(
    const std::string& model_dir) {
  std::error_code error;
  fs::directory_iterator it(model_dir, error);
  SF_CHECK_CODE(!error, absl::StatusCode::kNotFound,
                "cannot list model folder %s: %s", model_dir, error.message());
  std::vector<int64_t> versions;
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) break;
    const int64_t version = VersionOfName(it->path().filename().string());
    std::error_code not_a_folder;
    if (version > 0 && it->is_directory(not_a_folder)) {
      versions.push_back(version);
    }
  }
  SF_CHECK_CODE(!error, absl::StatusCode::kNotFound,
                "cannot list model folder %s: %s", model_dir, error.message());
  std::sort(versions.begin(), versions.end());
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

absl::StatusOr<std::string> FindVersionFolder(const std::string& model_dir,
                                              int64_t version) {
  std::error_code error;
  fs::directory_iterator it(model_dir, error);
  SF_CHECK_CODE(!error, absl::StatusCode::kNotFound,
                "cannot list model folder %s: %s", model_dir, error.message());
  std::vector<std::string> found;
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    std::error_code not_a_folder;
    if (VersionOfName(it->path().filename().string()) == version &&
        it->is_directory(not_a_folder)) {
      found.push_back(it->path().string());
    }
  }
  SF_CHECK_CODE(!found.empty(), absl::StatusCode::kNotFound,
                "model folder %s has no version %d", model_dir, version);
  std::sort(found.begin(), found.end());
  SF_CHECK(found.size() == 1,
           "model folder %s has %d folders for version %d (%s); keep one",
           model_dir, found.size(), version, absl::StrJoin(found, ", "));
  return found[0];
}

absl::StatusOr<std::unique_ptr<ServedModel>> LoadModelVersion(
    const std::string& model_dir, int64_t version,
    const PredictorOptions& options, const std::string& name) {
  SF_ASSIGN_OR_RETURN(const std::string found,
                      FindVersionFolder(model_dir, version));
  const fs::path folder(found);
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
      ServedModel{name.empty() ? ModelNameOfFolder(model_dir) : name, version,
                  *std::move(predictor)});
}

ModelManager::ModelManager(std::string model_dir, PredictorOptions options,
                           ServeMetrics* metrics, VersionPolicy policy,
                           std::string name)
    : model_dir_(std::move(model_dir)),
      name_(name.empty() ? ModelNameOfFolder(model_dir_) : std::move(name)),
      options_(std::move(options)),
      metrics_(metrics),
      policy_(std::move(policy)) {}

ModelManager::~ModelManager() { StopPolling(); }

absl::Status ModelManager::LoadNewest() {
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                      ListModelVersions(model_dir_));
  SF_CHECK_CODE(!versions.empty(), absl::StatusCode::kNotFound,
                "model folder %s has no version folder (expected %s/1/ "
                "holding model.pb or model.pbtxt, and params)",
                model_dir_, model_dir_);
  const absl::StatusOr<bool> polled = Poll();
  if (current() != nullptr) {
    if (!polled.ok()) {
      std::fprintf(stderr, "serve: %s (serving version %lld instead)\n",
                   std::string(polled.status().message()).c_str(),
                   static_cast<long long>(current()->version));
    }
    return absl::OkStatus();
  }
  if (!polled.ok()) return polled.status();
  return absl::NotFoundError(
      absl::StrCat("model folder ", model_dir_,
                   " has none of the versions its policy names"));
}

void ModelManager::SetPolicy(VersionPolicy policy) {
  std::lock_guard<std::mutex> loading(load_mutex_);
  policy_ = std::move(policy);
}

std::vector<int64_t> ModelManager::Candidates(
    const std::vector<int64_t>& present) const {
  std::vector<int64_t> out;
  if (!policy_.specific.empty()) {
    for (int64_t version : policy_.specific) {
      if (std::binary_search(present.begin(), present.end(), version)) {
        out.push_back(version);
      }
    }
    std::sort(out.rbegin(), out.rend());
    return out;
  }
  return std::vector<int64_t>(present.rbegin(), present.rend());
}

std::shared_ptr<const ServedModel> ModelManager::TryLoad(
    int64_t version, absl::Status& new_error) {
  const absl::StatusOr<std::string> folder =
      FindVersionFolder(model_dir_, version);
  const std::string fingerprint = folder.ok() ? Fingerprint(*folder) : "";
  const auto failed = failures_.find(version);
  if (failed != failures_.end() && failed->second.fingerprint == fingerprint) {
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<ServedModel>> loaded =
      LoadModelVersion(model_dir_, version, options_, name_);
  if (metrics_ != nullptr) metrics_->CountModelLoad(name_, version, loaded.ok());
  if (!loaded.ok()) {
    failures_[version] = Failure{fingerprint, loaded.status()};
    {
      MutexLock lock(&mutex_);
      broken_[version] = loaded.status();
    }
    if (new_error.ok()) new_error = loaded.status();
    return nullptr;
  }
  failures_.erase(version);
  {
    MutexLock lock(&mutex_);
    broken_.erase(version);
  }
  (*loaded)->metrics = metrics_;
  return std::shared_ptr<const ServedModel>(*std::move(loaded));
}

absl::StatusOr<bool> ModelManager::Poll() {
  std::lock_guard<std::mutex> loading(load_mutex_);
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> present,
                      ListModelVersions(model_dir_));
  std::map<int64_t, std::shared_ptr<const ServedModel>> served;
  {
    ReaderMutexLock lock(&mutex_);
    served = served_;
  }
  const size_t wanted =
      !policy_.specific.empty() || policy_.all
          ? present.size()
          : static_cast<size_t>(std::max(policy_.latest, 1));
  std::map<int64_t, std::shared_ptr<const ServedModel>> next;
  absl::Status new_error;
  for (int64_t version : Candidates(present)) {
    if (next.size() == wanted) break;
    const auto it = served.find(version);
    std::shared_ptr<const ServedModel> model =
        it != served.end() ? it->second : TryLoad(version, new_error);
    if (model != nullptr) next[version] = std::move(model);
  }
  // Versions whose folders went away are forgotten, broken or not.
  for (auto it = failures_.begin(); it != failures_.end();) {
    if (std::binary_search(present.begin(), present.end(), it->first)) {
      ++it;
    } else {
      MutexLock lock(&mutex_);
      broken_.erase(it->first);
      it = failures_.erase(it);
    }
  }
  // Never down to no version: the old ones answer until a new one loads.
  const bool changed = !next.empty() && next != served;
  if (changed) {
    MutexLock lock(&mutex_);
    served_.swap(next);
  }
  if (metrics_ != nullptr) metrics_->SetServedVersions(name_, served_versions());
  // `next` and `served` now hold the old versions; each is destroyed here
  // unless a request still holds it, in which case the last such request
  // destroys it.
  if (!new_error.ok()) return new_error;
  return changed;
}

std::shared_ptr<const ServedModel> ModelManager::current() const {
  ReaderMutexLock lock(&mutex_);
  return served_.empty() ? nullptr : served_.rbegin()->second;
}

std::shared_ptr<const ServedModel> ModelManager::version(
    int64_t version) const {
  ReaderMutexLock lock(&mutex_);
  const auto it = served_.find(version);
  return it == served_.end() ? nullptr : it->second;
}

std::vector<int64_t> ModelManager::served_versions() const {
  ReaderMutexLock lock(&mutex_);
  std::vector<int64_t> out;
  for (const auto& [version, model] : served_) out.push_back(version);
  return out;
}

std::vector<VersionState> ModelManager::versions() const {
  ReaderMutexLock lock(&mutex_);
  std::map<int64_t, VersionState> states;
  for (const auto& [version, error] : broken_) {
    states[version] = VersionState{version, false, error};
  }
  for (const auto& [version, model] : served_) {
    states[version] = VersionState{version, true, absl::OkStatus()};
  }
  std::vector<VersionState> out;
  for (auto& [version, state] : states) out.push_back(std::move(state));
  return out;
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
  // A broken version fails once, but an unreadable folder fails every
  // poll: each error is printed when it first appears.
  std::string last_error;
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_signal_.wait_for(lock, absl::ToChronoNanoseconds(interval),
                                [this] { return stop_; })) {
    lock.unlock();
    const absl::StatusOr<bool> swapped = Poll();
    const std::shared_ptr<const ServedModel> served = current();
    const long long version = served == nullptr ? 0 : served->version;
    if (!swapped.ok() && swapped.status().message() != last_error) {
      last_error = std::string(swapped.status().message());
      std::fprintf(stderr, "serve: %s (still serving version %lld)\n",
                   std::string(swapped.status().message()).c_str(), version);
    } else if (swapped.ok() && *swapped) {
      last_error.clear();
      std::fprintf(stderr, "serve: now serving model %s version %lld\n",
                   name_.c_str(), version);
    }
    lock.lock();
  }
}

}  // namespace scopeflow
