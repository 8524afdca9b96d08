// scopeflow serve MODEL_DIR: the model of MODEL_DIR (layout in
// tools/serve_models.h) over HTTP (endpoints in tools/http_server.h), and
// with --grpc_port over gRPC (tools/serve_grpc.h); or the models of a
// config file or repository root (tools/serve_repository.h).
#ifndef SCOPEFLOW_TOOLS_SERVE_COMMAND_H_
#define SCOPEFLOW_TOOLS_SERVE_COMMAND_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace scopeflow {

struct ServeCommandOptions {
  // Exactly one of these says which models are served: one model folder,
  // a TensorFlow Serving model config file, or a root whose every folder is
  // a model.
  std::string model_dir;
  std::string model_config_file;
  std::string model_repository;
  // The port of the gRPC services; -1: none, 0: any free one.
  int grpc_port = -1;
  std::string host = "127.0.0.1";
  // 0: any free port (printed at start).
  int port = 8500;
  // Worker threads running model requests; 0: one per core.
  int threads = 0;
  // Requests a keep-alive connection may make before the server closes it.
  int keep_alive_requests = 100;
  // Deadline of a request without X-Request-Timeout-Ms; 0: none.
  int64_t request_timeout_ms = 0;
  // What SIGTERM lets requests in flight take before cancelling them.
  int64_t drain_timeout_ms = 10000;
  // Requests per model waiting for or holding a worker; 503 beyond.
  int max_queued_requests = 256;
  // Idle keep-alive connections close after this; a request must arrive
  // whole within request_read_timeout_ms of its first byte (408).
  int64_t idle_timeout_ms = 5000;
  int64_t request_read_timeout_ms = 10000;
  // Dynamic batching (tools/serve_batcher.h): off at max_batch_size <= 1.
  int max_batch_size = 0;
  int64_t batch_timeout_micros = 1000;
  int batch_threads = 1;
  // PEM files: both given, the server speaks HTTPS only.
  std::string ssl_cert;
  std::string ssl_key;
  // How often MODEL_DIR is checked for a new version.
  double poll_seconds = 1;
  int64_t max_body_bytes = int64_t{64} << 20;
  std::string place = "cpu";
  // PredictorOptions::allow_unused_params.
  bool allow_unused_params = false;
};

// Loads the models, prints the addresses served, and serves until
// SIGTERM or SIGINT; then stops accepting, answers the requests begun
// (cancelling those still running after drain_timeout_ms), refuses later
// ones with 503 and returns OK.
absl::Status ServeCommand(const ServeCommandOptions& options);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_COMMAND_H_
