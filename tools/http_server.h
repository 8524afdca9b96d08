// The HTTP front of `scopeflow serve` (cpp-httplib):
//   POST /v1/models/NAME:predict   JSON or PredictRequest body
//   GET  /v1/models/NAME           the model's inputs, outputs and version
//   GET  /healthz                  200 once a model is loaded
//   GET  /metrics                  Prometheus text (tools/serve_metrics.h)
// Every error is a 4xx or 5xx with a JSON body {"error": "..."} naming it.
#ifndef SCOPEFLOW_TOOLS_HTTP_SERVER_H_
#define SCOPEFLOW_TOOLS_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "tools/serve_metrics.h"
#include "tools/serve_models.h"

namespace scopeflow {

struct HttpServerOptions {
  // 127.0.0.1 keeps the server off the network unless asked.
  std::string host = "127.0.0.1";
  // 0: any free port (port() says which).
  int port = 8500;
  // Requests handled at once: each thread reads a request, runs the model
  // and writes the reply. A keep-alive connection holds its thread for up
  // to keep_alive_requests requests.
  int threads = 2;
  int keep_alive_requests = 100;
  // Larger bodies get 413 without being read.
  size_t max_body_bytes = size_t{64} << 20;
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
  int port() const { return port_; }

  // Accepts and serves until Stop, then returns once every request being
  // handled has had its reply. Connections accepted but not yet read are
  // closed unanswered.
  absl::Status Serve();

  // Stops accepting and makes Serve return. Thread-safe; idempotent.
  void Stop();

 private:
  class Listener;
  void Route();

  ModelManager& models_;
  ServeMetrics& metrics_;
  const HttpServerOptions options_;
  std::unique_ptr<Listener> server_;
  int port_ = 0;
  std::atomic<bool> serving_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_SERVER_H_
