#include "tools/serve_batcher.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "platform/place.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Runs `inputs` alone, as one run of one request.
absl::StatusOr<std::vector<Tensor>> RunAlone(
    const Predictor& predictor, const std::vector<Feed>& inputs,
    const RunCancellation* cancellation, Clock::time_point queued,
    RunTiming& timing) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::vector<Tensor>> outputs =
      predictor.Run(inputs, cancellation);
  timing.queue_seconds = SecondsBetween(queued, start);
  timing.batch_requests = 1;
  timing.compute_seconds = SecondsBetween(start, Clock::now());
  timing.reports_run = true;
  return outputs;
}

}  // namespace

struct ServeBatcher::Request {
  const Predictor* predictor = nullptr;
  // Sorted by name, so that the requests of a batch line up.
  std::vector<Feed> inputs;
  int64_t rows = 0;
  const RunCancellation* cancellation = nullptr;
  // Where it was admitted, and under which name; null and "" when unknown.
  const RequestAdmission* admission = nullptr;
  std::string model;
  Clock::time_point enqueued;
  RunTiming timing;
  // Set under the batcher's mutex once `result` is final.
  bool done = false;
  std::condition_variable finished;
  absl::StatusOr<std::vector<Tensor>> result;
};

struct ServeBatcher::Queue {
  const Predictor* predictor = nullptr;
  std::deque<std::shared_ptr<Request>> requests;
  int64_t rows = 0;
};

ServeBatcher::ServeBatcher(BatchingOptions options) : options_(options) {
  if (options_.max_batch_size <= 1) return;
  for (int i = 0; i < std::max(1, options_.batch_threads); ++i) {
    threads_.emplace_back([this] { BatchLoop(); });
  }
}

ServeBatcher::~ServeBatcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

int64_t ServeBatcher::batches_run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return batches_run_;
}

int64_t ServeBatcher::rows_run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_run_;
}

std::string ServeBatcher::BatchKey(const Predictor& predictor,
                                   const std::vector<Feed>& inputs,
                                   int64_t* rows) const {
  // Outputs must come one row per input row to be split back.
  for (const TensorInfo& output : predictor.outputs()) {
    if (!output.has_dims || output.dims.empty() || output.dims[0] != -1) {
      return "";
    }
  }
  if (inputs.size() != predictor.inputs().size()) return "";
  std::string key = absl::StrFormat("%p", &predictor);
  *rows = -1;
  for (const Feed& feed : inputs) {
    const auto info = std::find_if(
        predictor.inputs().begin(), predictor.inputs().end(),
        [&](const TensorInfo& input) { return input.name == feed.name; });
    if (info == predictor.inputs().end()) return "";
    const Tensor& tensor = feed.tensor;
    if (!tensor.initialized() || tensor.place() != CPUPlace() ||
        tensor.dtype() != info->dtype || !info->has_dims ||
        info->dims.empty() || info->dims[0] != -1 ||
        tensor.rank() != static_cast<int>(info->dims.size()) ||
        tensor.dim(0) < 1 || (*rows >= 0 && tensor.dim(0) != *rows)) {
      return "";
    }
    for (int d = 1; d < tensor.rank(); ++d) {
      if (info->dims[d] != -1 && info->dims[d] != tensor.dim(d)) return "";
    }
    *rows = tensor.dim(0);
    absl::StrAppend(&key, ";", feed.name, ":", static_cast<int>(tensor.dtype()),
                    ":", absl::StrJoin(tensor.dims().begin() + 1,
                                       tensor.dims().end(), "x"));
  }
  return key;
}

