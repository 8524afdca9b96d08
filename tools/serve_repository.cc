#include "tools/serve_repository.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "platform/file.h"
#include "platform/status_macros.h"
#include "proto/tfserving/model_server_config.pb.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;

// Collects the text parser's first error with its position.
class ConfigErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) {
      first_ = absl::StrCat("line ", line + 1, " column ", column + 1, ": ",
                            message);
    }
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

absl::StatusOr<VersionPolicy> PolicyOf(
    const tensorflow::serving::ModelConfig& config, const std::string& path) {
  VersionPolicy policy;
  const tensorflow::serving::ServableVersionPolicy& choice =
      config.model_version_policy();
  switch (choice.policy_choice_case()) {
    case tensorflow::serving::ServableVersionPolicy::kLatest:
      policy.latest = choice.latest().num_versions() == 0
                          ? 1
                          : static_cast<int>(choice.latest().num_versions());
      break;
    case tensorflow::serving::ServableVersionPolicy::kAll:
      policy.all = true;
      break;
    case tensorflow::serving::ServableVersionPolicy::kSpecific:
      SF_CHECK(choice.specific().versions_size() > 0,
               "model config file %s: model \"%s\" has a specific version "
               "policy naming no version",
               path, config.name());
      for (int64_t version : choice.specific().versions()) {
        SF_CHECK(version > 0,
                 "model config file %s: model \"%s\" names version %d; "
                 "versions are positive",
                 path, config.name(), version);
        policy.specific.push_back(version);
      }
      break;
    default:
      break;
  }
  return policy;
}

}  // namespace

absl::StatusOr<std::vector<ModelSource>> ReadModelConfigFile(
    const std::string& path) {
  SF_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  tensorflow::serving::ModelServerConfig config;
  google::protobuf::TextFormat::Parser parser;
  ConfigErrors errors;
  parser.RecordErrorsTo(&errors);
  SF_CHECK(parser.ParseFromString(text, &config),
           "model config file %s: %s (expected TensorFlow Serving's "
           "model_config_list { config { name: ... base_path: ... } })",
           path, errors.first());
  const fs::path folder = fs::path(path).parent_path();
  std::vector<ModelSource> sources;
  std::set<std::string> names;
  for (const tensorflow::serving::ModelConfig& model :
       config.model_config_list().config()) {
    SF_CHECK(!model.name().empty(), "model config file %s: a model has no name",
             path);
    SF_CHECK(!model.base_path().empty(),
             "model config file %s: model \"%s\" has no base_path", path,
             model.name());
    SF_CHECK(names.insert(model.name()).second,
             "model config file %s: two models are named \"%s\"", path,
             model.name());
    SF_CHECK(model.name().find_first_of("/:") == std::string::npos,
             "model config file %s: model name \"%s\" has a / or :, which "
             "the REST paths cannot carry",
             path, model.name());
    fs::path base(model.base_path());
    if (base.is_relative()) base = folder / base;
    SF_ASSIGN_OR_RETURN(VersionPolicy policy, PolicyOf(model, path));
    sources.push_back(
        ModelSource{model.name(), base.lexically_normal().string(), policy});
  }
  return sources;
}

absl::StatusOr<std::vector<ModelSource>> ListModelRepository(
    const std::string& root) {
  std::error_code error;
  fs::directory_iterator it(root, error);
  SF_CHECK_CODE(!error, absl::StatusCode::kNotFound,
                "cannot list model repository %s: %s", root, error.message());
  std::vector<ModelSource> sources;
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    std::error_code not_a_folder;
    const std::string name = it->path().filename().string();
    // Hidden folders are a deployment's staging area, not models.
    if (name.empty() || name[0] == '.' || !it->is_directory(not_a_folder)) {
      continue;
    }
    sources.push_back(ModelSource{name, it->path().string(), {}});
  }
  SF_CHECK_CODE(!error, absl::StatusCode::kNotFound,
                "cannot list model repository %s: %s", root, error.message());
  std::sort(sources.begin(), sources.end(),
            [](const ModelSource& a, const ModelSource& b) {
              return a.name < b.name;
            });
  return sources;
}

ModelRepository::ModelRepository(ModelSourceList sources,
                                 PredictorOptions options,
                                 ServeMetrics* metrics)
    : sources_(std::move(sources)),
      options_(std::move(options)),
      metrics_(metrics) {}

ModelRepository::~ModelRepository() { StopPolling(); }

