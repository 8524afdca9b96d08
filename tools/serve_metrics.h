// What `scopeflow serve` counts, and its GET /metrics page in Prometheus'
// text format: responses by endpoint and status, errors, a latency
// histogram per endpoint, requests in flight, memory, model version and
// loads.
#ifndef SCOPEFLOW_TOOLS_SERVE_METRICS_H_
#define SCOPEFLOW_TOOLS_SERVE_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

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
  // A model version was loaded, or failed to.
  void CountModelLoad(bool ok);

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

  // The exposition, with the gauges read now; `model` and `version` label
  // the model served.
  std::string Render(const std::string& model, int64_t version) const;

 private:
  struct Histogram {
    std::array<std::atomic<int64_t>, kBuckets.size() + 1> counts{};
    std::atomic<int64_t> sum_nanoseconds{0};
  };

  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> loads_ok_{0};
  std::atomic<int64_t> loads_failed_{0};
  std::array<Histogram, kNumEndpoints> latency_;
  mutable Mutex mutex_;
  // (endpoint, status) -> responses.
  absl::flat_hash_map<std::pair<int, int>, int64_t> responses_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_METRICS_H_
