// The model directory of `scopeflow serve` and the version being served.
//
// Layout: MODEL_DIR/VERSION/ for each version, VERSION a positive decimal
// integer, holding
//   model.pb or model.pbtxt   the net (binary or text NetDef)
//   params                    its parameters (framework/param_io.h);
//                             absent for a net without parameters
// The model's name is MODEL_DIR's last component. The newest (highest)
// version is served; a newer one appearing later is loaded beside it and
// swapped in, and requests already running finish on the old one.
#ifndef SCOPEFLOW_TOOLS_SERVE_MODELS_H_
#define SCOPEFLOW_TOOLS_SERVE_MODELS_H_

#include <condition_variable>
#include <cstdint>
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
};

// The versions under `model_dir`, ascending: the folders named by a
// positive integer (other entries are ignored). An error if `model_dir` is
// not a readable folder.
absl::StatusOr<std::vector<int64_t>> ListModelVersions(
    const std::string& model_dir);

// Loads version `version` of the model in `model_dir`. Errors name the
// folder: no net file, both net files, a net or parameter file that does
// not load.
absl::StatusOr<std::unique_ptr<ServedModel>> LoadModelVersion(
    const std::string& model_dir, int64_t version,
    const PredictorOptions& options);

// Holds the version served and swaps newer ones in. Thread-safe.
class ModelManager {
 public:
  // `metrics` (may be null) counts the loads.
  ModelManager(std::string model_dir, PredictorOptions options,
               ServeMetrics* metrics);
  // Stops polling.
  ~ModelManager();
  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  // The model's name (MODEL_DIR's last component).
  const std::string& name() const { return name_; }

  // Loads the newest version; an error naming the folder if there is none
  // or it does not load.
  absl::Status LoadNewest();

  // Loads the newest version if it is newer than the one served, and swaps
  // it in; returns whether it did. On an error the old version stays.
  absl::StatusOr<bool> Poll();

  // The version being served (null before LoadNewest). Holding it keeps it
  // alive across a swap.
  std::shared_ptr<const ServedModel> current() const;

  // Polls every `interval` on a thread of its own until StopPolling,
  // printing each swap, and each new error, to stderr.
  void StartPolling(absl::Duration interval);
  void StopPolling();

 private:
  void PollLoop(absl::Duration interval);

  const std::string model_dir_;
  const std::string name_;
  const PredictorOptions options_;
  ServeMetrics* const metrics_;

  // One load at a time; held across a load, not by readers of current_.
  std::mutex load_mutex_;
  mutable Mutex mutex_;
  std::shared_ptr<const ServedModel> current_ ABSL_GUARDED_BY(mutex_);
  // The last poll error printed, so that a broken version is reported once.
  std::string last_error_;

  // The poll thread and what wakes it to stop.
  std::thread poller_;
  std::mutex stop_mutex_;
  std::condition_variable stop_signal_;
  bool stop_ = false;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_MODELS_H_
