// Every HTTP endpoint of `scopeflow serve` above the transport: a request's
// method, path, headers and body in, the reply out. The transport
// (tools/http_server.h) reads requests and writes replies; this routes them
// to the models of a ModelRepository in each protocol's forms:
//
// TensorFlow Serving's REST API (tools/serve_tfserving_rest.h):
//   GET  /v1/models/NAME[/versions/N]             version status
//   GET  /v1/models/NAME[/versions/N]/metadata    signature
//   POST /v1/models/NAME[/versions/N]:predict     rows or columns; a body of
//        Content-Type application/x-protobuf is scopeflow's PredictRequest
//        (proto/serving.proto)
// KServe v2 / Triton (tools/serve_kserve_rest.h):
//   GET  /v2                                       server metadata
//   GET  /v2/health/live, /v2/health/ready         200, or 400 not ready
//   GET  /v2/models/NAME[/versions/N]              model metadata
//   GET  /v2/models/NAME[/versions/N]/ready        200, or 400 not ready
//   POST /v2/models/NAME[/versions/N]/infer        JSON or binary tensors
// And GET /healthz (200 once every model has a version) and GET /metrics
// (Prometheus text, tools/serve_metrics.h).
//
// Without a version the newest version served answers. Errors are
// {"error": "..."}: 400 bad input, 404 unknown path, model or version, 405
// a known path with another method (with Allow), 503 a model with no
// version loaded.
#ifndef SCOPEFLOW_TOOLS_SERVE_API_H_
#define SCOPEFLOW_TOOLS_SERVE_API_H_

#include <string>

#include "absl/strings/string_view.h"
#include "tools/serve_metrics.h"
#include "tools/serve_predict.h"
#include "tools/serve_repository.h"

namespace scopeflow {

struct ApiRequest {
  std::string method;
  // The path, without the query string.
  std::string path;
  std::string content_type;
  // The Inference-Header-Content-Length header; "" when absent.
  std::string inference_header_length;
  absl::string_view body;
  // How predict and infer requests run: their cancellation (deadline,
  // client gone) and batcher. Both may be null.
  PredictContext context;
};

// Which metric a path counts under.
Endpoint EndpointOfPath(absl::string_view path);

// Thread-safe: Handle may be called from any number of threads. It runs a
// model only for POST .../NAME...:predict and .../NAME.../infer; every
// other request it answers in microseconds.
class ServeApi {
 public:
  // Both must outlive this.
  ServeApi(const ModelRepository& models, const ServeMetrics& metrics);

  HttpReply Handle(const ApiRequest& request) const;

 private:
  HttpReply HandleV1(const ApiRequest& request, absl::string_view rest) const;
  HttpReply HandleV2(const ApiRequest& request, absl::string_view rest) const;

  const ModelRepository& models_;
  const ServeMetrics& metrics_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_API_H_
