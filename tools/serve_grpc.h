// The gRPC front of `scopeflow serve` (`--grpc_port`), on one port:
//   tensorflow.serving.PredictionService  Predict, GetModelMetadata
//     (TensorFlow Serving's clients: proto/tfserving)
//   inference.GRPCInferenceService         ServerLive, ServerReady,
//     ModelReady, ServerMetadata, ModelMetadata, ModelInfer
//     (KServe v2's and Triton's clients: proto/kserve)
// over the models of a ModelRepository, admitted and run as the REST
// endpoints' requests are: through a RequestAdmission (tools/
// serve_admission.h; shared with the HTTP server, so a model's queue bound
// counts both), the client's deadline, else the server's default, as the
// run's deadline, a call the client cancelled or left stopping its run, and
// through the batcher when batching is on (tools/serve_predict.h's
// RunServedModel). Errors carry the gRPC code of the absl::Status
// (INVALID_ARGUMENT, NOT_FOUND, DEADLINE_EXCEEDED, UNAVAILABLE for a full
// queue...) and its message.
#ifndef SCOPEFLOW_TOOLS_SERVE_GRPC_H_
#define SCOPEFLOW_TOOLS_SERVE_GRPC_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tools/serve_admission.h"
#include "tools/serve_batcher.h"
#include "tools/serve_repository.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace scopeflow {

class GrpcCallRunner;

struct GrpcServerOptions {
  std::string host = "127.0.0.1";
  // 0: any free port (port() says which).
  int port = 8500;
  // Larger requests are refused (RESOURCE_EXHAUSTED).
  int64_t max_message_bytes = int64_t{64} << 20;
};

// Start and Stop may be called from any thread, Stop more than once; the
// services run on gRPC's own threads.
class GrpcServer {
 public:
  // `models`, and `admission` and `batcher` when given, must outlive the
  // server. Null `admission`: one of its own with AdmissionOptions'
  // defaults; null `batcher`: no batching.
  GrpcServer(const ModelRepository& models, GrpcServerOptions options,
             RequestAdmission* admission = nullptr,
             ServeBatcher* batcher = nullptr);
  // Stops the server.
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Binds and serves; Unavailable naming the address if it cannot listen.
  absl::Status Start();
  // The port bound (after Start).
  int port() const { return port_; }

  // Refuses new calls, lets those in flight finish for up to `grace`, then
  // cancels the rest and returns.
  void Stop(absl::Duration grace = absl::Seconds(5));

 private:
  class TfServingService;
  class KServeService;

  const GrpcServerOptions options_;
  std::unique_ptr<RequestAdmission> own_admission_;
  std::unique_ptr<GrpcCallRunner> runner_;
  std::unique_ptr<TfServingService> tfserving_;
  std::unique_ptr<KServeService> kserve_;
  // Guards server_ between Start and Stop.
  std::mutex mutex_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_GRPC_H_
