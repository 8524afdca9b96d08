// The HTTP front of `scopeflow serve`, on the event-driven transport of
// tools/http_transport.h:
//   POST /v1/models/NAME:predict   JSON or PredictRequest body (a worker)
//   GET  /v1/models/NAME           the model's inputs, outputs and version
//   GET  /healthz                  200 once a model is loaded (I/O thread)
//   GET  /metrics                  Prometheus text (I/O thread)
// Every error is a 4xx or 5xx with a JSON body {"error": "..."} naming it.
// A predict request may carry X-Request-Timeout-Ms: past it, its run stops
// (504); with batching on (BatchingOptions), predict requests run in
// batches (tools/serve_batcher.h).
#ifndef SCOPEFLOW_TOOLS_HTTP_SERVER_H_
#define SCOPEFLOW_TOOLS_HTTP_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "tools/http_router.h"
#include "tools/http_transport.h"
#include "tools/serve_batcher.h"
#include "tools/serve_metrics.h"
#include "tools/serve_models.h"

namespace scopeflow {

// The transport's settings (address, threads, limits, timeouts), and
// batching.
struct HttpServerOptions : HttpTransportOptions {
  BatchingOptions batching;
};

class HttpServer {
 public:
  // `models` must have a model loaded; both must outlive the server.
  HttpServer(ModelManager& models, ServeMetrics& metrics,
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

  // The batcher of predict requests (runs nothing while batching is off).
  const ServeBatcher& batcher() const { return *batcher_; }

 private:
  void Route();

  ModelManager& models_;
  ServeMetrics& metrics_;
  // Options with the worker threads raised so that a batch can fill (see
  // the constructor).
  HttpServerOptions options_;
  std::unique_ptr<ServeBatcher> batcher_;
  HttpRouter router_;
  std::unique_ptr<HttpTransport> transport_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_SERVER_H_
