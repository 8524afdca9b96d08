#include "tools/serve_grpc.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "grpcpp/grpcpp.h"
#include "tools/serve_grpc_services.h"

namespace scopeflow {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

GrpcServer::GrpcServer(const ModelRepository& models, GrpcServerOptions options,
                       RequestAdmission* admission, ServeBatcher* batcher)
    : options_(std::move(options)) {
  if (admission == nullptr) {
    own_admission_ = std::make_unique<RequestAdmission>(AdmissionOptions());
    admission = own_admission_.get();
  }
  runner_ = std::make_unique<GrpcCallRunner>(models, *admission, batcher);
  tfserving_ = std::make_unique<TfServingService>(*runner_);
  kserve_ = std::make_unique<KServeService>(*runner_);
}

GrpcServer::~GrpcServer() { Stop(absl::ZeroDuration()); }

absl::Status GrpcServer::Start() {
  std::lock_guard<std::mutex> lock(mutex_);
  grpc::ServerBuilder builder;
  // An IPv6 literal needs brackets in a gRPC address.
  const std::string host = options_.host.find(':') != std::string::npos
                               ? absl::StrCat("[", options_.host, "]")
                               : options_.host;
  builder.AddListeningPort(absl::StrCat(host, ":", options_.port),
                           grpc::InsecureServerCredentials(), &port_);
  // gRPC shares a port with whoever else listens on it unless told not
  // to: a second server would silently take half the calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<int64_t>(options_.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(INT32_MAX);
  builder.RegisterService(tfserving_.get());
  builder.RegisterService(kserve_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    server_.reset();
    return absl::UnavailableError(absl::StrFormat(
        "cannot serve gRPC on %s port %d: the port is taken or the host is "
        "not an address of this machine",
        options_.host, options_.port));
  }
  return absl::OkStatus();
}

void GrpcServer::Stop(absl::Duration grace) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoNanoseconds(grace));
  server_->Wait();
  server_.reset();
}

}  // namespace scopeflow
