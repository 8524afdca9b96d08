#include "tools/http_message.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace scopeflow {

std::string HttpRequest::get_header_value(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

bool HttpRequest::has_header(absl::string_view name) const {
  for (const auto& header : headers) {
    if (absl::EqualsIgnoreCase(header.first, name)) return true;
  }
  return false;
}

bool HttpRequest::keep_alive() const {
  const std::string connection =
      absl::AsciiStrToLower(get_header_value("Connection"));
  if (absl::StrContains(connection, "close")) return false;
  return minor_version >= 1 || absl::StrContains(connection, "keep-alive");
}

const char* HttpReasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string SerializeResponse(const HttpResponse& response, bool keep_alive) {
  std::string out = absl::StrCat("HTTP/1.1 ", response.status, " ",
                                 HttpReasonPhrase(response.status), "\r\n");
  for (const auto& [name, value] : response.headers) {
    absl::StrAppend(&out, name, ": ", value, "\r\n");
  }
  if (!response.content_type.empty()) {
    absl::StrAppend(&out, "Content-Type: ", response.content_type, "\r\n");
  }
  absl::StrAppend(&out, "Content-Length: ", response.body.size(), "\r\n");
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  out += response.body;
  return out;
}

}  // namespace scopeflow
