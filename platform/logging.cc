#include "platform/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace scopeflow {
namespace {

// The environment's threshold, or kLogInfo where it is unset or malformed
// (a malformed one is reported once, at the first message).
int ThresholdFromEnvironment() {
  const char* text = std::getenv("SCOPEFLOW_LOG_LEVEL");
  if (text == nullptr || *text == '\0') return kLogInfo;
  absl::StatusOr<int> level = ParseLogLevel(text);
  if (!level.ok()) {
    std::fprintf(stderr, "scopeflow: warning: SCOPEFLOW_LOG_LEVEL: %s\n",
                 std::string(level.status().message()).c_str());
    return kLogInfo;
  }
  return *level;
}

std::atomic<int>& Threshold() {
  static std::atomic<int> threshold(ThresholdFromEnvironment());
  return threshold;
}

absl::Mutex sink_mutex(absl::kConstInit);
LogSink* sink ABSL_GUARDED_BY(sink_mutex) = nullptr;

}  // namespace

int LogLevelThreshold() { return Threshold().load(std::memory_order_relaxed); }

void SetLogLevel(int level) {
  Threshold().store(level, std::memory_order_relaxed);
}

absl::StatusOr<int> ParseLogLevel(absl::string_view text) {
  const std::string name = absl::AsciiStrToLower(text);
  int number = 0;
  if (absl::SimpleAtoi(name, &number) && number >= 0) return number;
  if (name == "error") return kLogError;
  if (name == "warning") return kLogWarning;
  if (name == "info") return kLogInfo;
  if (name == "debug") return kLogDebug;
  return absl::InvalidArgumentError(absl::StrCat(
      "log level \"", text,
      "\" is none of error, warning, info, debug or a number >= 0"));
}

void WriteLog(int level, absl::string_view message) {
  std::string line;
  if (level == kLogError) {
    line = absl::StrCat("scopeflow: error: ", message);
  } else if (level == kLogWarning) {
    line = absl::StrCat("scopeflow: warning: ", message);
  } else {
    line = std::string(message);
  }
  if (line.empty() || (line.back() != '\n' && line.back() != '\r')) {
    line += '\n';
  }
  absl::MutexLock lock(&sink_mutex);
  if (sink != nullptr) {
    (*sink)(level, line);
    return;
  }
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void SetLogSink(LogSink new_sink) {
  absl::MutexLock lock(&sink_mutex);
  delete sink;
  sink = new_sink ? new LogSink(std::move(new_sink)) : nullptr;
}

}  // namespace scopeflow
