// Reads HTTP/1.1 requests from a connection's bytes as they arrive, in any
// pieces: request line and headers up to a size limit, then a body framed
// by Content-Length or by chunked transfer coding, each held to the body
// limit as it arrives (a chunked body too, chunk by chunk). Pipelined
// requests come out in order. Framing a proxy could read differently is
// refused: Content-Length with Transfer-Encoding, differing
// Content-Lengths, folded header lines, bare CR or LF in the head.
#ifndef SCOPEFLOW_TOOLS_HTTP_REQUEST_PARSER_H_
#define SCOPEFLOW_TOOLS_HTTP_REQUEST_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "absl/strings/string_view.h"
#include "tools/http_message.h"

namespace scopeflow {

struct HttpParseLimits {
  // The request line and headers together (431 beyond).
  size_t max_header_bytes = size_t{64} << 10;
  // The body after any chunked coding is removed (413 beyond).
  size_t max_body_bytes = size_t{64} << 20;
};

// One per connection; not thread-safe.
class HttpRequestParser {
 public:
  explicit HttpRequestParser(HttpParseLimits limits) : limits_(limits) {}

  // Parses `bytes`, which follow those appended before. Requests completed
  // go to the queue HasRequest and TakeRequest read; a malformed one stops
  // parsing (failed()).
  void Append(absl::string_view bytes);

  // Complete requests not yet taken, oldest first.
  bool HasRequest() const { return !ready_.empty(); }
  size_t ready_requests() const { return ready_.size(); }
  HttpRequest TakeRequest();

  // Whether some bytes of a request not yet complete have arrived.
  bool InRequest() const { return state_ != State::kStart || pos_ < buffer_.size(); }

  // True once a request was malformed: the connection replies
  // error_status() (400, 413, 431, 501 or 505) with error_message(),
  // after the replies to the requests before it, and closes.
  bool failed() const { return state_ == State::kFailed; }
  int error_status() const { return error_status_; }
  // The malformed request's method, path and headers as far as they were
  // read (empty when its head was unreadable), for logs and metrics.
  const HttpRequest& failed_request() const { return current_; }
  const std::string& error_message() const { return error_message_; }

  // True once after the headers of a request that sent
  // "Expect: 100-continue" and has a body still to come: the server then
  // answers "100 Continue" so that the client sends it.
  bool TakeContinue();

 private:
  enum class State {
    kStart,       // before a request's first byte (empty lines skipped)
    kHead,        // request line and headers
    kBody,        // Content-Length bytes
    kChunkSize,   // a chunk's size line
    kChunkData,   // a chunk's bytes
    kChunkEnd,    // the CRLF after a chunk's bytes
    kTrailers,    // trailer lines up to an empty one
    kFailed,
  };

  void Advance();
  // Parses the request line and headers in `head` (without the empty line
  // ending them) into current_, and chooses how the body is framed.
  void ParseHead(absl::string_view head);
  void Fail(int status, std::string message);
  void Complete();

  const HttpParseLimits limits_;
  State state_ = State::kStart;
  // Bytes received not yet consumed start at pos_.
  std::string buffer_;
  size_t pos_ = 0;
  // Bytes from pos_ on already searched for the end of the head.
  size_t head_scanned_ = 0;
  // Head and trailer bytes of the current request so far.
  size_t head_bytes_ = 0;
  uint64_t remaining_ = 0;
  bool continue_pending_ = false;
  HttpRequest current_;
  std::deque<HttpRequest> ready_;
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_REQUEST_PARSER_H_
