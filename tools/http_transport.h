// The connections of `scopeflow serve`: one I/O thread that accepts, reads
// and writes every connection through epoll, and a pool of worker threads
// that run the handlers of model requests.
//
// Why event-driven rather than a thread per connection: a thread held by
// an idle keep-alive client, or by one that sends a header byte every few
// seconds, is a thread no other client can have; with a pool of N such
// threads, N slow clients stop the server (cpp-httplib, which this
// replaces, did exactly that). Here a connection costs a buffer while it
// waits; a request reaches a worker only when it has arrived whole;
// health and metrics are answered on the I/O thread itself, so idle or slow
// connections and busy workers never delay them.
//
// What it holds to: a request (head and body) must arrive within
// request_read_timeout_ms of its first byte (408 otherwise); idle
// keep-alive connections close after idle_timeout_ms; bodies are limited
// whatever their framing (413); ambiguous framing is 400
// (tools/http_request_parser.h); pipelined requests are answered in order,
// one at a time per connection; a known path asked with another method is
// 405 with Allow. Requests of worker routes are admitted by a
// RequestAdmission (tools/serve_admission.h), shared with the gRPC server:
// each has a RunCancellation with its deadline (the X-Request-Timeout-Ms
// header, or request_timeout_ms) that is cancelled when its client
// disconnects, and a place in its model's bounded queue (requests waiting
// for or holding a worker; 503 beyond). A request still queued at its
// deadline gets 504 without running. Stop drains: the listening socket
// closes, requests begun are answered (with Connection: close), later ones
// get 503, and those still running at drain_timeout_ms are cancelled.
#ifndef SCOPEFLOW_TOOLS_HTTP_TRANSPORT_H_
#define SCOPEFLOW_TOOLS_HTTP_TRANSPORT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/http_message.h"
#include "tools/http_router.h"
#include "tools/http_tls.h"
#include "tools/serve_admission.h"

namespace scopeflow {

struct HttpTransportOptions {
  // 127.0.0.1 keeps the server off the network unless asked; an IPv4 or
  // IPv6 address.
  std::string host = "127.0.0.1";
  // 0: any free port (port() says which).
  int port = 8500;
  // Worker threads running kWorker handlers.
  int threads = 2;
  // Requests a keep-alive connection may make; the last is answered with
  // Connection: close.
  int keep_alive_requests = 100;
  size_t max_body_bytes = size_t{64} << 20;
  size_t max_header_bytes = size_t{64} << 10;
  // A connection with no request under way for this long is closed.
  int64_t idle_timeout_ms = 5000;
  // A request must arrive whole within this of its first byte: 408.
  int64_t request_read_timeout_ms = 10000;
  // The deadline of requests without an X-Request-Timeout-Ms header,
  // counted from when the request has arrived whole; 0: none. (With a
  // RequestAdmission given to the transport, its options apply instead.)
  int64_t request_timeout_ms = 0;
  // Requests of one model waiting for or holding a worker; 503 beyond.
  // (Likewise.)
  int max_queued_requests = 256;
  // Connections open at once; one more is answered 503 and closed.
  int max_connections = 4096;
  // How long Stop lets requests begun before it run on before cancelling
  // them.
  int64_t drain_timeout_ms = 10000;
  // PEM certificate chain and private key: both set, connections speak
  // TLS (HTTPS) only; both empty, plain HTTP.
  std::string ssl_cert;
  std::string ssl_key;
};

// Called for each response made (on the thread that made it), with the
// seconds from the request's arrival to its response. For a request that
// could not be read, `request` has an empty path.
using HttpResponseHook = std::function<void(
    const HttpRequest& request, const HttpResponse& response, double seconds)>;

// Thread safety: Bind and Serve from one thread; Stop from any.
class HttpTransport {
 public:
  // `router` and `admission` must outlive the transport. Null
  // `admission`: one of the transport's own, from options'
  // max_queued_requests and request_timeout_ms.
  HttpTransport(const HttpRouter& router, HttpTransportOptions options,
                HttpResponseHook on_response = nullptr,
                RequestAdmission* admission = nullptr);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Loads the TLS certificate and key if given, binds and listens:
  // connections queue from here on. An error naming the address if it is
  // taken or invalid, or the file that does not load.
  absl::Status Bind();
  int port() const { return port_; }

  // Serves until Stop, then drains (see above) and returns.
  absl::Status Serve();

  // Starts the drain and makes Serve return once it is done. Idempotent.
  void Stop();

 private:
  class Loop;

  const HttpRouter& router_;
  const HttpTransportOptions options_;
  const HttpResponseHook on_response_;
  std::unique_ptr<RequestAdmission> own_admission_;
  RequestAdmission* admission_ = nullptr;
  std::unique_ptr<TlsContext> tls_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_requested_{false};
};

// The X-Request-Timeout-Ms header of a request: its deadline in
// milliseconds from its arrival, 0 when absent. InvalidArgument for a value
// that is not a positive integer.
absl::StatusOr<int64_t> RequestTimeoutMs(const HttpRequest& request);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_TRANSPORT_H_
