// The gRPC front of `scopeflow serve` (`--grpc_port`), on one port:
//   tensorflow.serving.PredictionService  Predict, GetModelMetadata
//     (TensorFlow Serving's clients: proto/tfserving)
//   inference.GRPCInferenceService         ServerLive, ServerReady,
//     ModelReady, ServerMetadata, ModelMetadata, ModelInfer
//     (KServe v2's and Triton's clients: proto/kserve)
// over the models of a ModelRepository, run as the REST endpoints run them
// (tools/serve_predict.h's RunServedModel). Errors carry the gRPC code of
// the absl::Status (INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE...) and its
// message.
#ifndef SCOPEFLOW_TOOLS_SERVE_GRPC_H_
#define SCOPEFLOW_TOOLS_SERVE_GRPC_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tools/serve_repository.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace scopeflow {

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
  // `models` must outlive the server.
  GrpcServer(const ModelRepository& models, GrpcServerOptions options);
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
  std::unique_ptr<TfServingService> tfserving_;
  std::unique_ptr<KServeService> kserve_;
  // Guards server_ between Start and Stop.
  std::mutex mutex_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_GRPC_H_
