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

void ServeMetrics::CountModelLoad(bool ok) {
  (ok ? loads_ok_ : loads_failed_).fetch_add(1, std::memory_order_relaxed);
}

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
  Header(out, "scopeflow_model_version", "gauge",
         "The version of the model being served.");
  absl::StrAppendFormat(&out, "scopeflow_model_version{model=\"%s\"} %d\n",
                        LabelValue(model), version);
  Header(out, "scopeflow_model_loads_total", "counter",
         "Model versions loaded, by result.");
  absl::StrAppendFormat(&out,
                        "scopeflow_model_loads_total{result=\"ok\"} %d\n"
                        "scopeflow_model_loads_total{result=\"error\"} %d\n",
                        loads_ok_.load(), loads_failed_.load());
  return out;
}

}  // namespace scopeflow
