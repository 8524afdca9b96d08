#include "tools/http_server.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/serve_json.h"
#include "tools/serve_predict.h"

namespace scopeflow {
namespace {

constexpr char kEndpoints[] =
    "GET /healthz, GET /metrics, GET /v1/models/NAME, "
    "POST /v1/models/NAME:predict";

Endpoint EndpointOf(const std::string& path) {
  if (path == "/healthz") return Endpoint::kHealth;
  if (path == "/metrics") return Endpoint::kMetrics;
  if (absl::StartsWith(path, "/v1/models/")) {
    return absl::EndsWith(path, ":predict") ? Endpoint::kPredict
                                            : Endpoint::kMetadata;
  }
  return Endpoint::kOther;
}

void Send(HttpReply reply, HttpResponse& res) {
  res.status = reply.status;
  res.content_type = std::move(reply.content_type);
  res.body = std::move(reply.body);
}

HttpReply UnknownModel(const std::string& asked, const ServedModel& model) {
  return ErrorReply(absl::NotFoundError(absl::StrFormat(
      "unknown model \"%s\" (this server serves \"%s\")", asked, model.name)));
}

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

HttpServer::HttpServer(ModelManager& models, ServeMetrics& metrics,
                       HttpServerOptions options)
    : models_(models),
      metrics_(metrics),
      options_(WithBatchWorkers(std::move(options))),
      batcher_(std::make_unique<ServeBatcher>(options_.batching)) {
  Route();
  transport_ = std::make_unique<HttpTransport>(
      router_, options_,
      [this](const HttpRequest& req, const HttpResponse& res, double seconds) {
        const Endpoint endpoint = EndpointOf(req.path);
        metrics_.CountResponse(endpoint, res.status);
        metrics_.ObserveLatency(endpoint, seconds);
      });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route() {
  router_.set_endpoints_hint(kEndpoints);
  router_.Post(
      R"(/v1/models/([^/:]+):predict)",
      [this](const HttpRequest& req, HttpResponse& res) {
        const ServeMetrics::InFlight in_flight(metrics_);
        const std::shared_ptr<const ServedModel> model = models_.current();
        if (req.matches[1] != model->name) {
          return Send(UnknownModel(req.matches[1], *model), res);
        }
        res.set_header("X-Model-Version", absl::StrCat(model->version));
        PredictContext context;
        context.cancellation = req.cancellation;
        context.batcher = batcher_.get();
        Send(Predict(*model, req.get_header_value("Content-Type"), req.body,
                     context),
             res);
      },
      /*model_group=*/1);
  router_.Get(R"(/v1/models/([^/:]+))", [this](const HttpRequest& req,
                                              HttpResponse& res) {
    const ServeMetrics::InFlight in_flight(metrics_);
    const std::shared_ptr<const ServedModel> model = models_.current();
    if (req.matches[1] != model->name) {
      return Send(UnknownModel(req.matches[1], *model), res);
    }
    HttpReply reply;
    reply.body = ModelMetadataJson(model->name, model->version,
                                   model->predictor.inputs(),
                                   model->predictor.outputs());
    Send(std::move(reply), res);
  });
  router_.Get(
      "/healthz",
      [this](const HttpRequest&, HttpResponse& res) {
        const ServeMetrics::InFlight in_flight(metrics_);
        const std::shared_ptr<const ServedModel> model = models_.current();
        HttpReply reply;
        reply.body = HealthJson(model->name, model->version);
        Send(std::move(reply), res);
      },
      HandlerThread::kIoThread);
  router_.Get(
      "/metrics",
      [this](const HttpRequest&, HttpResponse& res) {
        const ServeMetrics::InFlight in_flight(metrics_);
        const std::shared_ptr<const ServedModel> model = models_.current();
        HttpReply reply;
        reply.content_type = "text/plain; version=0.0.4";
        reply.body = metrics_.Render(model->name, model->version);
        Send(std::move(reply), res);
      },
      HandlerThread::kIoThread);
}

absl::Status HttpServer::Bind() { return transport_->Bind(); }

absl::Status HttpServer::Serve() { return transport_->Serve(); }

void HttpServer::Stop() { transport_->Stop(); }

}  // namespace scopeflow
