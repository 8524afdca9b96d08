// HTTPS on the transport: a certificate made for the test, httplib's TLS
// client talking to it, a plain client refused, and the load errors.
#include "tools/http_tls.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tools/http_transport.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A self-signed P-256 certificate for 127.0.0.1 and its key, as PEM files
// in `dir`.
void WriteCertificate(const fs::path& dir, std::string* cert_path,
                      std::string* key_path) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  ASSERT_NE(key, nullptr);
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"),
                             -1, -1, 0);
  X509_set_issuer_name(cert, name);
  ASSERT_GT(X509_sign(cert, key, EVP_sha256()), 0);
  *cert_path = (dir / "cert.pem").string();
  *key_path = (dir / "key.pem").string();
  FILE* cert_file = std::fopen(cert_path->c_str(), "w");
  FILE* key_file = std::fopen(key_path->c_str(), "w");
  ASSERT_NE(cert_file, nullptr);
  ASSERT_NE(key_file, nullptr);
  PEM_write_X509(cert_file, cert);
  PEM_write_PrivateKey(key_file, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(cert_file);
  std::fclose(key_file);
  X509_free(cert);
  EVP_PKEY_free(key);
}

class HttpTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(std::getenv("TEST_TMPDIR")) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(dir_);
    WriteCertificate(dir_, &cert_, &key_);
    router_.Get(
        "/fast",
        [](const HttpRequest&, HttpResponse& res) { res.body = "fast"; },
        HandlerThread::kIoThread);
    router_.Post("/echo", [](const HttpRequest& req, HttpResponse& res) {
      res.body = req.body;
    });
  }

  void TearDown() override {
    if (transport_ != nullptr) transport_->Stop();
    if (serving_.joinable()) serving_.join();
  }

  absl::Status Start(std::string cert, std::string key) {
    HttpTransportOptions options;
    options.port = 0;
    options.ssl_cert = std::move(cert);
    options.ssl_key = std::move(key);
    transport_ = std::make_unique<HttpTransport>(router_, options);
    absl::Status bound = transport_->Bind();
    if (bound.ok()) serving_ = std::thread([this] { (void)transport_->Serve(); });
    return bound;
  }

  fs::path dir_;
  std::string cert_, key_;
  HttpRouter router_;
  std::unique_ptr<HttpTransport> transport_;
  std::thread serving_;
};

TEST_F(HttpTlsTest, HttpsClientGetsAnswers) {
  ASSERT_TRUE(Start(cert_, key_).ok());
  httplib::SSLClient client("127.0.0.1", transport_->port());
  client.enable_server_certificate_verification(false);
  client.set_keep_alive(true);
  for (int i = 0; i < 3; ++i) {
    httplib::Result fast = client.Get("/fast");
    ASSERT_TRUE(fast) << httplib::to_string(fast.error());
    EXPECT_EQ(fast->status, 200);
    EXPECT_EQ(fast->body, "fast");
    // A body larger than one TLS record (16 KiB).
    const std::string body(100000, 'x');
    httplib::Result echo = client.Post("/echo", body, "text/plain");
    ASSERT_TRUE(echo) << httplib::to_string(echo.error());
    EXPECT_EQ(echo->body, body);
  }
}

TEST_F(HttpTlsTest, PlainHttpIsNotServed) {
  ASSERT_TRUE(Start(cert_, key_).ok());
  httplib::Client plain("127.0.0.1", transport_->port());
  plain.set_read_timeout(2, 0);
  httplib::Result result = plain.Get("/fast");
  EXPECT_FALSE(result && result->status == 200);
}

TEST_F(HttpTlsTest, LoadErrorsNameTheFile) {
  absl::Status missing = Start((dir_ / "absent.pem").string(), key_);
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("absent.pem: cannot load a PEM "
                                           "certificate chain"));
  transport_.reset();
  absl::Status swapped = Start(cert_, cert_);
  EXPECT_THAT(swapped.message(), HasSubstr("cannot load a PEM private key"));
  transport_.reset();
  absl::Status half = Start(cert_, "");
  EXPECT_THAT(half.message(),
              HasSubstr("TLS needs both a certificate (--ssl_cert) and its key"));
  transport_.reset();
}

}  // namespace
}  // namespace scopeflow
