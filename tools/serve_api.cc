#include "tools/serve_api.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "platform/status_macros.h"
#include "tools/serve_json.h"
#include "tools/serve_kserve_rest.h"
#include "tools/serve_tfserving_rest.h"

namespace scopeflow {
namespace {

constexpr char kV1Models[] = "/v1/models/";
constexpr char kEndpoints[] =
    "GET /v1/models/NAME[/versions/N][/metadata], "
    "POST /v1/models/NAME[/versions/N]:predict, GET /v2, "
    "GET /v2/health/live|ready, GET /v2/models/NAME[/versions/N][/ready], "
    "POST /v2/models/NAME[/versions/N]/infer, GET /healthz, GET /metrics";

HttpReply NoEndpoint(const ApiRequest& request) {
  return ErrorReply(absl::NotFoundError(
      absl::StrCat("no endpoint ", request.method, " ", request.path,
                   " (endpoints: ", kEndpoints, ")")));
}

// 405 for a path served with `allowed` only.
HttpReply WrongMethod(const ApiRequest& request, const char* allowed) {
  HttpReply reply;
  reply.status = 405;
  reply.body = ErrorJson(
      absl::StrCat(request.path, " takes ", allowed, ", not ", request.method));
  reply.headers.emplace_back("Allow", allowed);
  return reply;
}

HttpReply Json200(std::string body) {
  HttpReply reply;
  reply.body = std::move(body);
  return reply;
}

// A version in a path: a positive decimal number.
absl::StatusOr<int64_t> ParseVersion(absl::string_view text) {
  int64_t version = 0;
  SF_CHECK_CODE(absl::SimpleAtoi(text, &version) && version > 0 &&
                    !absl::StartsWith(text, "+"),
                absl::StatusCode::kNotFound,
                "version \"%s\" is not a positive number", text);
  return version;
}

HttpReply WithVersion(HttpReply reply, const ServedModel& model) {
  reply.headers.emplace_back("X-Model-Version", absl::StrCat(model.version));
  return reply;
}

absl::StatusOr<HttpReply> TfServingPredict(const ServedModel& model,
                                           const ApiRequest& api) {
  SF_ASSIGN_OR_RETURN(
      TfServingPredictRequest request,
      ParseTfServingPredict(api.body, model.predictor.inputs()));
  const int64_t instances = request.rows && !request.feeds.empty()
                                ? request.feeds[0].tensor.dim(0)
                                : 0;
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                      RunServedModel(model, std::move(request.feeds),
                                     api.context));
  SF_ASSIGN_OR_RETURN(std::string body_out,
                      TfServingPredictReply(model.predictor.outputs(), outputs,
                                            request.rows, instances));
  return Json200(std::move(body_out));
}

absl::StatusOr<HttpReply> KServeInfer(const ServedModel& model,
                                      const ApiRequest& request) {
  std::optional<size_t> header_length;
  if (!request.inference_header_length.empty()) {
    size_t length = 0;
    SF_CHECK(absl::SimpleAtoi(request.inference_header_length, &length),
             "%s is \"%s\"; expected a byte count", kInferenceHeaderLength,
             request.inference_header_length);
    header_length = length;
  }
  SF_ASSIGN_OR_RETURN(
      KServeInferRequest infer,
      ParseKServeInfer(request.body, header_length, model.predictor.inputs(),
                       model.predictor.outputs()));
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                      RunServedModel(model, std::move(infer.feeds),
                                     request.context));
  return KServeInferReply(model.name, model.version, model.predictor.outputs(),
                          infer, outputs);
}

HttpReply OrError(absl::StatusOr<HttpReply> reply) {
  return reply.ok() ? *std::move(reply) : ErrorReply(reply.status());
}

}  // namespace

Endpoint EndpointOfPath(absl::string_view path) {
  if (path == "/healthz" || absl::StartsWith(path, "/v2/health/") ||
      absl::EndsWith(path, "/ready")) {
    return Endpoint::kHealth;
  }
  if (path == "/metrics") return Endpoint::kMetrics;
  if (absl::StartsWith(path, "/v1/models/") ||
      absl::StartsWith(path, "/v2/models/") || path == "/v2") {
    return absl::EndsWith(path, ":predict") || absl::EndsWith(path, "/infer")
               ? Endpoint::kPredict
               : Endpoint::kMetadata;
  }
  return Endpoint::kOther;
}

ServeApi::ServeApi(const ModelRepository& models, const ServeMetrics& metrics)
    : models_(models), metrics_(metrics) {}

HttpReply ServeApi::Handle(const ApiRequest& request) const {
  const absl::string_view path = request.path;
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (path == "/healthz") {
    if (!get) return WrongMethod(request, "GET");
    if (!models_.ready()) {
      return ErrorReply(
          absl::UnavailableError("not every model has a version loaded yet"));
    }
    const std::vector<std::string> names = models_.names();
    if (names.size() == 1) {
      const absl::StatusOr<std::shared_ptr<const ServedModel>> model =
          models_.Resolve(names[0], 0);
      if (model.ok()) return Json200(HealthJson(names[0], (*model)->version));
    }
    return Json200(R"({"status":"ok"})");
  }
  if (path == "/metrics") {
    if (!get) return WrongMethod(request, "GET");
    HttpReply reply;
    reply.content_type = "text/plain; version=0.0.4";
    reply.body = metrics_.Render();
    return reply;
  }
  if (absl::StartsWith(path, kV1Models)) {
    return HandleV1(request, path.substr(sizeof(kV1Models) - 1));
  }
  if (path == "/v2" || absl::StartsWith(path, "/v2/")) {
    return HandleV2(request, path.substr(3));
  }
  return NoEndpoint(request);
}

