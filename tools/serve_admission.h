// Admission of the requests of `scopeflow serve` that run a model, one
// place for every protocol: the HTTP transport admits its model routes here
// (tools/http_transport.h), the gRPC services their calls
// (tools/serve_grpc.h). Each request takes a place in its model's bounded
// queue, which it holds until answered, and gets the RunCancellation of its
// run, with its deadline: the one its client asked for (X-Request-Timeout-Ms,
// a gRPC deadline), else the server's default (--request_timeout_ms). The
// run itself goes through RunServedModel (tools/serve_predict.h), alone or
// in a batch, with that cancellation.
//
// A full queue is UNAVAILABLE (HTTP 503): TensorFlow Serving's batch queues
// and Triton's max_queue_size both answer UNAVAILABLE, the code gRPC's
// retry policies treat as "try again later" (RESOURCE_EXHAUSTED means a
// quota the caller used up, which retrying soon does not help).
#ifndef SCOPEFLOW_TOOLS_SERVE_ADMISSION_H_
#define SCOPEFLOW_TOOLS_SERVE_ADMISSION_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "framework/run_cancellation.h"

namespace scopeflow {

struct AdmissionOptions {
  // Requests of one model admitted and not yet answered; more are refused.
  int max_queued_requests = 256;
  // The deadline of a request whose client asks for none, from its
  // arrival; 0: none.
  int64_t request_timeout_ms = 0;
};

// Thread-safe: Admit may be called from any thread; an Admitted may be
// released (destroyed) on any thread. The RequestAdmission must outlive
// every Admitted it made.
class RequestAdmission {
 public:
  using Clock = RunCancellation::Clock;

  // One admitted request: its place in its queue, given back when this is
  // destroyed, and its run's cancellation, which whoever learns that the
  // client left may Cancel.
  class Admitted {
   public:
    ~Admitted();
    Admitted(const Admitted&) = delete;
    Admitted& operator=(const Admitted&) = delete;

    RunCancellation& cancellation() { return cancellation_; }
    // The deadline's distance from the arrival in milliseconds; 0: none.
    int64_t timeout_ms() const { return timeout_ms_; }

   private:
    friend class RequestAdmission;
    Admitted(RequestAdmission& admission, std::string queue)
        : admission_(admission), queue_(std::move(queue)) {}

    RequestAdmission& admission_;
    const std::string queue_;
    RunCancellation cancellation_;
    int64_t timeout_ms_ = 0;
  };

  explicit RequestAdmission(AdmissionOptions options);
  RequestAdmission(const RequestAdmission&) = delete;
  RequestAdmission& operator=(const RequestAdmission&) = delete;

  const AdmissionOptions& options() const { return options_; }

  // Admits a request for model `queue` ("" for requests of no model) that
  // arrived at `arrived`, its client asking for a deadline `asked_ms` after
  // that (0: none asked, the server's default applies). UNAVAILABLE naming
  // the model and the limit when its queue is full.
  absl::StatusOr<std::unique_ptr<Admitted>> Admit(const std::string& queue,
                                                  Clock::time_point arrived,
                                                  int64_t asked_ms);

  // Requests of `queue` admitted and not yet released.
  int queued(const std::string& queue) const;

 private:
  void Release(const std::string& queue);

  const AdmissionOptions options_;
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, int> queued_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_ADMISSION_H_
