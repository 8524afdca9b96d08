#include "tools/http_request_parser.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace scopeflow {
namespace {

// A chunk-size line longer than this (extensions included) is refused.
constexpr size_t kMaxChunkLine = 1024;

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::StrContains("!#$%&'*+-.^_`|~", c);
}

bool IsToken(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

absl::string_view TrimSpaceAndTab(absl::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// A Content-Length value: decimal digits only (no sign, no spaces inside).
bool ParseLength(absl::string_view text, uint64_t* length) {
  if (text.empty() || text.size() > 18) return false;
  if (!std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    return false;
  }
  return absl::SimpleAtoi(text, length);
}

}  // namespace

void HttpRequestParser::Append(absl::string_view bytes) {
  if (state_ == State::kFailed) return;
  buffer_.append(bytes.data(), bytes.size());
  Advance();
  // Drop what was consumed; a body is copied out as it arrives, so the
  // buffer holds at most one read's worth beyond the head being read.
  if (pos_ > 0 && (pos_ == buffer_.size() || pos_ >= (size_t{64} << 10))) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
}

HttpRequest HttpRequestParser::TakeRequest() {
  HttpRequest request = std::move(ready_.front());
  ready_.pop_front();
  return request;
}

bool HttpRequestParser::TakeContinue() {
  const bool pending = continue_pending_;
  continue_pending_ = false;
  return pending;
}

void HttpRequestParser::Fail(int status, std::string message) {
  state_ = State::kFailed;
  error_status_ = status;
  error_message_ = std::move(message);
  continue_pending_ = false;
  current_.body.clear();
  buffer_.clear();
  pos_ = 0;
}

void HttpRequestParser::Complete() {
  ready_.push_back(std::move(current_));
  current_ = HttpRequest();
  continue_pending_ = false;
  head_bytes_ = 0;
  head_scanned_ = 0;
  state_ = State::kStart;
}

void HttpRequestParser::Advance() {
  while (true) {
    const absl::string_view rest =
        absl::string_view(buffer_).substr(pos_);
    switch (state_) {
      case State::kFailed:
        return;
      case State::kStart: {
        // Empty lines before a request line are skipped (RFC 9112 2.2).
        size_t skip = 0;
        while (skip < rest.size() && (rest[skip] == '\r' || rest[skip] == '\n')) {
          ++skip;
        }
        pos_ += skip;
        if (pos_ == buffer_.size()) return;
        state_ = State::kHead;
        break;
      }
      case State::kHead: {
        const size_t from = head_scanned_ >= 3 ? head_scanned_ - 3 : 0;
        const size_t end = rest.find("\r\n\r\n", from);
        if (end == absl::string_view::npos) {
          head_scanned_ = rest.size();
          if (rest.size() > limits_.max_header_bytes) {
            return Fail(431, absl::StrCat("the request line and headers are "
                                          "over the limit of ",
                                          limits_.max_header_bytes, " bytes"));
          }
          return;
        }
        if (end + 4 > limits_.max_header_bytes) {
          return Fail(431, absl::StrCat("the request line and headers are "
                                        "over the limit of ",
                                        limits_.max_header_bytes, " bytes"));
        }
        head_bytes_ = end + 4;
        pos_ += end + 4;
        ParseHead(rest.substr(0, end));
        break;
      }
      case State::kBody: {
        const size_t take = static_cast<size_t>(
            std::min<uint64_t>(remaining_, rest.size()));
        current_.body.append(rest.data(), take);
        pos_ += take;
        remaining_ -= take;
        if (remaining_ > 0) return;
        Complete();
        break;
      }
      case State::kChunkSize: {
        const size_t end = rest.find("\r\n");
        if (end == absl::string_view::npos) {
          if (rest.size() > kMaxChunkLine) {
            return Fail(400, "a chunk-size line is over 1024 bytes");
          }
          return;
        }
        absl::string_view line = rest.substr(0, end);
        // Chunk extensions (";name=value") are ignored.
        line = TrimSpaceAndTab(line.substr(0, line.find(';')));
        uint64_t size = 0;
        const bool hex = !line.empty() && line.size() <= 15 &&
                         std::all_of(line.begin(), line.end(), [](char c) {
                           return absl::ascii_isxdigit(
                               static_cast<unsigned char>(c));
                         });
        if (!hex || !absl::SimpleHexAtoi(line, &size)) {
          return Fail(400, absl::StrCat("malformed chunk size \"",
                                        absl::CEscape(rest.substr(0, std::min<size_t>(end, 40))),
                                        "\" in a chunked body"));
        }
        pos_ += end + 2;
        if (size == 0) {
          state_ = State::kTrailers;
          break;
        }
        if (size > limits_.max_body_bytes - current_.body.size()) {
          return Fail(413, absl::StrCat("the request body is over the size "
                                        "limit of ",
                                        limits_.max_body_bytes, " bytes"));
        }
        remaining_ = size;
        state_ = State::kChunkData;
        break;
      }
      case State::kChunkData: {
        const size_t take = static_cast<size_t>(
            std::min<uint64_t>(remaining_, rest.size()));
        current_.body.append(rest.data(), take);
        pos_ += take;
        remaining_ -= take;
        if (remaining_ > 0) return;
        state_ = State::kChunkEnd;
        break;
      }
      case State::kChunkEnd: {
        if (rest.size() < 2) return;
        if (rest.substr(0, 2) != "\r\n") {
          return Fail(400, "a chunk of a chunked body is longer than its size "
                           "says (no CRLF after its data)");
        }
        pos_ += 2;
        state_ = State::kChunkSize;
        break;
      }
      case State::kTrailers: {
        const size_t end = rest.find("\r\n");
        if (end == absl::string_view::npos) {
          if (head_bytes_ + rest.size() > limits_.max_header_bytes) {
            return Fail(431, absl::StrCat("the trailers are over the header "
                                          "limit of ",
                                          limits_.max_header_bytes, " bytes"));
          }
          return;
        }
        pos_ += end + 2;
        head_bytes_ += end + 2;
        if (head_bytes_ > limits_.max_header_bytes) {
          return Fail(431, absl::StrCat("the trailers are over the header "
                                        "limit of ",
                                        limits_.max_header_bytes, " bytes"));
        }
        // Trailer fields are read past: nothing the server does needs them.
        if (end == 0) Complete();
        break;
      }
    }
  }
}

void HttpRequestParser::ParseHead(absl::string_view head) {
  if (absl::StrContains(head, '\0')) {
    return Fail(400, "the request head holds a NUL byte");
  }
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  // A lone CR or LF inside a line could end it for another reader.
  for (absl::string_view line : lines) {
    if (absl::StrContains(line, '\r') || absl::StrContains(line, '\n')) {
      return Fail(400, "a bare CR or LF in the request head (lines must end "
                       "with CRLF)");
    }
  }
  const std::vector<absl::string_view> parts =
      absl::StrSplit(lines[0], ' ');
  if (parts.size() != 3 || !IsToken(parts[0]) || parts[1].empty()) {
    return Fail(400, absl::StrCat("malformed request line \"",
                                  absl::CEscape(lines[0].substr(0, 200)),
                                  "\" (expected METHOD TARGET HTTP/1.1)"));
  }
  if (parts[2] == "HTTP/1.1") {
    current_.minor_version = 1;
  } else if (parts[2] == "HTTP/1.0") {
    current_.minor_version = 0;
  } else if (absl::StartsWith(parts[2], "HTTP/")) {
    return Fail(505, absl::StrCat("HTTP version ", parts[2],
                                  " is not supported (HTTP/1.1 and 1.0 are)"));
  } else {
    return Fail(400, absl::StrCat("malformed request line \"",
                                  absl::CEscape(lines[0].substr(0, 200)),
                                  "\" (expected METHOD TARGET HTTP/1.1)"));
  }
  current_.method = std::string(parts[0]);
  current_.target = std::string(parts[1]);
  absl::string_view path = parts[1];
  // The absolute form (http://host/path), as sent to proxies.
  if (const size_t scheme = path.find("://");
      !absl::StartsWith(path, "/") && scheme != absl::string_view::npos) {
    const size_t slash = path.find('/', scheme + 3);
    path = slash == absl::string_view::npos ? "/" : path.substr(slash);
  }
  if (!absl::StartsWith(path, "/") && path != "*") {
    return Fail(400, absl::StrCat("request target \"",
                                  absl::CEscape(parts[1].substr(0, 200)),
                                  "\" is not a path"));
  }
  current_.path = std::string(path.substr(0, path.find('?')));

  bool has_length = false;
  uint64_t length = 0;
  std::string transfer_encoding;
  bool expect_continue = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      return Fail(400, "folded header line (obsolete line folding is not "
                       "accepted)");
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Fail(400, absl::StrCat("malformed header line \"",
                                    absl::CEscape(line.substr(0, 200)), "\""));
    }
    const absl::string_view name = line.substr(0, colon);
    const absl::string_view value = TrimSpaceAndTab(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "Content-Length")) {
      for (absl::string_view item : absl::StrSplit(value, ',')) {
        uint64_t n = 0;
        if (!ParseLength(TrimSpaceAndTab(item), &n)) {
          return Fail(400, absl::StrCat("malformed Content-Length \"",
                                        absl::CEscape(value.substr(0, 40)),
                                        "\""));
        }
        if (has_length && n != length) {
          return Fail(400, absl::StrCat("differing Content-Length values ",
                                        length, " and ", n,
                                        " (ambiguous framing)"));
        }
        has_length = true;
        length = n;
      }
    } else if (absl::EqualsIgnoreCase(name, "Transfer-Encoding")) {
      absl::StrAppend(&transfer_encoding, transfer_encoding.empty() ? "" : ",",
                      value);
    } else if (absl::EqualsIgnoreCase(name, "Expect")) {
      expect_continue = absl::EqualsIgnoreCase(value, "100-continue");
    }
    current_.headers.emplace_back(std::string(name), std::string(value));
  }

  if (!transfer_encoding.empty()) {
    if (has_length) {
      return Fail(400, "the request has both Content-Length and "
                       "Transfer-Encoding (ambiguous framing)");
    }
    if (current_.minor_version == 0) {
      return Fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    }
    if (!absl::EqualsIgnoreCase(TrimSpaceAndTab(transfer_encoding),
                                "chunked")) {
      return Fail(501, absl::StrCat("Transfer-Encoding \"",
                                    absl::CEscape(transfer_encoding.substr(0, 80)),
                                    "\" is not supported (only chunked)"));
    }
    state_ = State::kChunkSize;
    continue_pending_ = expect_continue;
    return;
  }
  if (length > limits_.max_body_bytes) {
    return Fail(413, absl::StrCat("the request body is over the size limit of ",
                                  limits_.max_body_bytes, " bytes"));
  }
  if (length == 0) return Complete();
  current_.body.reserve(static_cast<size_t>(length));
  remaining_ = length;
  state_ = State::kBody;
  continue_pending_ = expect_continue;
}

}  // namespace scopeflow
