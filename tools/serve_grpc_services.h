// The two gRPC services of GrpcServer (tools/serve_grpc.h); each runs on
// gRPC's threads, any number of calls at once, reading the repository only.
#ifndef SCOPEFLOW_TOOLS_SERVE_GRPC_SERVICES_H_
#define SCOPEFLOW_TOOLS_SERVE_GRPC_SERVICES_H_

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"
#include "proto/kserve/grpc_predict_v2.grpc.pb.h"
#include "proto/tfserving/prediction_service.grpc.pb.h"
#include "tools/serve_grpc.h"
#include "tools/serve_repository.h"

namespace scopeflow {

// The gRPC status of `status`: the same code (absl's codes are gRPC's) and
// message.
grpc::Status ToGrpcStatus(const absl::Status& status);

class GrpcServer::TfServingService final
    : public tensorflow::serving::PredictionService::Service {
 public:
  explicit TfServingService(const ModelRepository& models) : models_(models) {}

  grpc::Status Predict(grpc::ServerContext* context,
                       const tensorflow::serving::PredictRequest* request,
                       tensorflow::serving::PredictResponse* response) override;
  grpc::Status GetModelMetadata(
      grpc::ServerContext* context,
      const tensorflow::serving::GetModelMetadataRequest* request,
      tensorflow::serving::GetModelMetadataResponse* response) override;

 private:
  const ModelRepository& models_;
};

class GrpcServer::KServeService final
    : public inference::GRPCInferenceService::Service {
 public:
  explicit KServeService(const ModelRepository& models) : models_(models) {}

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
  const ModelRepository& models_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_GRPC_SERVICES_H_
