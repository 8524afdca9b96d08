// One model of `scopeflow serve`: its folder of versions and the versions
// being served.
//
// Layout: MODEL_DIR/VERSION/ for each version, VERSION a positive decimal
// integer (read as a number: "0010" is version 10), holding
//   model.pb or model.pbtxt   the net (binary or text NetDef)
//   params                    its parameters (framework/param_io.h);
//                             absent for a net without parameters
// The model's name is MODEL_DIR's last component unless a config names it.
// The version policy picks the versions served (by default the newest one
// that loads); a newer one appearing later is loaded beside the served ones
// and swapped in, and requests already running finish on the old one.
#ifndef SCOPEFLOW_TOOLS_SERVE_MODELS_H_
#define SCOPEFLOW_TOOLS_SERVE_MODELS_H_

#include <condition_variable>
#include <cstdint>
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

namespace scopeflow {

struct ServedModel {
  std::string name;
  int64_t version = 0;
  Predictor predictor;
  // Where runs of this version are counted (tools/serve_predict.h's
  // RunServedModel); null: nowhere. Not owned.
  ServeMetrics* metrics = nullptr;
};

// Which versions of a model are served (TensorFlow Serving's
// ServableVersionPolicy).
struct VersionPolicy {
  // The `latest` newest versions that load (a version that fails to load is
  // skipped for the next older one).
  int latest = 1;
  // Every version in the folder; overrides `latest`.
  bool all = false;
  // Non-empty: exactly these versions, those that exist and load;
  // overrides `latest` and `all`.
  std::vector<int64_t> specific;
};

// The name of the model in `model_dir`: its last component ("mlp" for
// "models/mlp/").
std::string ModelNameOfFolder(const std::string& model_dir);

// The versions under `model_dir`, ascending: the folders named by a
// positive integer (other entries are ignored). An error if `model_dir` is
// not a readable folder.
absl::StatusOr<std::vector<int64_t>> ListModelVersions(
    const std::string& model_dir);

// The folder of version `version` under `model_dir`, whatever leading zeros
// its name has. NotFound if there is none; InvalidArgument naming both if
// two folders ("10" and "010") are the same version.
absl::StatusOr<std::string> FindVersionFolder(const std::string& model_dir,
                                              int64_t version);

// Loads version `version` of the model in `model_dir`, named `name` (""
// for MODEL_DIR's last component). Errors name the folder: no net file,
// both net files, a net or parameter file that does not load.
absl::StatusOr<std::unique_ptr<ServedModel>> LoadModelVersion(
    const std::string& model_dir, int64_t version,
    const PredictorOptions& options, const std::string& name = "");

// What GET /v1/models/NAME reports of a version (TensorFlow Serving's
// ModelVersionStatus): AVAILABLE once served, END after it failed to load
// (with the error) or was unloaded.
struct VersionState {
  int64_t version = 0;
  bool available = false;
  // The load error of a version that failed; OK otherwise.
  absl::Status error;
};

// Holds the versions served and swaps new ones in. A version that fails to
// load is remembered with its files' sizes and times, and not tried again
// (nor counted again in the failed-load metric) until one of them changes.
// Start-up and polling treat a broken version alike: the policy's next
// version that loads is served, and the broken one is reported.
//
// Thread-safe: every method may be called from any thread; loads are
// serialized, and readers never wait for a load.
class ModelManager {
 public:
  // `metrics` (may be null, else must outlive this) counts the loads and
  // the runs. `name` "" is MODEL_DIR's last component.
  ModelManager(std::string model_dir, PredictorOptions options,
               ServeMetrics* metrics, VersionPolicy policy = {},
               std::string name = "");
  // Stops polling.
  ~ModelManager();
  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  const std::string& name() const { return name_; }
  const std::string& model_dir() const { return model_dir_; }

  // The first load: an error naming the folder if there is no version, or
  // if none of the versions the policy names loads. A broken version beside
  // one that loads is reported on stderr and in versions(), not an error.
  absl::Status LoadNewest();

  // Loads what the policy names and is not loaded or known broken, swaps it
  // in and unloads the versions no longer named (never the last one
  // served); returns whether the versions served changed. The error of a
  // version that failed to load in this poll, if any (the others are
  // applied all the same).
  absl::StatusOr<bool> Poll();

  // Changes the policy; the next Poll applies it.
  void SetPolicy(VersionPolicy policy);

  // The newest version served (null before one loads). Holding it keeps it
  // alive across a swap.
  std::shared_ptr<const ServedModel> current() const;
  // Version `version` if it is served, else null.
  std::shared_ptr<const ServedModel> version(int64_t version) const;
  // The versions served, ascending.
  std::vector<int64_t> served_versions() const;
  // Every version served or known broken, ascending.
  std::vector<VersionState> versions() const;

  // Polls every `interval` on a thread of its own until StopPolling,
  // printing each swap, and each new error, to stderr.
  void StartPolling(absl::Duration interval);
  void StopPolling();

 private:
  // A version that failed to load: the error, and its folder's files then.
  struct Failure {
    std::string fingerprint;
    absl::Status error;
  };

  void PollLoop(absl::Duration interval);
  // The versions the policy names, newest first, among `present`.
  std::vector<int64_t> Candidates(const std::vector<int64_t>& present) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(load_mutex_);
  // Tries `version` unless known broken with the same files; records and
  // counts a new failure. Null when it is broken.
  std::shared_ptr<const ServedModel> TryLoad(int64_t version,
                                             absl::Status& new_error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(load_mutex_);

  const std::string model_dir_;
  const std::string name_;
  const PredictorOptions options_;
  ServeMetrics* const metrics_;

  // One load at a time; held across a load, not by readers of served_.
  std::mutex load_mutex_;
  VersionPolicy policy_ ABSL_GUARDED_BY(load_mutex_);
  std::map<int64_t, Failure> failures_ ABSL_GUARDED_BY(load_mutex_);
  mutable Mutex mutex_;
  std::map<int64_t, std::shared_ptr<const ServedModel>> served_
      ABSL_GUARDED_BY(mutex_);
  // Copies of failures_ for readers, who must not wait for a load.
  std::map<int64_t, absl::Status> broken_ ABSL_GUARDED_BY(mutex_);

  // The poll thread and what wakes it to stop.
  std::thread poller_;
  std::mutex stop_mutex_;
  std::condition_variable stop_signal_;
  bool stop_ = false;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_MODELS_H_
