#include "tools/http_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tools/http_request_parser.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenTag = 0;
constexpr uint64_t kWakeTag = 1;
// Parsed requests a connection may hold before the server stops reading
// it (until it has answered some).
constexpr size_t kMaxPipelined = 16;
// Bytes read from one connection per readiness event, so that one busy
// client does not starve the others.
constexpr size_t kReadBudget = size_t{256} << 10;
// After a reply that closes the connection, its unread input is read and
// dropped for up to this long before the socket closes, so that closing
// with unread bytes does not reset the connection under the reply.
constexpr auto kLingerTime = std::chrono::seconds(2);
// Longer paths get 414.
constexpr size_t kMaxPathBytes = 2048;
// How often timeouts are looked for.
constexpr auto kSweepInterval = std::chrono::milliseconds(20);

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

HttpResponse ErrorResponse(int status, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = nlohmann::json{{"error", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

// A task for a worker: one request and where its reply goes.
struct Task {
  uint64_t connection = 0;
  HttpRequest request;
  const HttpRoute* route = nullptr;
  // Its place in its model's queue and its run's cancellation.
  std::shared_ptr<RequestAdmission::Admitted> admitted;
  Clock::time_point arrived;
  bool keep_alive = true;
};

// A worker's finished reply, for the I/O thread to write.
struct Completion {
  uint64_t connection = 0;
  std::string bytes;
  bool keep_alive = true;
};

}  // namespace

absl::StatusOr<int64_t> RequestTimeoutMs(const HttpRequest& request) {
  if (!request.has_header("X-Request-Timeout-Ms")) return 0;
  const std::string value = request.get_header_value("X-Request-Timeout-Ms");
  int64_t ms = 0;
  if (!absl::SimpleAtoi(value, &ms) || ms <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "X-Request-Timeout-Ms must be a positive number of milliseconds, got "
        "\"%s\"",
        value.substr(0, 40)));
  }
  return ms;
}

// The state of Serve: connections, the worker pool and the queues between
// them. Everything but the task and completion queues belongs to the I/O
// thread.
class HttpTransport::Loop {
 public:
  explicit Loop(HttpTransport& transport)
      : transport_(transport), options_(transport.options_) {}

  absl::Status Run();

 private:
  struct Connection {
    explicit Connection(const HttpParseLimits& limits) : parser(limits) {}
    uint64_t id = 0;
    int fd = -1;
    HttpRequestParser parser;
    // Null for plain HTTP.
    std::unique_ptr<TlsStream> tls;
    std::string out;
    size_t out_pos = 0;
    uint32_t events = 0;
    int served = 0;
    bool in_flight = false;
    // The request in flight's admission: cancelled if the client leaves.
    std::shared_ptr<RequestAdmission::Admitted> admitted;
    bool peer_closed = false;
    bool close_after_write = false;
    // After the last reply is decided, nothing more is parsed; once it is
    // written the sending side is shut down and input is read and dropped
    // until the client closes or kLingerTime passes.
    bool lingering = false;
    bool shut_down = false;
    Clock::time_point linger_start;
    // For timeouts: the last byte read or written, and the first byte of
    // the request being read.
    Clock::time_point last_activity;
    Clock::time_point request_start;
    // While draining: requests it may still have answered.
    int drain_quota = -1;
  };

  void Accept();
  void OnEvent(uint64_t id, uint32_t events);
  void Read(Connection& connection);
  static ssize_t Receive(Connection& connection, char* buffer, size_t size);
  static ssize_t Transmit(Connection& connection, const char* data,
                          size_t size);
  void Process(Connection& connection);
  void Dispatch(Connection& connection, HttpRequest request);
  void Reply(Connection& connection, const HttpRequest& request,
             HttpResponse response, bool keep_alive,
             Clock::time_point arrived);
  void Flush(Connection& connection);
  void UpdateEvents(Connection& connection);
  void Close(uint64_t id);
  void DrainCompletions();
  void Sweep(Clock::time_point now);
  void BeginDrain(Clock::time_point now);
  void Worker();
  void RunTask(Task& task);
  void Wake();