absl::StatusOr<std::vector<Tensor>> ServeBatcher::Run(
    const Predictor& predictor, std::vector<Feed> inputs,
    const RunCancellation* cancellation, RunTiming* timing,
    const RequestAdmission* admission, absl::string_view model) {
  const Clock::time_point called = Clock::now();
  RunTiming ignored;
  if (timing == nullptr) timing = &ignored;
  std::sort(inputs.begin(), inputs.end(),
            [](const Feed& a, const Feed& b) { return a.name < b.name; });
  int64_t rows = 0;
  const std::string key = threads_.empty()
                              ? std::string()
                              : BatchKey(predictor, inputs, &rows);
  if (key.empty() || rows > options_.max_batch_size) {
    return RunAlone(predictor, inputs, cancellation, called, *timing);
  }
  auto request = std::make_shared<Request>();
  request->predictor = &predictor;
  request->inputs = std::move(inputs);
  request->rows = rows;
  request->cancellation = cancellation;
  if (admission != nullptr) {
    request->admission = admission;
    request->model = std::string(model);
  }
  request->enqueued = called;
  std::unique_lock<std::mutex> lock(mutex_);
  if (stop_) {
    return absl::UnavailableError("the batcher is shutting down");
  }
  int& queued = queued_[&predictor];
  if (queued >= options_.max_queued_requests) {
    // UNAVAILABLE, as the admission's full queue (tools/serve_admission.h).
    return absl::UnavailableError(absl::StrFormat(
        "model \"%s\" has %d requests queued for batching, the limit "
        "(--max_queued_requests); try again later",
        predictor.name(), queued));
  }
  ++queued;
  if (request->admission != nullptr) ++held_[request->model];
  std::unique_ptr<Queue>& queue = queues_[key];
  if (queue == nullptr) {
    queue = std::make_unique<Queue>();
    queue->predictor = &predictor;
  }
  queue->requests.push_back(request);
  queue->rows += rows;
  // A batch thread need only look again when there is a new oldest
  // request to time, or a full batch to run; otherwise it wakes at the
  // oldest request's timeout anyway. (Waking it for every arrival costs a
  // context switch per request, on the cores the requests need.)
  if (queue->requests.size() == 1 || queue->rows >= options_.max_batch_size) {
    work_.notify_all();
  }
  request->finished.wait(lock, [&] { return request->done; });
  if (request->admission != nullptr && --held_[request->model] == 0) {
    held_.erase(request->model);
  }
  *timing = request->timing;
  return std::move(request->result);
}

void ServeBatcher::BatchLoop() {
  const auto timeout = std::chrono::microseconds(options_.batch_timeout_micros);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (stop_) {
      for (auto& [key, queue] : queues_) {
        for (std::shared_ptr<Request>& request : queue->requests) {
          request->result =
              absl::UnavailableError("the batcher is shutting down");
          request->done = true;
          request->finished.notify_one();
        }
      }
      queues_.clear();
      return;
    }
    // The queue whose oldest request has waited longest goes first.
    auto oldest = queues_.end();
    for (auto it = queues_.begin(); it != queues_.end(); ++it) {
      if (oldest == queues_.end() || it->second->requests.front()->enqueued <
                                         oldest->second->requests.front()->enqueued) {
        oldest = it;
      }
    }
    if (oldest == queues_.end()) {
      work_.wait(lock);
      continue;
    }
    Queue& queue = *oldest->second;
    const Clock::time_point due = queue.requests.front()->enqueued + timeout;
    if (queue.rows < options_.max_batch_size && Clock::now() < due &&
        !NoneOnTheWay(queue)) {
      work_.wait_until(lock, due);
      continue;
    }
    std::vector<std::shared_ptr<Request>> batch;
    int64_t rows = 0;
    while (!queue.requests.empty() &&
           rows + queue.requests.front()->rows <= options_.max_batch_size) {
      std::shared_ptr<Request> request = std::move(queue.requests.front());
      queue.requests.pop_front();
      queue.rows -= request->rows;
      --queued_[request->predictor];
      const absl::Status live = request->cancellation != nullptr
                                    ? request->cancellation->Check()
                                    : absl::OkStatus();
      if (!live.ok()) {
        request->result = absl::Status(
            live.code(), absl::StrCat(live.message(),
                                      " while queued for a batch; it did not "
                                      "run"));
        request->done = true;
        request->finished.notify_one();
        continue;
      }
      rows += request->rows;
      batch.push_back(std::move(request));
    }
    const Predictor* predictor = queue.predictor;
    if (queue.requests.empty()) {
      if (queued_[predictor] == 0) queued_.erase(predictor);
      queues_.erase(oldest);
    }
    if (batch.empty()) continue;
    ++batches_run_;
    rows_run_ += rows;
    lock.unlock();
    RunBatch(*predictor, batch);
    lock.lock();
    for (std::shared_ptr<Request>& request : batch) request->done = true;
    // Woken after the lock is let go, so that a waiter does not wake only
    // to wait for the lock this thread holds (`batch` keeps each request,
    // and its condition variable, alive meanwhile).
    lock.unlock();
    for (std::shared_ptr<Request>& request : batch) {
      request->finished.notify_one();
    }
    lock.lock();
  }
}

