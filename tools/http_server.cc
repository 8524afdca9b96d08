#include "tools/http_server.h"

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "httplib.h"
#include "tools/serve_json.h"
#include "tools/serve_predict.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kModelsPrefix[] = "/v1/models/";
constexpr char kEndpoints[] =
    "GET /healthz, GET /metrics, GET /v1/models/NAME, "
    "POST /v1/models/NAME:predict";

// When the request this thread is handling had its headers read: set before
// routing, read by the handler (a thread handles one request at a time).
thread_local Clock::time_point request_start;

Endpoint EndpointOf(const std::string& path) {
  if (path == "/healthz") return Endpoint::kHealth;
  if (path == "/metrics") return Endpoint::kMetrics;
  if (absl::StartsWith(path, kModelsPrefix)) {
    return absl::EndsWith(path, ":predict") ? Endpoint::kPredict
                                            : Endpoint::kMetadata;
  }
  return Endpoint::kOther;
}

void Send(HttpReply reply, httplib::Response& res) {
  res.status = reply.status;
  res.set_header("Content-Type", reply.content_type);
  res.body = std::move(reply.body);
}

HttpReply UnknownModel(const std::string& asked, const ServedModel& model) {
  return ErrorReply(absl::NotFoundError(absl::StrFormat(
      "unknown model \"%s\" (this server serves \"%s\")", asked, model.name)));
}

// Times a handler from the request's headers to its reply, and counts it in
// flight meanwhile.
class HandlerScope {
 public:
  HandlerScope(ServeMetrics& metrics, Endpoint endpoint)
      : metrics_(metrics), endpoint_(endpoint), in_flight_(metrics) {}
  ~HandlerScope() {
    metrics_.ObserveLatency(
        endpoint_,
        std::chrono::duration<double>(Clock::now() - request_start).count());
  }

 private:
  ServeMetrics& metrics_;
  const Endpoint endpoint_;
  ServeMetrics::InFlight in_flight_;
};

}  // namespace

// httplib's server with its listening socket in reach: httplib listens with
// a backlog of 5, so a burst of connections (a load balancer's, a load
// test's) overflows it, and each connection dropped retries a second later.
class HttpServer::Listener : public httplib::Server {
 public:
  // Raises the backlog to the system's limit; false on failure.
  bool WidenBacklog() { return ::listen(svr_sock_, SOMAXCONN) == 0; }
};

HttpServer::HttpServer(ModelManager& models, ServeMetrics& metrics,
                       HttpServerOptions options)
    : models_(models),
      metrics_(metrics),
      options_(std::move(options)),
      server_(std::make_unique<Listener>()) {
  Route();
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route() {
  httplib::Server& server = *server_;
  const int threads = options_.threads;
  // httplib owns the queue it is handed (a raw pointer, by its API).
  server.new_task_queue = [threads] {
    return std::make_unique<httplib::ThreadPool>(threads).release();
  };
  server.set_payload_max_length(options_.max_body_bytes);
  server.set_keep_alive_max_count(options_.keep_alive_requests);
  // Replies are small: without this, Nagle's algorithm holds the body back
  // until the client acknowledges the headers.
  server.set_tcp_nodelay(true);

  server.set_pre_routing_handler(
      [](const httplib::Request&, httplib::Response&) {
        request_start = Clock::now();
        return httplib::Server::HandlerResponse::Unhandled;
      });
  // Counted as the response's headers are about to go out, with its final
  // status (after the error handler below): a client that has its answer
  // and then reads /metrics finds it counted. (httplib's logger runs only
  // after the response is written, which such a client can outrun.)
  server.set_post_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        metrics_.CountResponse(EndpointOf(req.path), res.status);
      });
  // Errors httplib answers itself (no route, body too large, a request it
  // cannot parse) get a JSON body too; ours have one already.
  const size_t max_body = options_.max_body_bytes;
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        std::string message;
        if (res.status == 404) {
          message = absl::StrCat("no endpoint ", req.method, " ", req.path,
                                 " (endpoints: ", kEndpoints, ")");
        } else if (res.status == 413) {
          message = absl::StrCat("the request body is over the size limit of ",
                                 max_body, " bytes");
        } else {
          message =
              absl::StrCat("the request failed with HTTP status ", res.status);
        }
        res.set_content(ErrorJson(message), kJsonContentType);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(ErrorJson("internal error while handling the request"),
                        kJsonContentType);
      });

  server.Post(R"(/v1/models/([^/:]+):predict)", [this](
                                                    const httplib::Request& req,
                                                    httplib::Response& res) {
    HandlerScope scope(metrics_, Endpoint::kPredict);
    const std::shared_ptr<const ServedModel> model = models_.current();
    if (req.matches[1] != model->name) {
      return Send(UnknownModel(req.matches[1], *model), res);
    }
    res.set_header("X-Model-Version", absl::StrCat(model->version));
    Send(Predict(*model, req.get_header_value("Content-Type"), req.body), res);
  });
  server.Get(R"(/v1/models/([^/:]+))", [this](const httplib::Request& req,
                                              httplib::Response& res) {
    HandlerScope scope(metrics_, Endpoint::kMetadata);
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
  server.Get(
      "/healthz", [this](const httplib::Request&, httplib::Response& res) {
        HandlerScope scope(metrics_, Endpoint::kHealth);
        const std::shared_ptr<const ServedModel> model = models_.current();
        HttpReply reply;
        reply.body = HealthJson(model->name, model->version);
        Send(std::move(reply), res);
      });
  server.Get(
      "/metrics", [this](const httplib::Request&, httplib::Response& res) {
        HandlerScope scope(metrics_, Endpoint::kMetrics);
        const std::shared_ptr<const ServedModel> model = models_.current();
        HttpReply reply;
        reply.content_type = "text/plain; version=0.0.4";
        reply.body = metrics_.Render(model->name, model->version);
        Send(std::move(reply), res);
      });
}

absl::Status HttpServer::Bind() {
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
  } else if (server_->bind_to_port(options_.host, options_.port)) {
    port_ = options_.port;
  } else {
    port_ = -1;
  }
  if (port_ < 0) {
    return absl::UnavailableError(absl::StrFormat(
        "cannot listen on %s port %d: the port is taken or the host is not "
        "an address of this machine",
        options_.host, options_.port));
  }
  if (!server_->WidenBacklog()) {
    return absl::InternalError(
        absl::StrFormat("cannot widen the connection backlog on %s port %d: %s",
                        options_.host, port_, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status HttpServer::Serve() {
  serving_ = true;
  const bool ok = stopping_ || server_->listen_after_bind();
  serving_ = false;
  if (!ok && !stopping_) {
    return absl::InternalError(absl::StrFormat(
        "the server on %s port %d stopped accepting connections", options_.host,
        port_));
  }
  return absl::OkStatus();
}

void HttpServer::Stop() {
  stopping_ = true;
  // httplib's stop does nothing until its accept loop runs: wait for it if
  // Serve is starting it.
  while (serving_ && !server_->is_running()) std::this_thread::yield();
  server_->stop();
}

}  // namespace scopeflow
