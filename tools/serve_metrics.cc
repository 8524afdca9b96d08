#include "tools/serve_metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/allocator.h"
#include "platform/place.h"

namespace scopeflow {
namespace {

void Header(std::string& out, const char* name, const char* type,
            const char* help) {
  absl::StrAppendFormat(&out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
                        type);
}

// Prometheus label values escape backslash, quote and newline.
std::string LabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? 'n' : c;
  }
  return out;
}

// Observes `value` in a histogram of `bounds`.
template <typename Counts, typename Bounds>
void Observe(Counts& counts, const Bounds& bounds, double value) {
  const size_t bucket =
      std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  counts[bucket].fetch_add(1, std::memory_order_relaxed);
}

// The _bucket, _sum and _count lines of histogram `name` for one label set
// (`labels` without braces).
template <typename Counts, typename Bounds>
void AppendHistogram(std::string& out, const char* name,
                     const std::string& labels, const Counts& counts,
                     const Bounds& bounds, double sum) {
  int64_t cumulative = 0;
  for (size_t b = 0; b <= bounds.size(); ++b) {
    cumulative += counts[b].load(std::memory_order_relaxed);
    const std::string le = b < bounds.size() ? absl::StrCat(bounds[b]) : "+Inf";
    absl::StrAppendFormat(&out, "%s_bucket{%s,le=\"%s\"} %d\n", name, labels,
                          le, cumulative);
  }
  absl::StrAppendFormat(&out, "%s_sum{%s} %.9g\n", name, labels, sum);
  absl::StrAppendFormat(&out, "%s_count{%s} %d\n", name, labels, cumulative);
}

}  // namespace

const char* EndpointName(Endpoint endpoint) {
  switch (endpoint) {
    case Endpoint::kPredict:
      return "predict";
    case Endpoint::kMetadata:
      return "metadata";
    case Endpoint::kHealth:
      return "healthz";
    case Endpoint::kMetrics:
      return "metrics";
    case Endpoint::kOther:
      break;
  }
  return "other";
}

int64_t ResidentMemoryBytes() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  if (file == nullptr) return 0;
  long long size = 0;
  long long resident = 0;
  const int read = std::fscanf(file, "%lld %lld", &size, &resident);
  std::fclose(file);
  if (read != 2) return 0;
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

void ServeMetrics::CountResponse(Endpoint endpoint, int status) {
  MutexLock lock(&mutex_);
  ++responses_[{static_cast<int>(endpoint), status}];
}

void ServeMetrics::ObserveLatency(Endpoint endpoint, double seconds) {
  Histogram& histogram = latency_[static_cast<int>(endpoint)];
  const size_t bucket =
      std::lower_bound(kBuckets.begin(), kBuckets.end(), seconds) -
      kBuckets.begin();
  histogram.counts[bucket].fetch_add(1, std::memory_order_relaxed);
  histogram.sum_nanoseconds.fetch_add(static_cast<int64_t>(seconds * 1e9),
                                      std::memory_order_relaxed);
}

ServeMetrics::VersionStats& ServeMetrics::StatsOf(const std::string& model,
                                                  int64_t version) {
  MutexLock lock(&mutex_);
  std::unique_ptr<VersionStats>& stats = versions_[{model, version}];
  if (stats == nullptr) stats = std::make_unique<VersionStats>();
  return *stats;
}

void ServeMetrics::CountModelLoad(const std::string& model, int64_t version,
                                  bool ok) {
  (ok ? loads_ok_ : loads_failed_).fetch_add(1, std::memory_order_relaxed);
  VersionStats& stats = StatsOf(model, version);
  (ok ? stats.loads_ok : stats.loads_failed)
      .fetch_add(1, std::memory_order_relaxed);
}

void ServeMetrics::SetServedVersions(const std::string& model,
                                     std::vector<int64_t> versions) {
  MutexLock lock(&mutex_);
  served_[model] = std::move(versions);
}

