// Fuzz target for what `scopeflow serve` reads from the network: each input
// is the bytes a client sends on one connection. They go through the HTTP
// request parser (in pieces, as a socket delivers them) and every request
// it completes to ServeApi over a repository serving the MLP of
// examples/mlp: TensorFlow Serving's rows, columns and PredictRequest
// protobuf bodies and KServe v2's JSON and binary tensors are decoded and,
// when they decode, the model runs on them. Every input must end in
// replies and a parser error, never a crash, a hang or undefined
// behaviour; a reply of 500 (an error the server could not put down to
// the request) aborts, as a bug.
// Runs under Bazel only (tools/fuzz/BUILD: replayed in the default tests,
// fuzzed in CI's mutation_tests): tools/fuzz/build.sh does not build the
// server's sources.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tools/http_message.h"
#include "tools/http_request_parser.h"
#include "tools/serve_api.h"
#include "tools/serve_kserve_rest.h"
#include "tools/serve_metrics.h"
#include "tools/serve_repository.h"
#include "tools/serve_testing.h"

namespace {

struct Server {
  scopeflow::ServeMetrics metrics;
  std::unique_ptr<scopeflow::ModelRepository> models;
  std::unique_ptr<scopeflow::ServeApi> api;
};

Server* server = nullptr;

// Small limits, so that inputs reach them.
constexpr scopeflow::HttpParseLimits kLimits{4096, 1 << 16};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "request_fuzzer: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One model, "mlp", version 1, in a folder of its own.
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") +
                    "/request_fuzzer.XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) Fail("mkdtemp failed");
  const absl::Status written =
      scopeflow::WriteMlpVersion(dir + "/mlp", 1, 0);
  if (!written.ok()) Fail(std::string(written.message()));
  server = new Server;
  server->models = std::make_unique<scopeflow::ModelRepository>(
      [dir]() -> absl::StatusOr<std::vector<scopeflow::ModelSource>> {
        return std::vector<scopeflow::ModelSource>{
            {"mlp", dir + "/mlp", scopeflow::VersionPolicy()}};
      },
      scopeflow::PredictorOptions(), &server->metrics);
  const absl::Status loaded = server->models->Load();
  if (!loaded.ok()) Fail(std::string(loaded.message()));
  server->api =
      std::make_unique<scopeflow::ServeApi>(*server->models, server->metrics);
  // The model's files were read whole; the folder is not needed again.
  std::filesystem::remove_all(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  scopeflow::HttpRequestParser parser(kLimits);
  // A socket delivers bytes in pieces; their size follows from the input's
  // so that the pieces vary with it.
  const size_t piece = 1 + size % 61;
  for (size_t at = 0; at < bytes.size() && !parser.failed(); at += piece) {
    parser.Append(bytes.substr(at, piece));
    parser.TakeContinue();
    while (parser.HasRequest()) {
      const scopeflow::HttpRequest request = parser.TakeRequest();
      const scopeflow::HttpReply reply = server->api->Handle(
          scopeflow::ApiRequest{
              request.method, request.path,
              request.get_header_value("Content-Type"),
              request.get_header_value(scopeflow::kInferenceHeaderLength),
              request.body});
      if (reply.status == 500) {
        Fail(request.method + " " + request.path + ": 500 " + reply.body);
      }
    }
  }
  return 0;
}
