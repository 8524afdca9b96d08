#include "tools/serve_admission.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scopeflow {

RequestAdmission::Admitted::~Admitted() { admission_.Release(queue_); }

RequestAdmission::RequestAdmission(AdmissionOptions options)
    : options_(options) {}

absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>>
RequestAdmission::Admit(const std::string& queue, Clock::time_point arrived,
                        int64_t asked_ms) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int& queued = queued_[queue];
    if (queued >= options_.max_queued_requests) {
      const int held = queued;
      if (held == 0) queued_.erase(queue);
      return absl::UnavailableError(absl::StrFormat(
          "%d requests%s are queued already, the limit "
          "(--max_queued_requests); try again later",
          held,
          queue.empty() ? "" : absl::StrCat(" for model \"", queue, "\"")));
    }
    ++queued;
  }
  // Made after the place is taken, so that its destructor gives it back.
  std::unique_ptr<Admitted> admitted(new Admitted(*this, queue));
  admitted->timeout_ms_ = asked_ms > 0 ? asked_ms : options_.request_timeout_ms;
  if (admitted->timeout_ms_ > 0) {
    admitted->cancellation_.set_deadline(
        arrived + std::chrono::milliseconds(admitted->timeout_ms_));
  }
  return admitted;
}

int RequestAdmission::queued(const std::string& queue) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = queued_.find(queue);
  return it == queued_.end() ? 0 : it->second;
}

void RequestAdmission::Release(const std::string& queue) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = queued_.find(queue);
  if (it != queued_.end() && --it->second <= 0) queued_.erase(it);
}

}  // namespace scopeflow