void ServeMetrics::ObserveQueueTime(const std::string& model, int64_t version,
                                    double seconds) {
  Histogram& queue = StatsOf(model, version).queue;
  Observe(queue.counts, kBuckets, seconds);
  queue.sum_nanoseconds.fetch_add(static_cast<int64_t>(seconds * 1e9),
                                  std::memory_order_relaxed);
}

void ServeMetrics::ObserveBatch(const std::string& model, int64_t version,
                                int requests, double seconds) {
  VersionStats& stats = StatsOf(model, version);
  Observe(stats.batch.counts, kBatchBuckets, requests);
  stats.batch.sum.fetch_add(requests, std::memory_order_relaxed);
  Observe(stats.compute.counts, kBuckets, seconds);
  stats.compute.sum_nanoseconds.fetch_add(static_cast<int64_t>(seconds * 1e9),
                                          std::memory_order_relaxed);
}

void ServeMetrics::RenderModels(std::string& out,
                                const std::string& fallback_model,
                                int64_t fallback_version) const {
  std::map<std::string, std::vector<int64_t>> served;
  std::vector<std::pair<VersionKey, const VersionStats*>> versions;
  {
    MutexLock lock(&mutex_);
    served = served_;
    if (served.empty() && !fallback_model.empty()) {
      served[fallback_model] = {fallback_version};
    }
    for (const auto& [key, stats] : versions_) {
      versions.emplace_back(key, stats.get());
    }
  }
  Header(out, "scopeflow_model_version", "gauge",
         "The newest version served of each model.");
  for (const auto& [model, list] : served) {
    if (list.empty()) continue;
    absl::StrAppendFormat(&out, "scopeflow_model_version{model=\"%s\"} %d\n",
                          LabelValue(model), list.back());
  }
  Header(out, "scopeflow_model_version_served", "gauge",
         "1 for each version of each model being served.");
  for (const auto& [model, list] : served) {
    for (int64_t version : list) {
      absl::StrAppendFormat(
          &out,
          "scopeflow_model_version_served{model=\"%s\",version=\"%d\"} 1\n",
          LabelValue(model), version);
    }
  }
  Header(out, "scopeflow_model_version_loads_total", "counter",
         "Loads of each model version, by result; a broken version is "
         "tried once until its files change.");
  for (const auto& [key, stats] : versions) {
    for (const bool ok : {true, false}) {
      const int64_t count = (ok ? stats->loads_ok : stats->loads_failed)
                                .load(std::memory_order_relaxed);
      if (count == 0) continue;
      absl::StrAppendFormat(&out,
                            "scopeflow_model_version_loads_total{model=\"%s\","
                            "version=\"%d\",result=\"%s\"} %d\n",
                            LabelValue(key.first), key.second,
                            ok ? "ok" : "error", count);
    }
  }
  Header(out, "scopeflow_queue_duration_seconds", "histogram",
         "Time a predict waited from its inputs decoded to its run started.");
  for (const auto& [key, stats] : versions) {
    AppendHistogram(
        out, "scopeflow_queue_duration_seconds",
        absl::StrFormat("model=\"%s\",version=\"%d\"", LabelValue(key.first),
                        key.second),
        stats->queue.counts, kBuckets,
        stats->queue.sum_nanoseconds.load(std::memory_order_relaxed) * 1e-9);
  }
  Header(out, "scopeflow_batch_size", "histogram",
         "Requests computed together in one run.");
  for (const auto& [key, stats] : versions) {
    AppendHistogram(
        out, "scopeflow_batch_size",
        absl::StrFormat("model=\"%s\",version=\"%d\"", LabelValue(key.first),
                        key.second),
        stats->batch.counts, kBatchBuckets,
        static_cast<double>(stats->batch.sum.load(std::memory_order_relaxed)));
  }
  Header(out, "scopeflow_compute_duration_seconds", "histogram",
         "Time one run (one batch) of a model computed.");
  for (const auto& [key, stats] : versions) {
    AppendHistogram(
        out, "scopeflow_compute_duration_seconds",
        absl::StrFormat("model=\"%s\",version=\"%d\"", LabelValue(key.first),
                        key.second),
        stats->compute.counts, kBuckets,
        stats->compute.sum_nanoseconds.load(std::memory_order_relaxed) * 1e-9);
  }
}

