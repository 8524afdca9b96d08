#include "tools/http_server.h"

#include <algorithm>
#include <utility>

#include "tools/serve_kserve_rest.h"
#include "tools/serve_predict.h"

namespace scopeflow {
namespace {

// With batching on, a worker thread waits while its request is in a
// batch: a batch can only fill with as many requests as there are workers
// to wait, so there are at least enough for the batch being filled and the
// ones running.
HttpServerOptions WithBatchWorkers(HttpServerOptions options) {
  const BatchingOptions& batching = options.batching;
  if (batching.max_batch_size > 1) {
    options.threads =
        std::max(options.threads, batching.max_batch_size *
                                      (std::max(1, batching.batch_threads) + 1));
  }
  return options;
}

}  // namespace

HttpServer::HttpServer(const ModelRepository& models, ServeMetrics& metrics,
                       HttpServerOptions options)
    : metrics_(metrics),
      options_(WithBatchWorkers(std::move(options))),
      batcher_(std::make_unique<ServeBatcher>(options_.batching)),
      admission_(std::make_unique<RequestAdmission>(AdmissionOptions{
          options_.max_queued_requests, options_.request_timeout_ms})),
      api_(models, metrics) {
  Route();
  transport_ = std::make_unique<HttpTransport>(
      router_, options_,
      [this](const HttpRequest& req, const HttpResponse& res, double seconds) {
        const Endpoint endpoint = EndpointOfPath(req.path);
        metrics_.CountResponse(endpoint, res.status);
        metrics_.ObserveLatency(endpoint, seconds);
      },
      admission_.get());
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(const HttpRequest& req, HttpResponse& res) {
  const ServeMetrics::InFlight in_flight(metrics_);
  ApiRequest request;
  request.method = req.method;
  request.path = req.path;
  request.content_type = req.get_header_value("Content-Type");
  request.inference_header_length =
      req.get_header_value(kInferenceHeaderLength);
  request.body = req.body;
  request.context.cancellation = req.cancellation;
  request.context.batcher = batcher_.get();
  request.context.admission = admission_.get();
  HttpReply reply = api_.Handle(request);
  res.status = reply.status;
  res.content_type = std::move(reply.content_type);
  // A HEAD reply has no body (its Content-Length says 0).
  if (req.method != "HEAD") res.body = std::move(reply.body);
  for (auto& [name, value] : reply.headers) {
    res.set_header(std::move(name), std::move(value));
  }
}

void HttpServer::Route() {
  auto handle = [this](const HttpRequest& req, HttpResponse& res) {
    Handle(req, res);
  };
  // First match wins: health and metrics on the I/O thread, then each
  // model's requests in its own queue (group 1 is the model's name).
  router_.Any("/healthz|/metrics|/v2/health/[^/]*", HandlerThread::kIoThread,
              handle);
  router_.Any(R"(/v1/models/([^/:]+)([/:].*)?)", HandlerThread::kWorker,
              handle, /*model_group=*/1);
  router_.Any(R"(/v2/models/([^/]+)(/.*)?)", HandlerThread::kWorker, handle,
              /*model_group=*/1);
  router_.Any(".*", HandlerThread::kIoThread, handle);
}

absl::Status HttpServer::Bind() { return transport_->Bind(); }

absl::Status HttpServer::Serve() { return transport_->Serve(); }

void HttpServer::Stop() { transport_->Stop(); }

}  // namespace scopeflow
