// GrpcCallRunner (tools/serve_grpc_services.h): gRPC calls admitted, given
// their deadlines and cancelled as REST requests are.
#include <algorithm>
#include <chrono>
#include <utility>

#include "tools/serve_grpc_services.h"

namespace scopeflow {
namespace {

// How often the calls in flight are asked whether their clients left: a
// cancelled run stops within this and one op's time.
constexpr auto kWatchInterval = std::chrono::milliseconds(5);

// The deadline of `context` in milliseconds from now, rounded up; 0 when
// the client set none.
int64_t DeadlineMs(const grpc::ServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return 0;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(
      deadline - std::chrono::system_clock::now());
  // Already past: the run stops before its first op.
  return std::max<int64_t>(1, left.count());
}

}  // namespace

GrpcCallRunner::GrpcCallRunner(const ModelRepository& models,
                               RequestAdmission& admission,
                               ServeBatcher* batcher)
    : models_(models),
      admission_(admission),
      batcher_(batcher),
      watcher_([this] { Watch(); }) {}

GrpcCallRunner::~GrpcCallRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  watcher_.join();
}

GrpcCallRunner::Call::~Call() {
  std::lock_guard<std::mutex> lock(runner_.mutex_);
  runner_.calls_.erase(this);
}

PredictContext GrpcCallRunner::Call::context() const {
  return PredictContext{&admitted_->cancellation(), runner_.batcher_,
                        &runner_.admission_};
}

absl::StatusOr<std::unique_ptr<GrpcCallRunner::Call>> GrpcCallRunner::Admit(
    grpc::ServerContext& context, const std::string& model) {
  absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> admitted =
      admission_.Admit(model, RequestAdmission::Clock::now(),
                       DeadlineMs(context));
  if (!admitted.ok()) return admitted.status();
  std::unique_ptr<Call> call(new Call(*this, *std::move(admitted)));
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first = calls_.empty();
    calls_[call.get()] = &context;
  }
  // The watcher sleeps only while there is no call; otherwise it looks
  // every kWatchInterval anyway.
  if (first) changed_.notify_all();
  return call;
}

void GrpcCallRunner::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (calls_.empty()) {
      changed_.wait(lock);
      continue;
    }
    changed_.wait_for(lock, kWatchInterval);
    // A Call leaves calls_ under mutex_ before its handler returns, so each
    // context here is alive; IsCancelled is safe from any thread in the
    // synchronous API.
    for (auto& [call, context] : calls_) {
      if (context->IsCancelled()) call->admitted_->cancellation().Cancel();
    }
  }
}

}  // namespace scopeflow
