#include "tools/serve_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ServeMetricsTest, CountsResponsesAndErrorsByEndpoint) {
  ServeMetrics metrics;
  metrics.CountResponse(Endpoint::kPredict, 200);
  metrics.CountResponse(Endpoint::kPredict, 200);
  metrics.CountResponse(Endpoint::kPredict, 400);
  metrics.CountResponse(Endpoint::kOther, 404);
  const std::string page = metrics.Render("mlp", 2);
  EXPECT_THAT(page, HasSubstr("# TYPE scopeflow_requests_total counter\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_requests_total{endpoint=\"predict\","
                              "code=\"200\"} 2\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_requests_total{endpoint=\"predict\","
                              "code=\"400\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_request_errors_total{endpoint="
                              "\"predict\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_request_errors_total{endpoint="
                              "\"other\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_request_errors_total{endpoint="
                              "\"healthz\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_model_version{model=\"mlp\"} 2\n"));
}

TEST(ServeMetricsTest, LatencyHistogramIsCumulative) {
  ServeMetrics metrics;
  metrics.ObserveLatency(Endpoint::kPredict, 0.00005);  // <= 0.0001
  metrics.ObserveLatency(Endpoint::kPredict, 0.0003);   // <= 0.0005
  metrics.ObserveLatency(Endpoint::kPredict, 7);        // +Inf only
  const std::string page = metrics.Render("m", 1);
  const std::string bucket =
      "scopeflow_request_duration_seconds_bucket{endpoint=\"predict\",le=";
  EXPECT_THAT(page, HasSubstr(bucket + "\"0.0001\"} 1\n"));
  EXPECT_THAT(page, HasSubstr(bucket + "\"0.00025\"} 1\n"));
  EXPECT_THAT(page, HasSubstr(bucket + "\"0.0005\"} 2\n"));
  EXPECT_THAT(page, HasSubstr(bucket + "\"2.5\"} 2\n"));
  EXPECT_THAT(page, HasSubstr(bucket + "\"+Inf\"} 3\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_request_duration_seconds_count{"
                              "endpoint=\"predict\"} 3\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_request_duration_seconds_sum{"
                              "endpoint=\"predict\"} 7.000350000\n"));
}

TEST(ServeMetricsTest, GaugesInFlightMemoryAndLoads) {
  ServeMetrics metrics;
  {
    ServeMetrics::InFlight a(metrics);
    ServeMetrics::InFlight b(metrics);
    EXPECT_THAT(metrics.Render("m", 1),
                HasSubstr("scopeflow_requests_in_flight 2\n"));
  }
  EXPECT_EQ(metrics.in_flight(), 0);
  metrics.CountModelLoad("m", 1, true);
  metrics.CountModelLoad("m", 2, false);
  metrics.CountModelLoad("n", 1, true);
  const std::string page = metrics.Render("m", 1);
  EXPECT_THAT(page, HasSubstr("scopeflow_requests_in_flight 0\n"));
  EXPECT_THAT(page,
              HasSubstr("scopeflow_model_loads_total{result=\"ok\"} 2\n"));
  EXPECT_THAT(page,
              HasSubstr("scopeflow_model_loads_total{result=\"error\"} 1\n"));
  EXPECT_GT(ResidentMemoryBytes(), 1 << 20);
  EXPECT_THAT(page, Not(HasSubstr("scopeflow_resident_memory_bytes 0\n")));
}

TEST(ServeMetricsTest, CountsPerModelVersion) {
  ServeMetrics metrics;
  metrics.SetServedVersions("a", {1, 3});
  metrics.SetServedVersions("b", {7});
  metrics.CountModelLoad("a", 2, false);
  metrics.ObserveQueueTime("a", 3, 0.0003);
  metrics.ObserveBatch("a", 3, 1, 0.002);
  metrics.ObserveBatch("a", 3, 5, 0.004);
  metrics.ObserveBatch("b", 7, 300, 0.5);
  // The fallback model of Render's arguments is not reported once the
  // versions served are.
  const std::string page = metrics.Render("legacy", 9);
  EXPECT_THAT(page, Not(HasSubstr("legacy")));
  EXPECT_THAT(page, HasSubstr("scopeflow_model_version{model=\"a\"} 3\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_model_version{model=\"b\"} 7\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_model_version_served{model=\"a\","
                              "version=\"1\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_model_version_loads_total{model="
                              "\"a\",version=\"2\",result=\"error\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_queue_duration_seconds_bucket{model="
                              "\"a\",version=\"3\",le=\"0.0001\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_queue_duration_seconds_bucket{model="
                              "\"a\",version=\"3\",le=\"0.0005\"} 1\n"));
  // Batches of 1 and 5: one in the bucket up to 1, both by 8.
  EXPECT_THAT(page, HasSubstr("scopeflow_batch_size_bucket{model=\"a\","
                              "version=\"3\",le=\"1\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_batch_size_bucket{model=\"a\","
                              "version=\"3\",le=\"4\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_batch_size_bucket{model=\"a\","
                              "version=\"3\",le=\"8\"} 2\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_batch_size_sum{model=\"a\","
                              "version=\"3\"} 6\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_batch_size_bucket{model=\"b\","
                              "version=\"7\",le=\"256\"} 0\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_batch_size_bucket{model=\"b\","
                              "version=\"7\",le=\"+Inf\"} 1\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_compute_duration_seconds_count{model="
                              "\"a\",version=\"3\"} 2\n"));
  EXPECT_THAT(page, HasSubstr("scopeflow_compute_duration_seconds_sum{model="
                              "\"a\",version=\"3\"} 0.006\n"));
  // An unloaded model has no version gauge.
  metrics.SetServedVersions("b", {});
  EXPECT_THAT(metrics.Render(),
              Not(HasSubstr("scopeflow_model_version{model=\"b\"}")));
}

TEST(ServeMetricsTest, EscapesLabelValues) {
  ServeMetrics metrics;
  EXPECT_THAT(metrics.Render("a\"b\\c", 1),
              HasSubstr("scopeflow_model_version{model=\"a\\\"b\\\\c\"} 1\n"));
}

}  // namespace
}  // namespace scopeflow