  HttpTransport& transport_;
  const HttpTransportOptions& options_;
  int epoll_fd_ = -1;
  uint64_t next_id_ = 2;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Connection>> connections_;
  bool draining_ = false;
  Clock::time_point drain_deadline_;
  bool drain_cancelled_ = false;

  std::mutex tasks_mutex_;
  std::condition_variable tasks_ready_;
  std::deque<Task> tasks_;
  bool workers_stop_ = false;
  std::vector<std::thread> workers_;

  std::mutex completions_mutex_;
  std::vector<Completion> completions_;
};

HttpTransport::HttpTransport(const HttpRouter& router,
                             HttpTransportOptions options,
                             HttpResponseHook on_response,
                             RequestAdmission* admission)
    : router_(router),
      options_(std::move(options)),
      on_response_(std::move(on_response)) {
  if (admission == nullptr) {
    own_admission_ = std::make_unique<RequestAdmission>(AdmissionOptions{
        options_.max_queued_requests, options_.request_timeout_ms});
    admission = own_admission_.get();
  }
  admission_ = admission;
}

HttpTransport::~HttpTransport() {
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

absl::Status HttpTransport::Bind() {
  if (options_.ssl_cert.empty() != options_.ssl_key.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both a certificate (--ssl_cert) and its key (--ssl_key)");
  }
  if (!options_.ssl_cert.empty() && tls_ == nullptr) {
    absl::StatusOr<std::unique_ptr<TlsContext>> tls =
        TlsContext::Load(options_.ssl_cert, options_.ssl_key);
    if (!tls.ok()) return tls.status();
    tls_ = *std::move(tls);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(options_.port);
  const int resolved = getaddrinfo(options_.host.c_str(), port.c_str(), &hints,
                                   &found);
  auto fail = [&](const std::string& why) {
    if (found != nullptr) freeaddrinfo(found);
    if (listen_fd_ >= 0) close(listen_fd_);
    listen_fd_ = -1;
    return absl::UnavailableError(absl::StrFormat(
        "cannot listen on %s port %d: %s", options_.host, options_.port, why));
  };
  if (resolved != 0) return fail(gai_strerror(resolved));
  listen_fd_ = socket(found->ai_family,
                      found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return fail(std::strerror(errno));
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listen_fd_, found->ai_addr, found->ai_addrlen) != 0) {
    return fail(absl::StrCat(std::strerror(errno),
                             " (the port is taken or the host is not an "
                             "address of this machine)"));
  }
  if (listen(listen_fd_, SOMAXCONN) != 0) return fail(std::strerror(errno));
  freeaddrinfo(found);
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return fail(std::strerror(errno));
  return absl::OkStatus();
}

absl::Status HttpTransport::Serve() {
  if (listen_fd_ < 0) {
    return absl::FailedPreconditionError("Serve before a successful Bind");
  }
  Loop loop(*this);
  return loop.Run();
}

void HttpTransport::Stop() {
  stop_requested_ = true;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

void HttpTransport::Loop::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(transport_.wake_fd_, &one, sizeof(one));
}

absl::Status HttpTransport::Loop::Run() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat("epoll_create1: ", std::strerror(errno)));
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kListenTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, transport_.listen_fd_, &event);
  event.data.u64 = kWakeTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, transport_.wake_fd_, &event);
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    workers_.emplace_back([this] { Worker(); });
  }

  Clock::time_point last_sweep = Clock::now();
  std::vector<epoll_event> events(256);
  while (true) {
    const int n = epoll_wait(epoll_fd_, events.data(),
                             static_cast<int>(events.size()), 20);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kListenTag) {
        Accept();
      } else if (id == kWakeTag) {
        uint64_t count;
        [[maybe_unused]] ssize_t r =
            read(transport_.wake_fd_, &count, sizeof(count));
      } else {
        OnEvent(id, events[i].events);
      }
    }
    DrainCompletions();
    const Clock::time_point now = Clock::now();
    if (transport_.stop_requested_ && !draining_) BeginDrain(now);
    if (now - last_sweep >= kSweepInterval) {
      Sweep(now);
      last_sweep = now;
    }
    if (draining_ && connections_.empty()) break;
  }

  {
    std::lock_guard<std::mutex> lock(tasks_mutex_);
    workers_stop_ = true;
  }
  tasks_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  close(epoll_fd_);
  return absl::OkStatus();
}