std::vector<std::shared_ptr<ModelManager>> ModelRepository::Apply(
    const std::vector<ModelSource>& sources) {
  std::map<std::string, std::shared_ptr<ModelManager>> models;
  {
    ReaderMutexLock lock(&mutex_);
    models = models_;
  }
  std::map<std::string, std::shared_ptr<ModelManager>> next;
  std::vector<std::shared_ptr<ModelManager>> added;
  for (const ModelSource& source : sources) {
    const auto it = models.find(source.name);
    if (it != models.end() && it->second->model_dir() == source.base_path) {
      it->second->SetPolicy(source.policy);
      next[source.name] = it->second;
      continue;
    }
    auto model = std::make_shared<ModelManager>(
        source.base_path, options_, metrics_, source.policy, source.name);
    next[source.name] = model;
    added.push_back(std::move(model));
  }
  for (const auto& [name, model] : models) {
    const auto it = next.find(name);
    if (it != next.end() && it->second == model) continue;
    if (it == next.end()) {
      std::fprintf(stderr, "serve: model %s removed\n", name.c_str());
      if (metrics_ != nullptr) metrics_->SetServedVersions(name, {});
    }
  }
  MutexLock lock(&mutex_);
  models_.swap(next);
  // `next` holds the models removed: each goes once no request holds it.
  return added;
}

absl::Status ModelRepository::Load() {
  SF_RETURN_IF_ERROR(Poll());
  ReaderMutexLock lock(&mutex_);
  SF_CHECK_CODE(!models_.empty(), absl::StatusCode::kNotFound,
                "no model to serve: the model list is empty");
  return absl::OkStatus();
}

absl::Status ModelRepository::Poll() {
  std::lock_guard<std::mutex> polling(poll_mutex_);
  SF_ASSIGN_OR_RETURN(const std::vector<ModelSource> sources, sources_());
  Apply(sources);
  std::map<std::string, std::shared_ptr<ModelManager>> models;
  {
    ReaderMutexLock lock(&mutex_);
    models = models_;
  }
  std::vector<std::string> errors;
  for (const auto& [name, model] : models) {
    const int64_t before =
        model->current() == nullptr ? 0 : model->current()->version;
    const absl::Status status =
        before == 0 ? model->LoadNewest() : model->Poll().status();
    if (!status.ok()) {
      errors.push_back(absl::StrCat("model ", name, ": ", status.message()));
    }
    const std::shared_ptr<const ServedModel> now = model->current();
    if (now != nullptr && now->version != before) {
      std::fprintf(stderr, "serve: now serving model %s version %lld\n",
                   name.c_str(), static_cast<long long>(now->version));
    }
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrJoin(errors, "; "));
}

std::shared_ptr<ModelManager> ModelRepository::Find(
    const std::string& name) const {
  ReaderMutexLock lock(&mutex_);
  const auto it = models_.find(name);
  return it == models_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<const ServedModel>> ModelRepository::Resolve(
    const std::string& name, int64_t version) const {
  const std::shared_ptr<ModelManager> model = Find(name);
  SF_CHECK_CODE(model != nullptr, absl::StatusCode::kNotFound,
                "unknown model \"%s\" (this server serves: %s)", name,
                absl::StrJoin(names(), ", "));
  std::shared_ptr<const ServedModel> served =
      version == 0 ? model->current() : model->version(version);
  if (served != nullptr) return served;
  const std::vector<int64_t> versions = model->served_versions();
  SF_CHECK_CODE(!versions.empty(), absl::StatusCode::kUnavailable,
                "model \"%s\" has no version loaded", name);
  return absl::NotFoundError(absl::StrCat(
      "model \"", name, "\" has no version ", version,
      " served (versions served: ", absl::StrJoin(versions, ", "), ")"));
}

std::vector<int64_t> ModelRepository::ServedVersions(
    const std::string& name) const {
  const std::shared_ptr<ModelManager> model = Find(name);
  return model == nullptr ? std::vector<int64_t>() : model->served_versions();
}

std::vector<std::string> ModelRepository::names() const {
  ReaderMutexLock lock(&mutex_);
  std::vector<std::string> out;
  for (const auto& [name, model] : models_) out.push_back(name);
  return out;
}

bool ModelRepository::ready() const {
  ReaderMutexLock lock(&mutex_);
  for (const auto& [name, model] : models_) {
    if (model->current() == nullptr) return false;
  }
  return !models_.empty();
}

void ModelRepository::StartPolling(absl::Duration interval) {
  StopPolling();
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = false;
  }
  poller_ = std::thread([this, interval] { PollLoop(interval); });
}

void ModelRepository::StopPolling() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = true;
  }
  stop_signal_.notify_all();
  if (poller_.joinable()) poller_.join();
}

void ModelRepository::PollLoop(absl::Duration interval) {
  std::string last_error;
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_signal_.wait_for(lock, absl::ToChronoNanoseconds(interval),
                                [this] { return stop_; })) {
    lock.unlock();
    const absl::Status status = Poll();
    if (!status.ok() && status.message() != last_error) {
      last_error = std::string(status.message());
      std::fprintf(stderr, "serve: %s\n", last_error.c_str());
    } else if (status.ok()) {
      last_error.clear();
    }
    lock.lock();
  }
}

}  // namespace scopeflow