bool ServeBatcher::NoneOnTheWay(const Queue& queue) const {
  const Request& oldest = *queue.requests.front();
  if (oldest.admission == nullptr) return false;
  const auto held = held_.find(oldest.model);
  return held != held_.end() &&
         oldest.admission->queued(oldest.model) <= held->second;
}

void ServeBatcher::RunBatch(const Predictor& predictor,
                            std::vector<std::shared_ptr<Request>>& batch) {
  // Each request in turn: its queue time runs until its own run starts.
  auto run_alone = [&] {
    for (std::shared_ptr<Request>& request : batch) {
      request->result =
          RunAlone(predictor, request->inputs, request->cancellation,
                   request->enqueued, request->timing);
    }
  };
  if (batch.size() == 1) return run_alone();
  int64_t rows = 0;
  for (const std::shared_ptr<Request>& request : batch) rows += request->rows;
  // Each input's rows, request after request (the key made their other
  // dimensions and dtypes equal).
  std::vector<Feed> feeds;
  for (size_t i = 0; i < batch[0]->inputs.size(); ++i) {
    const Tensor& first = batch[0]->inputs[i].tensor;
    Dims dims = first.dims();
    dims[0] = rows;
    Tensor joined;
    if (!joined.Allocate(CPUPlace(), first.dtype(), dims).ok()) {
      return run_alone();
    }
    char* to = static_cast<char*>(joined.raw_data());
    for (const std::shared_ptr<Request>& request : batch) {
      const Tensor& part = request->inputs[i].tensor;
      std::memcpy(to, part.raw_data(), part.nbytes());
      to += part.nbytes();
    }
    feeds.push_back({batch[0]->inputs[i].name, std::move(joined)});
  }
  // No request's deadline stops the batch: the others still want it.
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::vector<Tensor>> outputs =
      predictor.Run(feeds, /*cancellation=*/nullptr);
  const double compute_seconds = SecondsBetween(start, Clock::now());
  if (!outputs.ok()) return run_alone();
  for (const Tensor& output : *outputs) {
    if (output.rank() < 1 || output.dim(0) != rows) return run_alone();
  }
  int64_t row = 0;
  for (std::shared_ptr<Request>& request : batch) {
    request->timing.queue_seconds = SecondsBetween(request->enqueued, start);
    request->timing.batch_requests = static_cast<int>(batch.size());
    request->timing.compute_seconds = compute_seconds;
    request->timing.reports_run = request == batch.front();
    std::vector<Tensor> own;
    for (const Tensor& output : *outputs) {
      absl::StatusOr<Tensor> slice = output.Slice(row, row + request->rows);
      if (!slice.ok()) {
        own.clear();
        request->result = slice.status();
        break;
      }
      own.push_back(*std::move(slice));
    }
    if (!own.empty() || outputs->empty()) request->result = std::move(own);
    row += request->rows;
  }
}

absl::StatusOr<std::vector<Tensor>> RunPredictor(
    const Predictor& predictor, std::vector<Feed> inputs,
    const PredictContext& context, RunTiming* timing, absl::string_view model) {
  if (context.batcher != nullptr &&
      context.batcher->options().max_batch_size > 1) {
    return context.batcher->Run(predictor, std::move(inputs),
                                context.cancellation, timing,
                                context.admission, model);
  }
  RunTiming ignored;
  return RunAlone(predictor, inputs, context.cancellation, Clock::now(),
                  timing != nullptr ? *timing : ignored);
}

}  // namespace scopeflow
