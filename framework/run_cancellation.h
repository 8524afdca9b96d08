// A way to stop a run before it ends: a flag that any thread may raise, and
// a deadline. The executor checks it before each op and at the start of
// every block a control-flow op runs (each loop iteration), so a cancelled
// or expired run stops within one op's time with CANCELLED or
// DEADLINE_EXCEEDED naming the op it stopped before.
#ifndef SCOPEFLOW_FRAMEWORK_RUN_CANCELLATION_H_
#define SCOPEFLOW_FRAMEWORK_RUN_CANCELLATION_H_

#include <atomic>
#include <chrono>

#include "absl/status/status.h"

namespace scopeflow {

// The caller owns it and keeps it alive until the run it is given to
// returns. Cancel may be called from any thread at any time; the deadline is
// set before the run starts (set_deadline is not thread-safe against Check).
class RunCancellation {
 public:
  using Clock = std::chrono::steady_clock;

  RunCancellation() = default;
  explicit RunCancellation(Clock::time_point deadline) : deadline_(deadline) {}
  RunCancellation(const RunCancellation&) = delete;
  RunCancellation& operator=(const RunCancellation&) = delete;

  // Makes every later Check fail with CANCELLED.
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

  void set_deadline(Clock::time_point deadline) { deadline_ = deadline; }
  Clock::time_point deadline() const { return deadline_; }
  bool has_deadline() const { return deadline_ != Clock::time_point::max(); }

  // OK while the run may go on; CANCELLED after Cancel; DEADLINE_EXCEEDED
  // once the deadline has passed.
  absl::Status Check() const {
    if (cancelled()) return absl::CancelledError("the run was cancelled");
    if (has_deadline() && Clock::now() >= deadline_) {
      return absl::DeadlineExceededError("the run passed its deadline");
    }
    return absl::OkStatus();
  }

 private:
  std::atomic<bool> cancelled_{false};
  Clock::time_point deadline_ = Clock::time_point::max();
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_RUN_CANCELLATION_H_
