// What `scopeflow serve` counts, and its GET /metrics page in Prometheus'
// text format: responses by endpoint and status, errors, a latency
// histogram per endpoint, requests in flight, memory, the versions served
// and loads per model; and per model version, where a predict's time goes:
// waiting in a queue, the size of the batch it ran in, and computing.
#ifndef SCOPEFLOW_TOOLS_SERVE_METRICS_H_
#define SCOPEFLOW_TOOLS_SERVE_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "platform/mutex.h"

namespace scopeflow {

enum class Endpoint { kPredict, kMetadata, kHealth, kMetrics, kOther };
inline constexpr int kNumEndpoints = 5;

// "predict", "metadata", "healthz", "metrics", "other".
const char* EndpointName(Endpoint endpoint);

// The process's resident memory in bytes (from /proc/self/statm); 0 if
// unreadable.
int64_t ResidentMemoryBytes();

// Thread-safe: every method may be called from any number of threads.
class ServeMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds (+Inf follows).
  static constexpr std::array<double, 14> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};

  // A response was written.
  void CountResponse(Endpoint endpoint, int status);
  // A request of `endpoint` took `seconds`, from its headers read to its
  // response made.
  void ObserveLatency(Endpoint endpoint, double seconds);
  // Upper bounds of the batch size buckets (+Inf follows).
  static constexpr std::array<double, 9> kBatchBuckets = {1,  2,  4,   8,  16,
                                                          32, 64, 128, 256};

  // Version `version` of `model` was loaded, or failed to (once per
  // attempt: a version known broken is not tried again).
  void CountModelLoad(const std::string& model, int64_t version, bool ok);
  // The versions of `model` served now (empty: the model was unloaded).
  void SetServedVersions(const std::string& model,
                         std::vector<int64_t> versions);
  // A predict on version `version` of `model` waited `seconds` from its
  // inputs decoded to its run started.
  void ObserveQueueTime(const std::string& model, int64_t version,
                        double seconds);
  // A run of `model` computed `requests` requests together (1 without
  // batching) in `seconds`.
  void ObserveBatch(const std::string& model, int64_t version, int requests,
                    double seconds);

  // Counts a request in flight for its lifetime.
  class InFlight {
   public:
    explicit InFlight(ServeMetrics& metrics) : metrics_(metrics) {
      metrics_.in_flight_.fetch_add(1, std::memory_order_relaxed);
    }
    ~InFlight() { metrics_.in_flight_.fetch_sub(1, std::memory_order_relaxed); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    ServeMetrics& metrics_;
  };

  int64_t in_flight() const {
    return in_flight_.load(std::memory_order_relaxed);
  }

  // The exposition, with the gauges read now.
  std::string Render() const;
  // The same; `model` and `version` stand for the versions served until
  // SetServedVersions reports any ("": none).
  std::string Render(const std::string& model, int64_t version) const;

 private:
  struct Histogram {
    std::array<std::atomic<int64_t>, kBuckets.size() + 1> counts{};
    std::atomic<int64_t> sum_nanoseconds{0};
  };
  struct BatchHistogram {
    std::array<std::atomic<int64_t>, kBatchBuckets.size() + 1> counts{};
    std::atomic<int64_t> sum{0};
  };
  // What is counted of one version of one model.
  struct VersionStats {
    Histogram queue;
    Histogram compute;
    BatchHistogram batch;
    std::atomic<int64_t> loads_ok{0};
    std::atomic<int64_t> loads_failed{0};
  };
  using VersionKey = std::pair<std::string, int64_t>;

  // Made on first use; never removed, so the reference stays valid.
  VersionStats& StatsOf(const std::string& model, int64_t version);
  void RenderModels(std::string& out, const std::string& fallback_model,
                    int64_t fallback_version) const;

  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> loads_ok_{0};
  std::atomic<int64_t> loads_failed_{0};
  std::array<Histogram, kNumEndpoints> latency_;
  mutable Mutex mutex_;
  // (endpoint, status) -> responses.
  absl::flat_hash_map<std::pair<int, int>, int64_t> responses_
      ABSL_GUARDED_BY(mutex_);
  std::map<VersionKey, std::unique_ptr<VersionStats>> versions_
      ABSL_GUARDED_BY(mutex_);
  std::map<std::string, std::vector<int64_t>> served_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_METRICS_H_
