#include "tools/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "framework/serving/predictor.h"
#include "platform/place.h"
#include "platform/status_macros.h"
#include "tools/http_server.h"
#include "tools/serve_grpc.h"
#include "tools/serve_metrics.h"
#include "tools/serve_models.h"
#include "tools/serve_repository.h"

namespace scopeflow {
namespace {

absl::StatusOr<ModelSourceList> SourcesOf(const ServeCommandOptions& options) {
  const int given = !options.model_dir.empty() +
                    !options.model_config_file.empty() +
                    !options.model_repository.empty();
  SF_CHECK(given == 1,
           "give one of MODEL_DIR, --model_config_file and "
           "--model_repository (%d given)",
           given);
  if (!options.model_config_file.empty()) {
    return ModelSourceList([path = options.model_config_file] {
      return ReadModelConfigFile(path);
    });
  }
  if (!options.model_repository.empty()) {
    return ModelSourceList([root = options.model_repository] {
      return ListModelRepository(root);
    });
  }
  const ModelSource one{ModelNameOfFolder(options.model_dir),
                        options.model_dir, VersionPolicy()};
  return ModelSourceList(
      [one]() -> absl::StatusOr<std::vector<ModelSource>> {
        return std::vector<ModelSource>{one};
      });
}

}  // namespace

absl::Status ServeCommand(const ServeCommandOptions& options) {
  SF_CHECK(options.port >= 0 && options.port <= 65535,
           "--port must be from 0 to 65535, got %d", options.port);
  SF_CHECK(options.threads >= 0, "--threads must be 0 or more, got %d",
           options.threads);
  SF_CHECK(options.keep_alive_requests >= 1,
           "--keep_alive_requests must be at least 1, got %d",
           options.keep_alive_requests);
  SF_CHECK(options.poll_seconds > 0, "--poll_seconds must be positive, got %g",
           options.poll_seconds);
  SF_CHECK(options.max_body_bytes > 0,
           "--max_body_bytes must be positive, got %d", options.max_body_bytes);
  SF_CHECK(options.grpc_port >= -1 && options.grpc_port <= 65535,
           "--grpc_port must be from 0 to 65535 (or -1: none), got %d",
           options.grpc_port);
  SF_CHECK(options.request_timeout_ms >= 0,
           "--request_timeout_ms must be 0 (none) or more, got %d",
           options.request_timeout_ms);
  SF_CHECK(options.drain_timeout_ms >= 0,
           "--drain_timeout_ms must be 0 or more, got %d",
           options.drain_timeout_ms);
  SF_CHECK(options.max_queued_requests >= 1,
           "--max_queued_requests must be at least 1, got %d",
           options.max_queued_requests);
  SF_CHECK(options.idle_timeout_ms > 0 && options.request_read_timeout_ms > 0,
           "--idle_timeout_ms and --request_read_timeout_ms must be positive, "
           "got %d and %d",
           options.idle_timeout_ms, options.request_read_timeout_ms);
  SF_CHECK(options.max_batch_size >= 0,
           "--max_batch_size must be 0 (off) or more, got %d",
           options.max_batch_size);
  SF_CHECK(options.batch_timeout_micros >= 0 && options.batch_threads >= 1,
           "--batch_timeout_micros must be 0 or more and --batch_threads at "
           "least 1, got %d and %d",
           options.batch_timeout_micros, options.batch_threads);
  SF_ASSIGN_OR_RETURN(ModelSourceList sources, SourcesOf(options));
  // Debian's Abseil is built with the debug-mode deadlock detector on,
  // which records every absl::Mutex (gRPC's among them) in a global graph
  // on each lock: 3-4% of a loaded server's CPU, in the profile under
  // serve_batching_benchmark. A detector is for tests, not for serving.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Every thread started from here on inherits this mask, so that the stop
  // signals reach only the waiter below, which can stop the server safely
  // (a signal handler could not).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  PredictorOptions predictor_options;
  SF_ASSIGN_OR_RETURN(predictor_options.place, ParsePlace(options.place));
  predictor_options.allow_unused_params = options.allow_unused_params;
  ServeMetrics metrics;
  ModelRepository repository(std::move(sources), predictor_options, &metrics);
  SF_RETURN_IF_ERROR(repository.Load());
  HttpServerOptions http;
  http.host = options.host;
  http.port = options.port;
  http.threads = options.threads > 0
                     ? options.threads
                     : std::max(1u, std::thread::hardware_concurrency());
  http.max_body_bytes = static_cast<size_t>(options.max_body_bytes);
  http.keep_alive_requests = options.keep_alive_requests;
  http.request_timeout_ms = options.request_timeout_ms;
  http.drain_timeout_ms = options.drain_timeout_ms;
  http.max_queued_requests = options.max_queued_requests;
  http.idle_timeout_ms = options.idle_timeout_ms;
  http.request_read_timeout_ms = options.request_read_timeout_ms;
  http.batching.max_batch_size = options.max_batch_size;
  http.batching.batch_timeout_micros = options.batch_timeout_micros;
  http.batching.batch_threads = options.batch_threads;
  http.batching.max_queued_requests = options.max_queued_requests;
  http.ssl_cert = options.ssl_cert;
  http.ssl_key = options.ssl_key;
  HttpServer server(repository, metrics, http);
  SF_RETURN_IF_ERROR(server.Bind());
  std::printf(
      "serving models %s at %s://%s:%d (%d threads)\n",
      absl::StrJoin(repository.names(), ", ").c_str(),
      options.ssl_cert.empty() ? "http" : "https", options.host.c_str(),
      server.port(), http.threads);
  GrpcServerOptions grpc_options;
  grpc_options.host = options.host;
  grpc_options.port = options.grpc_port;
  grpc_options.max_message_bytes = options.max_body_bytes;
  // One admission and one batcher for both protocols: a model's queue
  // bound and its batches count REST and gRPC requests alike.
  GrpcServer grpc(repository, grpc_options, &server.admission(),
                  &server.batcher());
  if (options.grpc_port >= 0) {
    SF_RETURN_IF_ERROR(grpc.Start());
    std::printf("serving gRPC at %s:%d (models: %s)\n", options.host.c_str(),
                grpc.port(), absl::StrJoin(repository.names(), ", ").c_str());
  }
  std::fflush(stdout);
  repository.StartPolling(absl::Seconds(options.poll_seconds));

  std::atomic<bool> served{false};
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    if (served) return;  // Woken by the line after Serve.
    std::fprintf(stderr, "serve: %s: finishing the requests in flight\n",
                 strsignal(signal));
    server.Stop();
    grpc.Stop(absl::Milliseconds(options.drain_timeout_ms));
  });
  const absl::Status status = server.Serve();
  served = true;
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  grpc.Stop();
  repository.StopPolling();
  std::fprintf(stderr, "serve: stopped\n");
  return status;
}

}  // namespace scopeflow
