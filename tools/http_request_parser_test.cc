// The request parser alone: framing by Content-Length and by chunks, in any
// pieces; pipelined requests; every malformed or ambiguous request it
// refuses, with the status it gives.
#include "tools/http_request_parser.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

HttpParseLimits Limits(size_t body, size_t header = 1024) {
  HttpParseLimits limits;
  limits.max_body_bytes = body;
  limits.max_header_bytes = header;
  return limits;
}

TEST(HttpRequestParserTest, GetWithHeaders) {
  HttpRequestParser parser(Limits(100));
  parser.Append("GET /v1/models/mlp?x=1 HTTP/1.1\r\nHost: a\r\n"
                "X-Thing:  spaced value \t\r\n\r\n");
  ASSERT_TRUE(parser.HasRequest());
  EXPECT_FALSE(parser.InRequest());
  const HttpRequest request = parser.TakeRequest();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/v1/models/mlp?x=1");
  EXPECT_EQ(request.path, "/v1/models/mlp");
  EXPECT_EQ(request.minor_version, 1);
  EXPECT_EQ(request.get_header_value("x-thing"), "spaced value");
  EXPECT_EQ(request.get_header_value("Absent"), "");
  EXPECT_TRUE(request.keep_alive());
  EXPECT_EQ(request.body, "");
}