HttpReply ServeApi::HandleV1(const ApiRequest& request,
                             absl::string_view rest) const {
  // NAME[/versions/N][/metadata] or NAME[/versions/N]:VERB.
  absl::string_view verb;
  const size_t colon = rest.rfind(':');
  const size_t slash = rest.rfind('/');
  if (colon != absl::string_view::npos &&
      (slash == absl::string_view::npos || colon > slash)) {
    verb = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  const std::string name(parts[0]);
  size_t next = 1;
  int64_t version = 0;
  if (parts.size() >= 3 && parts[1] == "versions") {
    absl::StatusOr<int64_t> parsed = ParseVersion(parts[2]);
    if (!parsed.ok()) return ErrorReply(parsed.status());
    version = *parsed;
    next = 3;
  } else if (parts.size() >= 2 && parts[1] == "labels") {
    return ErrorReply(absl::NotFoundError(
        "version labels are not supported; name a version (/versions/N)"));
  }
  const bool metadata = parts.size() == next + 1 && parts[next] == "metadata";
  if (name.empty() || (parts.size() != next && !metadata) ||
      (metadata && !verb.empty())) {
    return NoEndpoint(request);
  }
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (!verb.empty()) {
    if (verb != "predict") {
      return ErrorReply(absl::NotFoundError(
          absl::StrCat("no method :", verb, " (scopeflow serves :predict)")));
    }
    if (request.method != "POST") return WrongMethod(request, "POST");
    const absl::StatusOr<std::shared_ptr<const ServedModel>> model =
        models_.Resolve(name, version);
    if (!model.ok()) return ErrorReply(model.status());
    if (IsProtobufContentType(request.content_type)) {
      return WithVersion(Predict(**model, request.content_type, request.body,
                                 request.context),
                         **model);
    }
    return WithVersion(OrError(TfServingPredict(**model, request)), **model);
  }
  if (!get) return WrongMethod(request, "GET");
  if (metadata) {
    const absl::StatusOr<std::shared_ptr<const ServedModel>> model =
        models_.Resolve(name, version);
    if (!model.ok()) return ErrorReply(model.status());
    return Json200(TfServingMetadataJson(**model));
  }
  const std::shared_ptr<ModelManager> manager = models_.Find(name);
  if (manager == nullptr) return ErrorReply(models_.Resolve(name, 0).status());
  std::vector<VersionState> states = manager->versions();
  if (version != 0) {
    std::vector<VersionState> one;
    for (VersionState& state : states) {
      if (state.version == version) one.push_back(std::move(state));
    }
    if (one.empty()) {
      return ErrorReply(absl::NotFoundError(
          absl::StrCat("model \"", name, "\" has no version ", version,
                       " loaded or "
                       "failed")));
    }
    states = std::move(one);
  }
  return Json200(TfServingStatusJson(states));
}

HttpReply ServeApi::HandleV2(const ApiRequest& request,
                             absl::string_view rest) const {
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (rest.empty() || rest == "/health/live" || rest == "/health/ready") {
    if (!get) return WrongMethod(request, "GET");
    if (rest.empty()) return Json200(KServeServerMetadataJson());
    if (rest == "/health/ready" && !models_.ready()) {
      // KServe's "not ready" is a 4xx.
      HttpReply reply = ErrorReply(
          absl::UnavailableError("not every model has a version loaded yet"));
      reply.status = 400;
      return reply;
    }
    return Json200("");
  }
  if (!absl::StartsWith(rest, "/models/")) return NoEndpoint(request);
  const std::vector<absl::string_view> parts =
      absl::StrSplit(rest.substr(sizeof("/models/") - 1), '/');
  const std::string name(parts[0]);
  size_t next = 1;
  int64_t version = 0;
  if (parts.size() >= 3 && parts[1] == "versions") {
    absl::StatusOr<int64_t> parsed = ParseVersion(parts[2]);
    if (!parsed.ok()) return ErrorReply(parsed.status());
    version = *parsed;
    next = 3;
  }
  const absl::string_view action =
      parts.size() == next + 1 ? parts[next] : absl::string_view();
  if (name.empty() || parts.size() > next + 1 ||
      (parts.size() == next + 1 && action != "ready" && action != "infer")) {
    return NoEndpoint(request);
  }
  if (action == "infer") {
    if (request.method != "POST") return WrongMethod(request, "POST");
  } else if (!get) {
    return WrongMethod(request, "GET");
  }
  const absl::StatusOr<std::shared_ptr<const ServedModel>> model =
      models_.Resolve(name, version);
  if (action == "ready") {
    if (model.ok()) return Json200("");
    // KServe's "not ready" is a 4xx, for an unknown model or version too;
    // the body says which.
    HttpReply reply = ErrorReply(model.status());
    reply.status = 400;
    return reply;
  }
  if (!model.ok()) return ErrorReply(model.status());
  if (action == "infer") {
    return WithVersion(OrError(KServeInfer(**model, request)), **model);
  }
  return Json200(
      KServeModelMetadataJson(**model, models_.ServedVersions(name)));
}

}  // namespace scopeflow
