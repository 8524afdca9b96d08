// Dynamic batching for `scopeflow serve`: predict requests for the same
// model version and signature (input names, dtypes and every dimension but
// the first) wait in a queue, and a batch thread runs up to max_batch_size
// rows of them as one run, concatenated along dimension 0, once the batch
// is full or its oldest request has waited batch_timeout_micros; each
// request gets its own rows of the outputs back. Throughput on a model
// whose ops cost little more for 32 rows than for 1 grows with the batch;
// the price is up to batch_timeout_micros of latency, paid only while
// another request may join: a request whose model has no other request
// admitted and on its way to the batcher (RequestAdmission, tools/
// serve_admission.h, counts them) runs at once when a batch thread is free,
// since waiting could only add latency.
//
// A request that cannot join a batch (its inputs do not match the model's
// declared dtypes and shapes, a model whose outputs are not per row, more
// rows than max_batch_size) runs alone and fails or succeeds alone; when a
// batch run fails, its requests are run again one by one, so one bad
// request never fails the others. Requests cancelled or past their
// deadline while queued leave the queue without running.
#ifndef SCOPEFLOW_TOOLS_SERVE_BATCHER_H_
#define SCOPEFLOW_TOOLS_SERVE_BATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/executor.h"
#include "framework/run_cancellation.h"
#include "framework/serving/predictor.h"
#include "framework/tensor.h"
#include "tools/serve_admission.h"

namespace scopeflow {

struct BatchingOptions {
  // The most rows a batch runs; 1 or less turns batching off.
  int max_batch_size = 0;
  // How long the oldest request of a batch waits for others.
  int64_t batch_timeout_micros = 1000;
  // Batches run at once (one per thread).
  int batch_threads = 1;
  // Requests queued per model version; more get UNAVAILABLE (503).
  int max_queued_requests = 256;
};

// Where one request's time went, for the metrics (ServeMetrics'
// ObserveQueueTime and ObserveBatch).
struct RunTiming {
  // From Run being called to the run that computed the request starting.
  double queue_seconds = 0;
  // Requests computed together in that run; 0 when the request never ran
  // (refused, or cancelled while queued).
  int batch_requests = 0;
  // How long that run took.
  double compute_seconds = 0;
  // True for one request of each run, so that runs are counted once.
  bool reports_run = false;
};

// Thread-safe: Run may be called from any number of threads. The
// destructor fails requests still queued with UNAVAILABLE and joins the
// batch threads; no Run may start after it begins.
class ServeBatcher {
 public:
  explicit ServeBatcher(BatchingOptions options);
  ~ServeBatcher();
  ServeBatcher(const ServeBatcher&) = delete;
  ServeBatcher& operator=(const ServeBatcher&) = delete;

  const BatchingOptions& options() const { return options_; }

  // Runs `inputs` on `predictor` in a batch with other requests and returns
  // this request's outputs, as predictor.Run(inputs) would. Blocks until
  // then; `predictor` and `cancellation` (may be null) must outlive the
  // call. Fills `timing` (may be null). With `admission` (may be null, else
  // must outlive the call), `model` is the name it admitted the request
  // under: once every request of `model` it holds is in the batcher, the
  // batch runs without waiting out the timeout.
  absl::StatusOr<std::vector<Tensor>> Run(
      const Predictor& predictor, std::vector<Feed> inputs,
      const RunCancellation* cancellation, RunTiming* timing = nullptr,
      const RequestAdmission* admission = nullptr,
      absl::string_view model = {});

  // Batches run so far and the rows they held (for tests and metrics).
  int64_t batches_run() const;
  int64_t rows_run() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Request;
  struct Queue;

  // The queue key of `inputs`: empty when they cannot join a batch.
  std::string BatchKey(const Predictor& predictor,
                       const std::vector<Feed>& inputs, int64_t* rows) const;
  void BatchLoop();
  // Whether no request of `queue`'s model is admitted but not yet in the
  // batcher (so none may join its batch soon).
  bool NoneOnTheWay(const Queue& queue) const;
  // Runs `batch` as one run and fills each request's result.
  void RunBatch(const Predictor& predictor,
                std::vector<std::shared_ptr<Request>>& batch);

  const BatchingOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  absl::flat_hash_map<std::string, std::unique_ptr<Queue>> queues_;
  // Requests queued per predictor.
  absl::flat_hash_map<const Predictor*, int> queued_;
  // Requests in the batcher (queued or running) per admitted model name.
  absl::flat_hash_map<std::string, int> held_;
  bool stop_ = false;
  int64_t batches_run_ = 0;
  int64_t rows_run_ = 0;
  std::vector<std::thread> threads_;
};

// How a predict request runs its model: with its cancellation, and through
// `batcher` when there is one.
struct PredictContext {
  const RunCancellation* cancellation = nullptr;
  ServeBatcher* batcher = nullptr;
  // Where the request was admitted (ServeBatcher::Run's `admission`); may
  // be null.
  const RequestAdmission* admission = nullptr;
};

// Runs `inputs` on `predictor` as `context` says; fills `timing` (may be
// null). `model` is the name the request was admitted under.
absl::StatusOr<std::vector<Tensor>> RunPredictor(const Predictor& predictor,
                                                 std::vector<Feed> inputs,
                                                 const PredictContext& context,
                                                 RunTiming* timing = nullptr,
                                                 absl::string_view model = {});

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_BATCHER_H_