TEST(HttpRequestParserTest, KeepAliveRules) {
  HttpRequestParser parser(Limits(100));
  parser.Append("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"
                "GET / HTTP/1.0\r\n\r\n"
                "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
  EXPECT_FALSE(parser.TakeRequest().keep_alive());
  EXPECT_FALSE(parser.TakeRequest().keep_alive());
  EXPECT_TRUE(parser.TakeRequest().keep_alive());
}

TEST(HttpRequestParserTest, ByteByByteGivesTheSameRequests) {
  const std::string wire =
      "\r\nPOST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
      "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n"
      "GET /c HTTP/1.1\r\n\r\n";
  HttpRequestParser parser(Limits(100));
  for (char c : wire) {
    parser.Append(std::string(1, c));
    ASSERT_FALSE(parser.failed()) << parser.error_message();
  }
  ASSERT_EQ(parser.ready_requests(), 3u);
  HttpRequest a = parser.TakeRequest();
  EXPECT_EQ(a.path, "/a");
  EXPECT_EQ(a.body, "hello");
  HttpRequest b = parser.TakeRequest();
  EXPECT_EQ(b.path, "/b");
  EXPECT_EQ(b.body, "abc0123456789");
  HttpRequest c = parser.TakeRequest();
  EXPECT_EQ(c.path, "/c");
  EXPECT_FALSE(parser.InRequest());
}

TEST(HttpRequestParserTest, PartialRequestIsInRequest) {
  HttpRequestParser parser(Limits(100));
  EXPECT_FALSE(parser.InRequest());
  parser.Append("GET / HT");
  EXPECT_TRUE(parser.InRequest());
  EXPECT_FALSE(parser.HasRequest());
  parser.Append("TP/1.1\r\nContent-Length: 3\r\n\r\nab");
  EXPECT_TRUE(parser.InRequest());
  parser.Append("c");
  EXPECT_FALSE(parser.InRequest());
  EXPECT_EQ(parser.TakeRequest().body, "abc");
}

TEST(HttpRequestParserTest, ContinueIsAskedOnceForABody) {
  HttpRequestParser parser(Limits(100));
  parser.Append("POST / HTTP/1.1\r\nExpect: 100-continue\r\n"
                "Content-Length: 2\r\n\r\n");
  EXPECT_TRUE(parser.TakeContinue());
  EXPECT_FALSE(parser.TakeContinue());
  parser.Append("ok");
  EXPECT_EQ(parser.TakeRequest().body, "ok");
}

TEST(HttpRequestParserTest, RepeatedEqualContentLengthsAreOne) {
  HttpRequestParser parser(Limits(100));
  parser.Append("POST / HTTP/1.1\r\nContent-Length: 2, 2\r\n"
                "Content-Length: 2\r\n\r\nok");
  ASSERT_TRUE(parser.HasRequest()) << parser.error_message();
  EXPECT_EQ(parser.TakeRequest().body, "ok");
}

struct BadCase {
  const char* wire;
  int status;
  const char* message;
};

class HttpRequestParserErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(HttpRequestParserErrorTest, IsRefusedWithItsStatus) {
  HttpRequestParser parser(Limits(16, 256));
  parser.Append(GetParam().wire);
  ASSERT_TRUE(parser.failed()) << GetParam().wire;
  EXPECT_EQ(parser.error_status(), GetParam().status);
  EXPECT_THAT(parser.error_message(), HasSubstr(GetParam().message));
  EXPECT_FALSE(parser.HasRequest());
  // Nothing after a bad request is parsed.
  parser.Append("GET / HTTP/1.1\r\n\r\n");
  EXPECT_FALSE(parser.HasRequest());
}

INSTANTIATE_TEST_SUITE_P(
    Framing, HttpRequestParserErrorTest,
    ::testing::Values(
        BadCase{"POST / HTTP/1.1\r\nContent-Length: 3\r\n"
                "Transfer-Encoding: chunked\r\n\r\n",
                400, "both Content-Length and Transfer-Encoding"},
        BadCase{"POST / HTTP/1.1\r\nContent-Length: 3\r\n"
                "Content-Length: 4\r\n\r\n",
                400, "differing Content-Length values 3 and 4"},
        BadCase{"POST / HTTP/1.1\r\nContent-Length: 3, 4\r\n\r\n", 400,
                "differing Content-Length values 3 and 4"},
        BadCase{"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
                "malformed Content-Length \"-1\""},
        BadCase{"POST / HTTP/1.1\r\nContent-Length: 17\r\n\r\n", 413,
                "over the size limit of 16 bytes"},
        // 10 + 7 bytes of chunks: refused at the second chunk's size line,
        // before its data arrives.
        BadCase{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                "a\r\n0123456789\r\n7\r\n",
                413, "over the size limit of 16 bytes"},
        BadCase{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                "fffffffffffffffffff\r\n",
                400, "malformed chunk size"},
        BadCase{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                "2\r\nabc\r\n",
                400, "longer than its size says"},
        BadCase{"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
                "Transfer-Encoding \"gzip\" is not supported"},
        BadCase{"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                "Transfer-Encoding in an HTTP/1.0 request"}));

INSTANTIATE_TEST_SUITE_P(
    Head, HttpRequestParserErrorTest,
    ::testing::Values(
        BadCase{"GET / HTTP/2.0\r\n\r\n", 505, "HTTP version HTTP/2.0"},
        BadCase{"GET /\r\n\r\n", 400, "malformed request line \"GET /\""},
        BadCase{"GET  / HTTP/1.1\r\n\r\n", 400, "malformed request line"},
        BadCase{"GET nothing HTTP/1.1\r\n\r\n", 400,
                "request target \"nothing\" is not a path"},
        BadCase{"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400,
                "folded header line"},
        BadCase{"GET / HTTP/1.1\r\nA : b\r\n\r\n", 400,
                "malformed header line \"A : b\""},
        BadCase{"GET / HTTP/1.1\r\nA: b\nB: c\r\n\r\n", 400,
                "a bare CR or LF"},
        BadCase{"GET / HTTP/1.1\r\nA: 0123456789012345678901234567890123456789"
                "0123456789012345678901234567890123456789012345678901234567"
                "8901234567890123456789012345678901234567890123456789012345"
                "6789012345678901234567890123456789012345678901234567890123"
                "45678901234567890123456789\r\n\r\n",
                431, "over the limit of 256 bytes"}));

TEST(HttpRequestParserTest, HeadWithoutItsEndIsRefusedAtTheLimit) {
  HttpRequestParser parser(Limits(16, 256));
  parser.Append("GET / HTTP/1.1\r\n");
  for (int i = 0; i < 30 && !parser.failed(); ++i) parser.Append("X: 12345\r\n");
  ASSERT_TRUE(parser.failed());
  EXPECT_EQ(parser.error_status(), 431);
}

TEST(HttpRequestParserTest, RequestsBeforeABadOneStillComeOut) {
  HttpRequestParser parser(Limits(16));
  parser.Append("GET /one HTTP/1.1\r\n\r\nBAD\r\n\r\n");
  EXPECT_TRUE(parser.failed());
  ASSERT_TRUE(parser.HasRequest());
  EXPECT_EQ(parser.TakeRequest().path, "/one");
  EXPECT_EQ(parser.error_status(), 400);
}

TEST(HttpRequestParserTest, FailedRequestKeepsItsPath) {
  HttpRequestParser parser(Limits(16));
  parser.Append("POST /v1/models/m:predict HTTP/1.1\r\nContent-Length: 99\r\n\r\n");
  ASSERT_TRUE(parser.failed());
  EXPECT_EQ(parser.failed_request().path, "/v1/models/m:predict");
}

}  // namespace
}  // namespace scopeflow