void HttpTransport::Loop::Accept() {
  while (true) {
    const int fd = accept4(transport_.listen_fd_, nullptr, nullptr,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or an error the next accept sees again
    if (static_cast<int>(connections_.size()) >= options_.max_connections) {
      const std::string busy = SerializeResponse(
          ErrorResponse(503, absl::StrCat("the server has its limit of ",
                                          options_.max_connections,
                                          " connections open")),
          /*keep_alive=*/false);
      [[maybe_unused]] ssize_t n =
          send(fd, busy.data(), busy.size(), MSG_NOSIGNAL);
      close(fd);
      continue;
    }
    // Replies are small: without this, Nagle's algorithm holds a reply's
    // body back until the client acknowledges its headers.
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    HttpParseLimits limits;
    limits.max_body_bytes = options_.max_body_bytes;
    limits.max_header_bytes = options_.max_header_bytes;
    auto connection = std::make_unique<Connection>(limits);
    connection->id = next_id_++;
    connection->fd = fd;
    if (transport_.tls_ != nullptr) {
      // The handshake happens inside the first reads; a client that stalls
      // in it sends no request bytes, and is closed as idle.
      connection->tls = std::make_unique<TlsStream>(*transport_.tls_, fd);
    }
    connection->last_activity = Clock::now();
    connection->events = EPOLLIN | EPOLLRDHUP;
    epoll_event event{};
    event.events = connection->events;
    event.data.u64 = connection->id;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
    connections_.emplace(connection->id, std::move(connection));
  }
}

void HttpTransport::Loop::OnEvent(uint64_t id, uint32_t events) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& connection = *it->second;
  if (events & EPOLLERR) return Close(id);
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
    Read(connection);
    if (connections_.find(id) == connections_.end()) return;
  }
  if (events & EPOLLOUT) {
    // A TLS read may have waited for the socket to be writable.
    if (connection.tls != nullptr && connection.tls->wants_write()) {
      Read(connection);
      if (connections_.find(id) == connections_.end()) return;
    }
    Flush(connection);
  }
}

ssize_t HttpTransport::Loop::Receive(Connection& connection, char* buffer,
                                     size_t size) {
  if (connection.tls != nullptr) return connection.tls->Read(buffer, size);
  return recv(connection.fd, buffer, size, 0);
}

ssize_t HttpTransport::Loop::Transmit(Connection& connection,
                                      const char* data, size_t size) {
  if (connection.tls != nullptr) return connection.tls->Write(data, size);
  return send(connection.fd, data, size, MSG_NOSIGNAL);
}