std::string ServeMetrics::Render() const { return Render("", 0); }

std::string ServeMetrics::Render(const std::string& model,
                                 int64_t version) const {
  std::vector<std::pair<std::pair<int, int>, int64_t>> responses;
  {
    MutexLock lock(&mutex_);
    responses.assign(responses_.begin(), responses_.end());
  }
  std::sort(responses.begin(), responses.end());
  std::string out;
  Header(out, "scopeflow_requests_total", "counter",
         "Responses written, by endpoint and HTTP status.");
  std::array<int64_t, kNumEndpoints> errors{};
  for (const auto& [key, count] : responses) {
    absl::StrAppendFormat(
        &out, "scopeflow_requests_total{endpoint=\"%s\",code=\"%d\"} %d\n",
        EndpointName(static_cast<Endpoint>(key.first)), key.second, count);
    if (key.second >= 400) errors[key.first] += count;
  }
  Header(out, "scopeflow_request_errors_total", "counter",
         "Responses with a 4xx or 5xx status, by endpoint.");
  for (int e = 0; e < kNumEndpoints; ++e) {
    absl::StrAppendFormat(
        &out, "scopeflow_request_errors_total{endpoint=\"%s\"} %d\n",
        EndpointName(static_cast<Endpoint>(e)), errors[e]);
  }
  Header(out, "scopeflow_request_duration_seconds", "histogram",
         "Time from a request's headers read to its response made.");
  for (int e = 0; e < kNumEndpoints; ++e) {
    const Histogram& histogram = latency_[e];
    const char* endpoint = EndpointName(static_cast<Endpoint>(e));
    int64_t cumulative = 0;
    for (size_t b = 0; b <= kBuckets.size(); ++b) {
      cumulative += histogram.counts[b].load(std::memory_order_relaxed);
      const std::string le =
          b < kBuckets.size() ? absl::StrCat(kBuckets[b]) : "+Inf";
      absl::StrAppendFormat(&out,
                            "scopeflow_request_duration_seconds_bucket{"
                            "endpoint=\"%s\",le=\"%s\"} %d\n",
                            endpoint, le, cumulative);
    }
    absl::StrAppendFormat(
        &out, "scopeflow_request_duration_seconds_sum{endpoint=\"%s\"} %.9f\n",
        endpoint,
        histogram.sum_nanoseconds.load(std::memory_order_relaxed) * 1e-9);
    absl::StrAppendFormat(
        &out, "scopeflow_request_duration_seconds_count{endpoint=\"%s\"} %d\n",
        endpoint, cumulative);
  }
  Header(out, "scopeflow_requests_in_flight", "gauge",
         "Requests being handled now.");
  absl::StrAppendFormat(&out, "scopeflow_requests_in_flight %d\n", in_flight());
  Header(out, "scopeflow_resident_memory_bytes", "gauge",
         "Resident memory of the process.");
  absl::StrAppendFormat(&out, "scopeflow_resident_memory_bytes %d\n",
                        ResidentMemoryBytes());
  Header(out, "scopeflow_tensor_memory_bytes", "gauge",
         "Bytes of tensors allocated on the CPU and not yet freed.");
  const absl::StatusOr<AllocatorStats> stats = GetAllocatorStats(CPUPlace());
  absl::StrAppendFormat(&out, "scopeflow_tensor_memory_bytes %d\n",
                        stats.ok() ? stats->bytes_in_use : 0);
  Header(out, "scopeflow_model_loads_total", "counter",
         "Model versions loaded, by result.");
  absl::StrAppendFormat(&out,
                        "scopeflow_model_loads_total{result=\"ok\"} %d\n"
                        "scopeflow_model_loads_total{result=\"error\"} %d\n",
                        loads_ok_.load(), loads_failed_.load());
  RenderModels(out, model, version);
  return out;
}

}  // namespace scopeflow
