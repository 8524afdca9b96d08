// HTTP/1.1 requests as the server of `scopeflow serve` reads them, and
// replies as it writes them. The member names follow cpp-httplib's
// Request and Response (path, body, matches, get_header_value, status,
// set_header, set_content), so handlers read alike.
#ifndef SCOPEFLOW_TOOLS_HTTP_MESSAGE_H_
#define SCOPEFLOW_TOOLS_HTTP_MESSAGE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "framework/run_cancellation.h"

namespace scopeflow {

struct HttpRequest {
  std::string method;
  // The request target as sent, and its path (before any '?').
  std::string target;
  std::string path;
  // 0 for HTTP/1.0, 1 for HTTP/1.1.
  int minor_version = 1;
  // In the order received; names as sent.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // The route's pattern's groups: matches[0] the whole path, then each
  // group's text (set by the router).
  std::vector<std::string> matches;
  // Raised when the request's deadline passes or its client disconnects
  // (set by the server; null outside one). Handlers pass it to runs.
  const RunCancellation* cancellation = nullptr;

  // The first header named `name` (ASCII case-insensitive); "" if none.
  std::string get_header_value(absl::string_view name) const;
  bool has_header(absl::string_view name) const;
  // Whether the connection stays open after the reply: HTTP/1.1 unless
  // "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
  bool keep_alive() const;
};

struct HttpResponse {
  int status = 200;
  // Besides Content-Type, Content-Length and Connection, which the server
  // writes itself.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  std::string body;

  void set_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
  void set_content(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
};

// "OK", "Not Found"... for the statuses the server sends; "Unknown"
// otherwise.
const char* HttpReasonPhrase(int status);

// The bytes of `response` on the wire: status line, headers (with
// Content-Length, and "Connection: close" unless `keep_alive`), body.
std::string SerializeResponse(const HttpResponse& response, bool keep_alive);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_MESSAGE_H_
