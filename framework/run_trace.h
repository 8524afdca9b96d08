// RunTrace: what the executor's runs did, op by op, as Chrome trace event
// JSON (the format chrome://tracing and ui.perfetto.dev open).
//
//   RunTrace trace;
//   ExecutorOptions options;
//   options.run.trace = &trace;
//   ... Executor(options).Run(...) ...
//   SF_RETURN_IF_ERROR(trace.WriteJson("run.json"));
//
// Each op becomes a complete event ("ph": "X") on the thread that ran it,
// named after the op's type, with the op's index, first output and input
// shapes in its args, and a nested "kernel" event for the kernel alone (the
// rest of the op's time is the framework's: inference, allocation,
// freeing). Copies between host and device the executor makes for an op
// go on a track of their own per thread. Owned by the caller, who keeps it
// alive while runs use it; thread-safe: any number of runs may record into
// one trace at once.
#ifndef SCOPEFLOW_FRAMEWORK_RUN_TRACE_H_
#define SCOPEFLOW_FRAMEWORK_RUN_TRACE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace scopeflow {

class RunTrace {
 public:
  using Clock = std::chrono::steady_clock;

  // What one op of a run did, from the executor.
  struct OpEvent {
    std::string type;
    // The op's index in its block as written, and the variable it writes
    // first ("" for none).
    int index = 0;
    std::string output;
    // One "name: dtype [dims]" per input variable, in slot order.
    std::vector<std::string> inputs;
    Clock::time_point start;
    Clock::time_point end;
    // The kernel call within [start, end].
    Clock::time_point kernel_start;
    Clock::time_point kernel_end;
  };

  // A copy between host and device: `what` names it ("inputs of conv2d
  // to the host").
  struct CopyEvent {
    std::string what;
    Clock::time_point start;
    Clock::time_point end;
  };

  RunTrace() : origin_(Clock::now()) {}

  // Record what they are given (kept as given; JSON is made by ToJson).
  void AddOp(OpEvent op);
  void AddCopy(CopyEvent copy);

  // Events recorded so far.
  size_t size() const;

  // The trace as JSON: {"traceEvents": [...], "displayTimeUnit": "ms"},
  // times in microseconds from the trace's creation.
  std::string ToJson() const;
  // Writes ToJson() to `path` atomically.
  absl::Status WriteJson(const std::string& path) const;

 private:
  // One event of the trace: an op (with `op`), a kernel, a copy, or a
  // track's name (category "").
  struct Event {
    std::string name;
    std::string category;
    int64_t tid = 0;
    double ts_us = 0;
    double dur_us = 0;
    std::optional<OpEvent> op;
  };

  // The calling thread's number in this trace (1, 2, ... in order of first
  // appearance), with a track name event for each new one.
  int64_t ThreadNumber() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  double Micros(Clock::time_point t) const;

  const Clock::time_point origin_;
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<std::thread::id, int64_t> threads_
      ABSL_GUARDED_BY(mutex_);
  std::vector<Event> events_ ABSL_GUARDED_BY(mutex_);
};

// Copies go on track ThreadNumber + kCopyTrackOffset of the thread doing
// them.
inline constexpr int64_t kCopyTrackOffset = 1000;

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_RUN_TRACE_H_
