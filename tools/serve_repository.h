// The models of `scopeflow serve`, by name: one ModelManager (its folder of
// versions, tools/serve_models.h) per model. Where the list of models comes
// from:
//   - one model folder (`scopeflow serve MODEL_DIR`);
//   - a repository root, every folder under which is a model named after
//     it (`--model_repository=ROOT`, as Triton's model repository);
//   - a model config file in TensorFlow Serving's text format
//     (`--model_config_file=FILE`, proto/tfserving/model_server_config.proto)
//     naming each model, its folder and its version policy.
// The list is read again at every poll: a model added is loaded, one
// removed is unloaded, one whose policy changed applies it; each without
// stopping the others, and requests holding a version finish on it.
#ifndef SCOPEFLOW_TOOLS_SERVE_REPOSITORY_H_
#define SCOPEFLOW_TOOLS_SERVE_REPOSITORY_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "framework/serving/predictor.h"
#include "platform/mutex.h"
#include "tools/serve_metrics.h"
#include "tools/serve_models.h"

namespace scopeflow {

// One model to serve.
struct ModelSource {
  std::string name;
  std::string base_path;
  VersionPolicy policy;
};

// The models of a config file: InvalidArgument naming the file and line for
// a file that does not parse, a model without name or base_path, two models
// of one name, a version policy asking for no version.
absl::StatusOr<std::vector<ModelSource>> ReadModelConfigFile(
    const std::string& path);

// Every folder under `root`, named after it, with the default policy.
// NotFound if `root` is not a readable folder.
absl::StatusOr<std::vector<ModelSource>> ListModelRepository(
    const std::string& root);

// Where the list of models comes from; called at start and at every poll.
using ModelSourceList =
    std::function<absl::StatusOr<std::vector<ModelSource>>()>;

// Thread-safe: every method may be called from any thread. Owns its
// ModelManagers; those handed out (shared) stay valid for their holders
// after the model is removed.
class ModelRepository {
 public:
  // `metrics` (may be null, else must outlive this) counts loads and runs.
  ModelRepository(ModelSourceList sources, PredictorOptions options,
                  ServeMetrics* metrics);
  ~ModelRepository();
  ModelRepository(const ModelRepository&) = delete;
  ModelRepository& operator=(const ModelRepository&) = delete;

  // The first load of every model: an error naming each model none of whose
  // versions loads (the others are served all the same), or if the list
  // names no model.
  absl::Status Load();

  // Reads the list again, adds, removes and re-polls models; returns the
  // errors of this poll (a model or version that failed to load), joined.
  absl::Status Poll();

  // The model named `name`, or null.
  std::shared_ptr<ModelManager> Find(const std::string& name) const;
  // Version `version` of model `name` (0: the newest served). NotFound for
  // an unknown model or a version not served (naming those served);
  // Unavailable for a model with no version loaded.
  absl::StatusOr<std::shared_ptr<const ServedModel>> Resolve(
      const std::string& name, int64_t version) const;
  // The versions of model `name` served, ascending; empty for an unknown
  // model.
  std::vector<int64_t> ServedVersions(const std::string& name) const;
  // The models' names, sorted.
  std::vector<std::string> names() const;
  // True when every model has a version served.
  bool ready() const;

  // Polls every `interval` on a thread of its own until StopPolling,
  // printing models added and removed, versions swapped, and each new error
  // to stderr.
  void StartPolling(absl::Duration interval);
  void StopPolling();

 private:
  void PollLoop(absl::Duration interval);
  // Applies `sources`: new models made (not loaded), removed ones dropped,
  // policies updated. Returns the models added.
  std::vector<std::shared_ptr<ModelManager>> Apply(
      const std::vector<ModelSource>& sources)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(poll_mutex_);

  const ModelSourceList sources_;
  const PredictorOptions options_;
  ServeMetrics* const metrics_;

  // One poll at a time.
  std::mutex poll_mutex_;
  mutable Mutex mutex_;
  std::map<std::string, std::shared_ptr<ModelManager>> models_
      ABSL_GUARDED_BY(mutex_);

  std::thread poller_;
  std::mutex stop_mutex_;
  std::condition_variable stop_signal_;
  bool stop_ = false;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_REPOSITORY_H_
