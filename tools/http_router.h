// The routes of an HTTP server: which handler answers a method and path,
// and, for a path known under other methods only, which methods it has
// (so that the server answers 405 with an Allow header rather than 404).
#ifndef SCOPEFLOW_TOOLS_HTTP_ROUTER_H_
#define SCOPEFLOW_TOOLS_HTTP_ROUTER_H_

#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "tools/http_message.h"

namespace scopeflow {

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

// Where a route's handler runs. kIoThread: on the server's I/O thread, for
// handlers that take microseconds and never wait (health, metrics): they
// answer even while every worker is busy. kWorker: on a worker thread, in
// a bounded queue (model runs).
enum class HandlerThread { kIoThread, kWorker };

struct HttpRoute {
  // Empty: every method (the handler decides which it takes).
  std::string method;
  std::string pattern;
  std::regex regex;
  HandlerThread thread = HandlerThread::kWorker;
  // The group of `pattern` naming the model a request is for, whose queue
  // bounds it (HttpTransportOptions::max_queued_requests); 0: the shared
  // queue of routes without one.
  int model_group = 0;
  HttpHandler handler;
};

// Built before the server starts, then only read (thread-safe to Find).
class HttpRouter {
 public:
  // `pattern` is an ECMAScript regular expression that must match the whole
  // path; its groups' text goes to HttpRequest::matches[1...].
  void Add(std::string method, std::string pattern, HandlerThread thread,
           HttpHandler handler, int model_group = 0);
  void Get(std::string pattern, HttpHandler handler,
           HandlerThread thread = HandlerThread::kWorker) {
    Add("GET", std::move(pattern), thread, std::move(handler));
  }
  void Post(std::string pattern, HttpHandler handler, int model_group = 0) {
    Add("POST", std::move(pattern), HandlerThread::kWorker, std::move(handler),
        model_group);
  }
  // Every method of the paths `pattern` matches goes to `handler`, which
  // answers 404 and 405 itself.
  void Any(std::string pattern, HandlerThread thread, HttpHandler handler,
           int model_group = 0) {
    Add("", std::move(pattern), thread, std::move(handler), model_group);
  }

  struct Match {
    // Null when no route has the method and path.
    const HttpRoute* route = nullptr;
    std::vector<std::string> matches;
    // When route is null: the methods the path has ("GET", "POST"); empty
    // for an unknown path.
    std::vector<std::string> allowed;
  };
  Match Find(const std::string& method, const std::string& path) const;

  // The endpoints as users write them ("GET /healthz, ..."), for the
  // message of a 404.
  void set_endpoints_hint(std::string hint) { endpoints_hint_ = std::move(hint); }
  const std::string& endpoints_hint() const { return endpoints_hint_; }

 private:
  std::vector<HttpRoute> routes_;
  std::string endpoints_hint_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_ROUTER_H_
