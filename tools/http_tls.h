// Server-side TLS for the transport of `scopeflow serve` (OpenSSL, from
// Debian's libssl), over the same non-blocking sockets: a TlsStream reads
// and writes like recv and send, the handshake happening inside the first
// reads.
#ifndef SCOPEFLOW_TOOLS_HTTP_TLS_H_
#define SCOPEFLOW_TOOLS_HTTP_TLS_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace scopeflow {

// A certificate chain and its private key, loaded once; shared by every
// connection (OpenSSL's SSL_CTX is thread-safe once set up).
class TlsContext {
 public:
  // PEM files. Errors name the file and OpenSSL's reason: unreadable, not
  // PEM, a key that does not match the certificate.
  static absl::StatusOr<std::unique_ptr<TlsContext>> Load(
      const std::string& cert_path, const std::string& key_path);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* get() const { return context_; }

 private:
  explicit TlsContext(SSL_CTX* context) : context_(context) {}
  SSL_CTX* const context_;
};

// One connection's TLS session over a non-blocking socket it does not own.
// Not thread-safe (the transport's I/O thread uses it alone).
class TlsStream {
 public:
  TlsStream(const TlsContext& context, int fd);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Like recv and send on a non-blocking socket: bytes moved, 0 once the
  // peer has closed, -1 with errno EAGAIN when the socket must become ready
  // first (readable, or writable when wants_write()), or -1 with errno
  // ECONNRESET for a broken session (a failed handshake included).
  ssize_t Read(char* buffer, size_t size);
  ssize_t Write(const char* data, size_t size);
  // Whether the last Read or Write waits for the socket to be writable.
  bool wants_write() const { return wants_write_; }
  // Whether decrypted bytes wait in the session (the socket may not be
  // readable while they do).
  bool has_pending() const;
  // Sends close_notify (best effort) before the socket's write side shuts.
  void Shutdown();

 private:
  ssize_t Result(int n);

  SSL* const ssl_;
  bool wants_write_ = false;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_HTTP_TLS_H_
