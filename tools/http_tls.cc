#include "tools/http_tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "absl/strings/str_cat.h"

namespace scopeflow {
namespace {

// OpenSSL's queued errors as one line (and the queue emptied).
std::string OpenSslErrors() {
  std::string text;
  for (unsigned long error; (error = ERR_get_error()) != 0;) {
    char line[256];
    ERR_error_string_n(error, line, sizeof(line));
    absl::StrAppend(&text, text.empty() ? "" : "; ", line);
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsContext>> TlsContext::Load(
    const std::string& cert_path, const std::string& key_path) {
  ERR_clear_error();
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot make a TLS context: ", OpenSslErrors()));
  }
  std::unique_ptr<TlsContext> owned(new TlsContext(context));
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  // A reply may be written in pieces, from a buffer that moves as the
  // connection's output grows.
  SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(context, cert_path.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ssl_cert ", cert_path,
                     ": cannot load a PEM certificate chain: ", OpenSslErrors()));
  }
  if (SSL_CTX_use_PrivateKey_file(context, key_path.c_str(),
                                  SSL_FILETYPE_PEM) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ssl_key ", key_path,
                     ": cannot load a PEM private key: ", OpenSslErrors()));
  }
  if (SSL_CTX_check_private_key(context) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ssl_key ", key_path, " does not match --ssl_cert ",
                     cert_path, ": ", OpenSslErrors()));
  }
  return owned;
}

TlsContext::~TlsContext() { SSL_CTX_free(context_); }

TlsStream::TlsStream(const TlsContext& context, int fd)
    : ssl_(SSL_new(context.get())) {
  SSL_set_fd(ssl_, fd);
  SSL_set_accept_state(ssl_);
}

TlsStream::~TlsStream() { SSL_free(ssl_); }

ssize_t TlsStream::Result(int n) {
  wants_write_ = false;
  if (n > 0) return n;
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_READ:
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_WANT_WRITE:
      wants_write_ = true;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    default:
      ERR_clear_error();
      errno = ECONNRESET;
      return -1;
  }
}

ssize_t TlsStream::Read(char* buffer, size_t size) {
  ERR_clear_error();
  return Result(SSL_read(ssl_, buffer, static_cast<int>(std::min<size_t>(size, INT_MAX))));
}

ssize_t TlsStream::Write(const char* data, size_t size) {
  ERR_clear_error();
  return Result(SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, INT_MAX))));
}

bool TlsStream::has_pending() const { return SSL_pending(ssl_) > 0; }

void TlsStream::Shutdown() {
  ERR_clear_error();
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
  ERR_clear_error();
}

}  // namespace scopeflow