void HttpTransport::Loop::Read(Connection& connection) {
  char buffer[16384];
  size_t budget = kReadBudget;
  // Decrypted bytes held by a TLS session raise no epoll event: they are
  // read now, budget or not.
  auto tls_pending = [&] {
    return connection.tls != nullptr && connection.tls->has_pending();
  };
  while (budget > 0 || tls_pending()) {
    const ssize_t n = Receive(connection, buffer, sizeof(buffer));
    if (n > 0) {
      budget -= std::min(budget, static_cast<size_t>(n));
      connection.last_activity = Clock::now();
      if (connection.lingering) continue;  // input after the last reply
      if (!connection.parser.InRequest()) {
        connection.request_start = connection.last_activity;
      }
      connection.parser.Append(absl::string_view(buffer, n));
      if (connection.parser.TakeContinue() && !draining_) {
        connection.out += "HTTP/1.1 100 Continue\r\n\r\n";
      }
      if ((connection.parser.ready_requests() >= kMaxPipelined ||
           connection.parser.failed()) &&
          !tls_pending()) {
        break;
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    // The client closed its side (or the connection broke). A request of
    // it still running has lost its reader: cancel it.
    if (n < 0 || connection.in_flight || connection.shut_down) {
      return Close(connection.id);
    }
    connection.peer_closed = true;
    connection.close_after_write = true;
    break;
  }
  // A request begun but not whole: acknowledge what came at once. A client
  // that writes a request's head and body apart with Nagle's algorithm on
  // (cpp-httplib's default) holds the body back until the head is
  // acknowledged, which the kernel would delay by up to 40 ms.
  if (connection.parser.InRequest()) {
    const int one = 1;
    setsockopt(connection.fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
  }
  Process(connection);
}

void HttpTransport::Loop::Process(Connection& connection) {
  const uint64_t id = connection.id;
  while (!connection.in_flight && !connection.lingering) {
    if (connection.parser.HasRequest()) {
      Dispatch(connection, connection.parser.TakeRequest());
      if (connections_.find(id) == connections_.end()) return;
      continue;
    }
    if (connection.parser.failed()) {
      Reply(connection, connection.parser.failed_request(),
            ErrorResponse(connection.parser.error_status(),
                          connection.parser.error_message()),
            /*keep_alive=*/false, Clock::now());
    }
    break;
  }
  Flush(connection);
}

void HttpTransport::Loop::Dispatch(Connection& connection,
                                   HttpRequest request) {
  const Clock::time_point arrived = Clock::now();
  ++connection.served;
  bool keep_alive = request.keep_alive() &&
                    connection.served < options_.keep_alive_requests;
  if (draining_) {
    if (connection.drain_quota <= 0) {
      return Reply(connection, request,
                   ErrorResponse(503, "the server is shutting down"),
                   /*keep_alive=*/false, arrived);
    }
    --connection.drain_quota;
    keep_alive = keep_alive && connection.drain_quota > 0;
  }
  // Routes are regular expressions, whose matching in libstdc++ recurses
  // per character: long paths are refused before they reach one.
  if (request.path.size() > kMaxPathBytes) {
    return Reply(connection, request,
                 ErrorResponse(414, absl::StrCat("the path is over ",
                                                 kMaxPathBytes, " bytes")),
                 keep_alive, arrived);
  }
  HttpRouter::Match match =
      transport_.router_.Find(request.method, request.path);
  if (match.route == nullptr) {
    HttpResponse response;
    if (match.allowed.empty()) {
      const std::string& hint = transport_.router_.endpoints_hint();
      response = ErrorResponse(
          404, absl::StrCat("no endpoint ", request.method, " ", request.path,
                            hint.empty() ? "" : " (endpoints: ", hint,
                            hint.empty() ? "" : ")"));
    } else {
      response = ErrorResponse(
          405, absl::StrCat(request.path, " takes ",
                            absl::StrJoin(match.allowed, ", "), ", not ",
                            request.method));
      response.set_header("Allow", absl::StrJoin(match.allowed, ", "));
    }
    return Reply(connection, request, std::move(response), keep_alive,
                 arrived);
  }
  request.matches = std::move(match.matches);
  const absl::StatusOr<int64_t> timeout = RequestTimeoutMs(request);
  if (!timeout.ok()) {
    return Reply(connection, request,
                 ErrorResponse(400, std::string(timeout.status().message())),
                 keep_alive, arrived);
  }
  if (match.route->thread == HandlerThread::kIoThread) {
    // These answer in microseconds and run nothing: no deadline.
    RunCancellation never;
    request.cancellation = &never;
    HttpResponse response;
    try {
      match.route->handler(request, response);
    } catch (const std::exception& e) {
      response = ErrorResponse(
          500, absl::StrCat("internal error while handling the request: ",
                            e.what()));
    }
    return Reply(connection, request, std::move(response), keep_alive,
                 arrived);
  }
  const int group = match.route->model_group;
  std::string queue =
      group > 0 && group < static_cast<int>(request.matches.size())
          ? request.matches[group]
          : std::string();
  absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> admitted =
      transport_.admission_->Admit(queue, arrived, *timeout);
  if (!admitted.ok()) {
    return Reply(connection, request,
                 ErrorResponse(503, std::string(admitted.status().message())),
                 keep_alive, arrived);
  }
  std::shared_ptr<RequestAdmission::Admitted> shared = *std::move(admitted);
  request.cancellation = &shared->cancellation();
  connection.in_flight = true;
  connection.admitted = shared;
  Task task;
  task.connection = connection.id;
  task.request = std::move(request);
  task.route = match.route;
  task.admitted = std::move(shared);
  task.arrived = arrived;
  task.keep_alive = keep_alive;
  {
    std::lock_guard<std::mutex> lock(tasks_mutex_);
    tasks_.push_back(std::move(task));
  }
  tasks_ready_.notify_one();
}

void HttpTransport::Loop::Reply(Connection& connection,
                                const HttpRequest& request,
                                HttpResponse response, bool keep_alive,
                                Clock::time_point arrived) {
  if (transport_.on_response_) {
    transport_.on_response_(request, response, SecondsSince(arrived));
  }
  connection.out += SerializeResponse(response, keep_alive);
  if (!keep_alive) {
    // Nothing after this reply is read as a request.
    connection.close_after_write = true;
    connection.lingering = true;
  }
}

void HttpTransport::Loop::Flush(Connection& connection) {
  while (connection.out_pos < connection.out.size()) {
    const ssize_t n =
        Transmit(connection, connection.out.data() + connection.out_pos,
                 connection.out.size() - connection.out_pos);
    if (n > 0) {
      connection.out_pos += static_cast<size_t>(n);
      connection.last_activity = Clock::now();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return Close(connection.id);
  }
  if (connection.out_pos == connection.out.size()) {
    connection.out.clear();
    connection.out_pos = 0;
    if (connection.close_after_write && !connection.in_flight) {
      if (connection.peer_closed) return Close(connection.id);
      // Lingering close: no more sending; input is read and dropped until
      // the client closes or kLingerTime passes (Sweep).
      if (!connection.shut_down) {
        if (connection.tls != nullptr) connection.tls->Shutdown();
        shutdown(connection.fd, SHUT_WR);
        connection.shut_down = true;
        connection.linger_start = Clock::now();
      }
    }
  }
  UpdateEvents(connection);
}

void HttpTransport::Loop::UpdateEvents(Connection& connection) {
  uint32_t events = 0;
  if (!connection.peer_closed) {
    events |= EPOLLRDHUP;
    if (connection.lingering ||
        connection.parser.ready_requests() < kMaxPipelined) {
      events |= EPOLLIN;
    }
  }
  if (connection.out_pos < connection.out.size() ||
      (connection.tls != nullptr && connection.tls->wants_write())) {
    events |= EPOLLOUT;
  }
  if (events == connection.events) return;
  connection.events = events;
  epoll_event event{};
  event.events = events;
  event.data.u64 = connection.id;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.fd, &event);
}

void HttpTransport::Loop::Close(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& connection = *it->second;
  if (connection.in_flight && connection.admitted != nullptr) {
    connection.admitted->cancellation().Cancel();
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection.fd, nullptr);
  close(connection.fd);
  connections_.erase(it);
}

void HttpTransport::Loop::DrainCompletions() {
  std::vector<Completion> done;
  {
    std::lock_guard<std::mutex> lock(completions_mutex_);
    done.swap(completions_);
  }
  for (Completion& completion : done) {
    auto it = connections_.find(completion.connection);
    if (it == connections_.end()) continue;  // its client left
    Connection& connection = *it->second;
    connection.in_flight = false;
    connection.admitted.reset();
    connection.out += completion.bytes;
    const bool drained = draining_ && connection.drain_quota <= 0 &&
                         !connection.parser.InRequest() &&
                         !connection.parser.HasRequest();
    if (!completion.keep_alive || drained) {
      connection.close_after_write = true;
      connection.lingering = true;
    }
    Process(connection);
  }
}

void HttpTransport::Loop::Sweep(Clock::time_point now) {
  if (draining_ && !drain_cancelled_ && now >= drain_deadline_) {
    // Requests still running past the drain timeout are cancelled; their
    // replies (CANCELLED) still go out.
    drain_cancelled_ = true;
    for (auto& [id, connection] : connections_) {
      if (connection->in_flight) connection->admitted->cancellation().Cancel();
    }
  }
  std::vector<uint64_t> to_close;
  std::vector<uint64_t> too_slow;
  for (auto& [id, connection_ptr] : connections_) {
    Connection& connection = *connection_ptr;
    if (connection.in_flight) continue;
    if (connection.shut_down) {
      if (now - connection.linger_start > kLingerTime ||
          (draining_ && drain_cancelled_)) {
        to_close.push_back(id);
      }
      continue;
    }
    if (connection.out_pos < connection.out.size()) {
      // A client that does not read its replies.
      if (now - connection.last_activity >
          std::chrono::milliseconds(options_.request_read_timeout_ms)) {
        to_close.push_back(id);
      }
      continue;
    }
    if (connection.parser.InRequest()) {
      const bool past_drain = draining_ && drain_cancelled_;
      if (past_drain || now - connection.request_start >
                            std::chrono::milliseconds(
                                options_.request_read_timeout_ms)) {
        too_slow.push_back(id);
      }
      continue;
    }
    if (draining_ ||
        now - connection.last_activity >
            std::chrono::milliseconds(options_.idle_timeout_ms)) {
      to_close.push_back(id);
    }
  }
  for (uint64_t id : to_close) Close(id);
  // Replied to after the loop: Flush may close the connection.
  for (uint64_t id : too_slow) {
    Connection& connection = *connections_.at(id);
    HttpRequest unread;
    Reply(connection, unread,
          ErrorResponse(408, absl::StrCat(
                                 "the request did not arrive whole within ",
                                 options_.request_read_timeout_ms, " ms")),
          /*keep_alive=*/false, connection.request_start);
    Flush(connection);
  }
}

void HttpTransport::Loop::BeginDrain(Clock::time_point now) {
  draining_ = true;
  drain_deadline_ = now + std::chrono::milliseconds(options_.drain_timeout_ms);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, transport_.listen_fd_, nullptr);
  close(transport_.listen_fd_);
  transport_.listen_fd_ = -1;
  std::vector<uint64_t> idle;
  for (auto& [id, connection] : connections_) {
    // What has begun arriving is answered; nothing after it.
    connection->drain_quota =
        static_cast<int>(connection->parser.ready_requests()) +
        (connection->parser.InRequest() ? 1 : 0);
    if (!connection->in_flight && connection->drain_quota == 0 &&
        connection->out_pos == connection->out.size()) {
      idle.push_back(id);
    }
  }
  for (uint64_t id : idle) Close(id);
}

void HttpTransport::Loop::Worker() {
  while (true) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(tasks_mutex_);
      tasks_ready_.wait(lock, [&] { return workers_stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    RunTask(task);
  }
}

void HttpTransport::Loop::RunTask(Task& task) {
  HttpResponse response;
  const absl::Status waited = task.admitted->cancellation().Check();
  if (waited.code() == absl::StatusCode::kDeadlineExceeded) {
    response = ErrorResponse(
        504, absl::StrFormat("the request waited %.0f ms for a worker, past "
                             "its deadline of %d ms; it did not run",
                             SecondsSince(task.arrived) * 1e3,
                             task.admitted->timeout_ms()));
  } else if (!waited.ok()) {
    response = ErrorResponse(499, "the request was cancelled before it ran "
                                  "(its client left, or the server stopped)");
  } else {
    try {
      task.route->handler(task.request, response);
    } catch (const std::exception& e) {
      response = ErrorResponse(
          500, absl::StrCat("internal error while handling the request: ",
                            e.what()));
    }
  }
  if (transport_.on_response_) {
    transport_.on_response_(task.request, response, SecondsSince(task.arrived));
  }
  // The connection holds the admission until the I/O thread takes the
  // reply, so that its place is free before the client can send again.
  task.request.cancellation = nullptr;
  task.admitted.reset();
  Completion completion;
  completion.connection = task.connection;
  completion.bytes = SerializeResponse(response, task.keep_alive);
  completion.keep_alive = task.keep_alive;
  {
    std::lock_guard<std::mutex> lock(completions_mutex_);
    completions_.push_back(std::move(completion));
  }
  Wake();
}

}  // namespace scopeflow
