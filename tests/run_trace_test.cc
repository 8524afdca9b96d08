// RunOptions::trace: the JSON a traced run writes parses back with one
// complete event per op, its kernel nested in it, on the running thread.
#include "framework/run_trace.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "framework/cuda_test_util.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "platform/status_macros.h"
#include "tests/relu_softmax_net.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;


absl::Status RunTraced(const Place& place, RunTrace& trace, int runs) {
  SF_ASSIGN_OR_RETURN(NetDef net, ParseNetText(kReluSoftmaxNet));
  ExecutorOptions options = ExecutorOptions::AsWritten();
  options.run.trace = &trace;
  const Executor executor(options);
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, executor.Prepare(net, 0, place));
  Scope scope;
  const std::vector<Feed> feeds = {
      {"x", MakeTensor<float>({4, 3}, std::vector<float>(12, 0.5f))},
      {"w", MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6})}};
  for (int i = 0; i < runs; ++i) {
    SF_RETURN_IF_ERROR(executor.Run(prepared, scope, feeds, {"out"}).status());
  }
  return absl::OkStatus();
}

std::vector<nlohmann::json> EventsOf(const nlohmann::json& trace,
                                     const std::string& category) {
  std::vector<nlohmann::json> events;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    if (event.value("cat", "") == category) events.push_back(event);
  }
  return events;
}

TEST(RunTraceTest, OneCompleteEventPerOpWithItsKernelInside) {
  RunTrace trace;
  ASSERT_TRUE(RunTraced(CPUPlace(), trace, 2).ok());
  const nlohmann::json json = nlohmann::json::parse(trace.ToJson());
  EXPECT_EQ(json.at("displayTimeUnit"), "ms");
  const std::vector<nlohmann::json> ops = EventsOf(json, "op");
  const std::vector<nlohmann::json> kernels = EventsOf(json, "kernel");
  ASSERT_EQ(ops.size(), 6u);
  ASSERT_EQ(kernels.size(), 6u);
  std::vector<std::string> names;
  for (size_t i = 0; i < ops.size(); ++i) {
    const nlohmann::json& op = ops[i];
    names.push_back(op.at("name").get<std::string>());
    EXPECT_EQ(op.at("ph"), "X");
    EXPECT_EQ(op.at("tid"), 1);
    EXPECT_EQ(op.at("args").at("index"), static_cast<int>(i % 3));
    const double ts = op.at("ts"), dur = op.at("dur");
    const double kts = kernels[i].at("ts"), kdur = kernels[i].at("dur");
    EXPECT_GE(ts, 0);
    EXPECT_LE(ts, kts);
    EXPECT_LE(kts + kdur, ts + dur + 1e-3);
    EXPECT_NEAR(double(op.at("args").at("kernel_us")) +
                    double(op.at("args").at("framework_us")),
                dur, 1e-3);
    if (i > 0) {  // in order, one after the other
      const double previous_end =
          double(ops[i - 1].at("ts")) + double(ops[i - 1].at("dur"));
      EXPECT_GE(ts, previous_end - 1e-3);
    }
  }
  EXPECT_THAT(names, ElementsAre("matmul", "relu", "softmax", "matmul", "relu",
                                 "softmax"));
  EXPECT_EQ(ops[0].at("args").at("output"), "xw");
  EXPECT_THAT(ops[0].at("args").at("inputs").get<std::vector<std::string>>(),
              ElementsAre("x: float32 [4, 3]", "w: float32 [3, 2]"));
  EXPECT_THAT(ops[2].at("args").at("inputs").get<std::vector<std::string>>(),
              ElementsAre("h: float32 [4, 2]"));
  // The thread's two tracks are named; nothing was copied on the CPU.
  int named = 0;
  for (const nlohmann::json& event : json.at("traceEvents")) {
    if (event.at("ph") == "M") ++named;
  }
  EXPECT_EQ(named, 2);
  EXPECT_TRUE(EventsOf(json, "copy").empty());
}

TEST(RunTraceTest, EachThreadGetsItsOwnTrack) {
  RunTrace trace;
  std::thread other(
      [&trace] { ASSERT_TRUE(RunTraced(CPUPlace(), trace, 1).ok()); });
  other.join();
  ASSERT_TRUE(RunTraced(CPUPlace(), trace, 1).ok());
  const nlohmann::json json = nlohmann::json::parse(trace.ToJson());
  std::vector<int> tids;
  for (const nlohmann::json& op : EventsOf(json, "op")) {
    tids.push_back(op.at("tid").get<int>());
  }
  EXPECT_THAT(tids, ElementsAre(1, 1, 1, 2, 2, 2));
}

TEST(RunTraceTest, NothingIsRecordedWithoutATrace) {
  EXPECT_EQ(RunOptions().trace, nullptr);
  RunTrace trace;
  EXPECT_EQ(trace.size(), 0u);
  const nlohmann::json json = nlohmann::json::parse(trace.ToJson());
  EXPECT_TRUE(json.at("traceEvents").empty());
}

TEST(RunTraceTest, WritesAFileThatParses) {
  RunTrace trace;
  ASSERT_TRUE(RunTraced(CPUPlace(), trace, 1).ok());
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/trace.json";
  ASSERT_TRUE(trace.WriteJson(path).ok());
  std::ifstream file(path);
  const nlohmann::json json = nlohmann::json::parse(file);
  EXPECT_EQ(EventsOf(json, "op").size(), 3u);
}

// On a GPU, an op without a CUDA kernel runs on host copies: the copies
// are on the thread's copy track.
TEST(RunTraceTest, HostDeviceCopiesOnTheirOwnTrack) {
  SF_REQUIRE_CUDA();
  RunTrace trace;
  ASSERT_TRUE(RunTraced(CUDAPlace(0), trace, 1).ok());
  const nlohmann::json json = nlohmann::json::parse(trace.ToJson());
  EXPECT_EQ(EventsOf(json, "op").size(), 3u);
  for (const nlohmann::json& copy : EventsOf(json, "copy")) {
    EXPECT_EQ(copy.at("tid"), 1 + kCopyTrackOffset);
  }
}

}  // namespace
}  // namespace scopeflow
