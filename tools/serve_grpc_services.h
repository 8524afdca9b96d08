// The two gRPC services of GrpcServer (tools/serve_grpc.h); each runs on
// gRPC's threads, any number of calls at once, reading the repository only.
#ifndef SCOPEFLOW_TOOLS_SERVE_GRPC_SERVICES_H_
#define SCOPEFLOW_TOOLS_SERVE_GRPC_SERVICES_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"
#include "proto/kserve/grpc_predict_v2.grpc.pb.h"
#include "proto/tfserving/prediction_service.grpc.pb.h"
#include "tools/serve_admission.h"
#include "tools/serve_batcher.h"
#include "tools/serve_grpc.h"
#include "tools/serve_repository.h"

namespace scopeflow {

// The gRPC status of `status`: the same code (absl's codes are gRPC's) and
// message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// How the calls that run a model are admitted and run, as REST requests
// are: through the server's RequestAdmission (the model's queue bound, the
// client's deadline or the server's default) and with its batcher. A
// thread of its own looks at the calls in flight every few milliseconds
// and cancels the run of each whose client cancelled or left (a
// synchronous gRPC handler learns of that only by asking).
//
// Thread-safe: Admit from any number of handlers at once; each Call is
// destroyed by the handler that made it, before the handler returns.
class GrpcCallRunner {
 public:
  // `models` and `admission` must outlive this; `batcher` may be null (no
  // batching), else must outlive this.
  GrpcCallRunner(const ModelRepository& models, RequestAdmission& admission,
                 ServeBatcher* batcher);
  // Stops the watching thread.
  ~GrpcCallRunner();
  GrpcCallRunner(const GrpcCallRunner&) = delete;
  GrpcCallRunner& operator=(const GrpcCallRunner&) = delete;

  const ModelRepository& models() const { return models_; }

  // One admitted call, watched while it lives.
  class Call {
   public:
    ~Call();
    // How its model runs (RunServedModel's context).
    PredictContext context() const;

   private:
    friend class GrpcCallRunner;
    Call(GrpcCallRunner& runner,
         std::unique_ptr<RequestAdmission::Admitted> admitted)
        : runner_(runner), admitted_(std::move(admitted)) {}

    GrpcCallRunner& runner_;
    std::unique_ptr<RequestAdmission::Admitted> admitted_;
  };

  // Admits a call for model `model` (UNAVAILABLE when its queue is full),
  // its deadline `context`'s (else the server's default), and watches
  // `context` until the Call is destroyed.
  absl::StatusOr<std::unique_ptr<Call>> Admit(grpc::ServerContext& context,
                                              const std::string& model);

 private:
  void Watch();

  const ModelRepository& models_;
  RequestAdmission& admission_;
  ServeBatcher* const batcher_;
  std::mutex mutex_;
  std::condition_variable changed_;
  // The calls in flight and their contexts.
  absl::flat_hash_map<Call*, grpc::ServerContext*> calls_;
  bool stop_ = false;
  std::thread watcher_;
};

class GrpcServer::TfServingService final
    : public tensorflow::serving::PredictionService::Service {
 public:
  explicit TfServingService(GrpcCallRunner& runner) : runner_(runner) {}

  grpc::Status Predict(grpc::ServerContext* context,
                       const tensorflow::serving::PredictRequest* request,
                       tensorflow::serving::PredictResponse* response) override;
  grpc::Status GetModelMetadata(
      grpc::ServerContext* context,
      const tensorflow::serving::GetModelMetadataRequest* request,
      tensorflow::serving::GetModelMetadataResponse* response) override;

 private:
  GrpcCallRunner& runner_;
};

class GrpcServer::KServeService final
    : public inference::GRPCInferenceService::Service {
 public:
  explicit KServeService(GrpcCallRunner& runner)
      : runner_(runner), models_(runner.models()) {}

  grpc::Status ServerLive(grpc::ServerContext* context,
                          const inference::ServerLiveRequest* request,
                          inference::ServerLiveResponse* response) override;
  grpc::Status ServerReady(grpc::ServerContext* context,
                           const inference::ServerReadyRequest* request,
                           inference::ServerReadyResponse* response) override;
  grpc::Status ModelReady(grpc::ServerContext* context,
                          const inference::ModelReadyRequest* request,
                          inference::ModelReadyResponse* response) override;
  grpc::Status ServerMetadata(
      grpc::ServerContext* context,
      const inference::ServerMetadataRequest* request,
      inference::ServerMetadataResponse* response) override;
  grpc::Status ModelMetadata(
      grpc::ServerContext* context,
      const inference::ModelMetadataRequest* request,
      inference::ModelMetadataResponse* response) override;
  grpc::Status ModelInfer(grpc::ServerContext* context,
                          const inference::ModelInferRequest* request,
                          inference::ModelInferResponse* response) override;

 private:
  GrpcCallRunner& runner_;
  const ModelRepository& models_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_GRPC_SERVICES_H_
