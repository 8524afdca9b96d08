// The HTTP front of `scopeflow serve`: ServeApi's endpoints (every model
// of a ModelRepository in TensorFlow Serving's REST API and KServe v2's,
// tools/serve_api.h) on the event-driven transport of
// tools/http_transport.h.
//
// Where requests run: GET /healthz, /metrics and /v2/health/* on the I/O
// thread (they answer even while every worker is busy); requests under
// /v1/models/NAME and /v2/models/NAME on a worker, in model NAME's bounded
// queue (503 when full); any other path on the I/O thread (ServeApi
// answers those without running a model). ServeApi alone decides 404 and
// 405: every route takes every method.
//
// Every error is a 4xx or 5xx with a JSON body {"error": "..."} naming it.
// A request may carry X-Request-Timeout-Ms: past it, its run stops (504);
// a client that disconnects cancels its run. With batching on
// (BatchingOptions), predict and infer requests run in batches
// (tools/serve_batcher.h).
#ifndef SCOPEFLOW_TOOLS_HTTP_SERVER_H_
#define SCOPEFLOW_TOOLS_HTTP_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "tools/http_router.h"
#include "tools/http_transport.h"
#include "tools/serve_admission.h"
#include "tools/serve_api.h"
#include "tools/serve_batcher.h"
#include "tools/serve_metrics.h"
#include "tools/serve_repository.h"

namespace scopeflow {

// The transport's settings (address, threads, limits, timeouts), and
// batching.
struct HttpServerOptions : HttpTransportOptions {
  BatchingOptions batching;
};

class HttpServer {
 public:
  // Both must outlive the server.
  HttpServer(const ModelRepository& models, ServeMetrics& metrics,
             HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens: connections queue from here on. An error naming the
  // address if it is taken or invalid.
  absl::Status Bind();
  // The port bound (after Bind).
  int port() const { return transport_->port(); }

  // Serves until Stop, then answers the requests begun (within the drain
  // timeout), refuses later ones with 503, and returns.
  absl::Status Serve();

  // Stops accepting and makes Serve return once drained. Thread-safe;
  // idempotent.
  void Stop();

  // The batcher of predict requests (runs nothing while batching is off),
  // and the admission of model requests (from options'
  // max_queued_requests and request_timeout_ms); a GrpcServer shares both,
  // so that a model's queue bound and batches hold across protocols.
  ServeBatcher& batcher() const { return *batcher_; }
  RequestAdmission& admission() const { return *admission_; }

 private:
  void Route();
  // Hands `req` to ServeApi and writes its reply into `res`.
  void Handle(const HttpRequest& req, HttpResponse& res);

  ServeMetrics& metrics_;
  // Options with the worker threads raised so that a batch can fill (see
  // the constructor).
  HttpServerOptions options_;
  std::unique_ptr<ServeBatcher> batcher_;
  std::unique_ptr<RequestAdmission> admission_;
  ServeApi api_;
  HttpRouter router_;
  std::unique_ptr<HttpTransport> transport_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_SERVER_H_
