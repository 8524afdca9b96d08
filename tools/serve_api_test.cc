// Every REST endpoint of ServeApi over a repository of two models, then an
// HTTP client of each protocol against it through scopeflow's HTTP server.
#include "tools/serve_api.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "platform/file.h"
#include "tools/http_server.h"
#include "tools/serve_json_tensor.h"
#include "tools/serve_testing.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

// The image rows as JSON arrays.
std::string Rows(const Tensor& image) {
  std::string out;
  AppendNestedJson(out, image);
  return out;
}

std::vector<float> FloatsOf(const Json& value) {
  std::vector<float> out;
  if (value.is_array()) {
    for (const Json& element : value) {
      const std::vector<float> inner = FloatsOf(element);
      out.insert(out.end(), inner.begin(), inner.end());
    }
  } else {
    out.push_back(value.get<float>());
  }
  return out;
}

class ServeApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::path(std::getenv("TEST_TMPDIR")) / "repository").string();
    fs::remove_all(root_);
    ASSERT_TRUE(WriteMlpVersion(root_ + "/mlp", 1, 0).ok());
    ASSERT_TRUE(WriteMlpVersion(root_ + "/mlp", 2, 0.5).ok());
    ASSERT_TRUE(WriteMlpVersion(root_ + "/other", 7, 1).ok());
    const std::string config = root_ + "/models.config";
    ASSERT_TRUE(
        WriteFileAtomically(config,
                            "model_config_list {\n"
                            "  config { name: 'mlp' base_path: 'mlp'\n"
                            "    model_version_policy { all {} } }\n"
                            "  config { name: 'other' base_path: 'other' }\n"
                            "}\n")
            .ok());
    models_ = std::make_unique<ModelRepository>(
        [config] { return ReadModelConfigFile(config); }, PredictorOptions(),
        &metrics_);
    ASSERT_TRUE(models_->Load().ok());
    api_ = std::make_unique<ServeApi>(*models_, metrics_);
    parameters_ = *MlpParameters();
  }

  HttpReply Call(const std::string& method, const std::string& path,
                 const std::string& body = "",
                 const std::string& content_type = "application/json",
                 const std::string& header_length = "") {
    return api_->Handle(
        ApiRequest{method, path, content_type, header_length, body});
  }

  // The probabilities of version `version` of "mlp" for `image`, by running
  // its predictor directly.
  std::vector<float> Direct(int64_t version, const Tensor& image) {
    const std::shared_ptr<const ServedModel> model =
        *models_->Resolve("mlp", version);
    absl::StatusOr<std::vector<Tensor>> out =
        model->predictor.Run({Feed{"image", image}});
    EXPECT_TRUE(out.ok()) << out.status();
    const Tensor& p = (*out)[0];
    return std::vector<float>(p.data<float>(), p.data<float>() + p.numel());
  }

  std::string root_;
  ServeMetrics metrics_;
  std::unique_ptr<ModelRepository> models_;
  std::unique_ptr<ServeApi> api_;
  std::unique_ptr<Scope> parameters_;
};

void ExpectError(const HttpReply& reply, int status,
                 const std::string& message) {
  EXPECT_EQ(reply.status, status) << reply.body;
  const Json body = Json::parse(reply.body, nullptr, false);
  ASSERT_TRUE(body.is_object() && body.contains("error")) << reply.body;
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr(message));
}

TEST_F(ServeApiTest, TfServingPredictRowsAndColumns) {
  const Tensor image = MlpInput(2, 3);
  // Version 1 is the fixture's parameters: compare with the hand-computed
  // reference.
  const HttpReply rows =
      Call("POST", "/v1/models/mlp/versions/1:predict",
           absl::StrCat(R"({"instances": )", Rows(image), "}"));
  ASSERT_EQ(rows.status, 200) << rows.body;
  EXPECT_THAT(rows.headers, ::testing::Contains(Pair("X-Model-Version", "1")));
  const Json predictions = Json::parse(rows.body)["predictions"];
  ASSERT_EQ(predictions.size(), 2);
  ASSERT_EQ(predictions[0].size(), 10);
  const std::vector<double> reference = ReferenceMlp(*parameters_, image);
  const std::vector<float> got = FloatsOf(predictions);
  for (size_t i = 0; i < reference.size(); ++i) {
    EXPECT_NEAR(got[i], reference[i], 1e-5) << i;
  }
  // Without a version: the newest (2), in columns, named or not.
  for (const std::string& body :
       {absl::StrCat(R"({"inputs": )", Rows(image), "}"),
        absl::StrCat(R"({"inputs": {"image": )", Rows(image), "}}")}) {
    const HttpReply columns = Call("POST", "/v1/models/mlp:predict", body);
    ASSERT_EQ(columns.status, 200) << columns.body;
    EXPECT_THAT(columns.headers,
                ::testing::Contains(Pair("X-Model-Version", "2")));
    const Json outputs = Json::parse(columns.body)["outputs"];
    ASSERT_TRUE(outputs.is_array()) << columns.body;
    EXPECT_EQ(FloatsOf(outputs), Direct(2, image));
  }
  EXPECT_NE(Direct(1, image), Direct(2, image));
}

TEST_F(ServeApiTest, TfServingStatusAndMetadata) {
  const HttpReply status = Call("GET", "/v1/models/mlp");
  ASSERT_EQ(status.status, 200);
  EXPECT_EQ(Json::parse(status.body), Json::parse(R"({"model_version_status": [
    {"version": "1", "state": "AVAILABLE",
     "status": {"error_code": "OK", "error_message": ""}},
    {"version": "2", "state": "AVAILABLE",
     "status": {"error_code": "OK", "error_message": ""}}]})"));
  const HttpReply one = Call("GET", "/v1/models/mlp/versions/0002");
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(Json::parse(one.body)["model_version_status"].size(), 1);
  EXPECT_EQ(Json::parse(one.body)["model_version_status"][0]["version"], "2");

  const HttpReply metadata = Call("GET", "/v1/models/mlp/versions/1/metadata");
  ASSERT_EQ(metadata.status, 200) << metadata.body;
  EXPECT_EQ(Json::parse(metadata.body), Json::parse(R"({
    "model_spec": {"name": "mlp", "signature_name": "", "version": "1"},
    "metadata": {"signature_def": {"signature_def": {"serving_default": {
      "inputs": {"image": {"dtype": "DT_FLOAT", "name": "image",
        "tensor_shape": {"dim": [{"size": "-1", "name": ""},
                                 {"size": "64", "name": ""}],
                         "unknown_rank": false}}},
      "outputs": {"probabilities": {"dtype": "DT_FLOAT",
        "name": "probabilities",
        "tensor_shape": {"dim": [{"size": "-1", "name": ""},
                                 {"size": "10", "name": ""}],
                         "unknown_rank": false}}},
      "method_name": "tensorflow/serving/predict"}}}}})"));
}

TEST_F(ServeApiTest, KServeEndpoints) {
  EXPECT_EQ(Call("GET", "/v2/health/live").status, 200);
  EXPECT_EQ(Call("GET", "/v2/health/ready").status, 200);
  EXPECT_EQ(Call("GET", "/v2/models/mlp/ready").status, 200);
  EXPECT_EQ(Call("GET", "/v2/models/mlp/versions/1/ready").status, 200);
  EXPECT_EQ(Call("GET", "/v2/models/mlp/versions/3/ready").status, 400);
  EXPECT_EQ(Call("GET", "/v2/models/nope/ready").status, 400);
  EXPECT_EQ(Json::parse(Call("GET", "/v2").body)["extensions"][0],
            "binary_tensor_data");
  EXPECT_EQ(Json::parse(Call("GET", "/v2/models/mlp").body), Json::parse(R"({
    "name": "mlp", "versions": ["1", "2"], "platform": "scopeflow",
    "inputs": [{"name": "image", "datatype": "FP32", "shape": [-1, 64]}],
    "outputs": [{"name": "probabilities", "datatype": "FP32",
                 "shape": [-1, 10]}]})"));

  // A version's metadata lists every version served.
  const HttpReply versioned = Call("GET", "/v2/models/mlp/versions/1");
  ASSERT_EQ(versioned.status, 200) << versioned.body;
  EXPECT_EQ(Json::parse(versioned.body)["versions"],
            Json::parse(R"(["1", "2"])"));
  ExpectError(Call("GET", "/v2/models/mlp/versions/4"), 404,
              "no version 4 served");

  const Tensor image = MlpInput(3, 1);
  std::string data;
  AppendFlatJson(data, image);
  const HttpReply json = Call(
      "POST", "/v2/models/mlp/versions/1/infer",
      absl::StrCat(R"({"id": "a", "inputs": [{"name": "image", "shape": [3, 64],
                     "datatype": "FP32", "data": )",
                   data, "}]}"));
  ASSERT_EQ(json.status, 200) << json.body;
  const Json reply = Json::parse(json.body);
  EXPECT_EQ(reply["model_name"], "mlp");
  EXPECT_EQ(reply["model_version"], "1");
  EXPECT_EQ(reply["id"], "a");
  EXPECT_EQ(reply["outputs"][0]["shape"], Json::parse("[3, 10]"));
  EXPECT_EQ(FloatsOf(reply["outputs"][0]["data"]), Direct(1, image));

  // Binary in and out.
  const std::string header =
      R"({"inputs": [{"name": "image", "shape": [3, 64], "datatype": "FP32",
          "parameters": {"binary_data_size": 768}}],
          "outputs": [{"name": "probabilities",
                       "parameters": {"binary_data": true}}]})";
  std::string body = header;
  body.append(static_cast<const char*>(image.raw_data()), image.nbytes());
  const HttpReply binary =
      Call("POST", "/v2/models/mlp/infer", body, "application/octet-stream",
           absl::StrCat(header.size()));
  ASSERT_EQ(binary.status, 200) << binary.body;
  ASSERT_EQ(binary.headers.size(), 2);
  EXPECT_EQ(binary.headers[0].first, "Inference-Header-Content-Length");
  const size_t length = std::stoul(binary.headers[0].second);
  ASSERT_EQ(binary.body.size(), length + 3 * 10 * 4);
  std::vector<float> got(30);
  std::memcpy(got.data(), binary.body.data() + length, 120);
  EXPECT_EQ(got, Direct(2, image));
}

TEST(EndpointOfPathTest, CountsEachProtocolsPaths) {
  EXPECT_EQ(EndpointOfPath("/v1/models/m:predict"), Endpoint::kPredict);
  EXPECT_EQ(EndpointOfPath("/v1/models/m/versions/2:predict"),
            Endpoint::kPredict);
  EXPECT_EQ(EndpointOfPath("/v2/models/m/versions/2/infer"),
            Endpoint::kPredict);
  EXPECT_EQ(EndpointOfPath("/v1/models/m/metadata"), Endpoint::kMetadata);
  EXPECT_EQ(EndpointOfPath("/v2/models/m"), Endpoint::kMetadata);
  EXPECT_EQ(EndpointOfPath("/v2"), Endpoint::kMetadata);
  EXPECT_EQ(EndpointOfPath("/v2/health/live"), Endpoint::kHealth);
  EXPECT_EQ(EndpointOfPath("/v2/models/m/ready"), Endpoint::kHealth);
  EXPECT_EQ(EndpointOfPath("/healthz"), Endpoint::kHealth);
  EXPECT_EQ(EndpointOfPath("/metrics"), Endpoint::kMetrics);
  EXPECT_EQ(EndpointOfPath("/favicon.ico"), Endpoint::kOther);
}

TEST_F(ServeApiTest, ErrorsByPathMethodAndModel) {
  ExpectError(Call("GET", "/v1/models/nope"), 404,
              "unknown model \"nope\" (this server serves: mlp, other)");
  ExpectError(Call("POST", "/v1/models/nope:predict", "{}"), 404,
              "unknown model \"nope\"");
  ExpectError(Call("GET", "/v1/models/mlp/versions/9"), 404,
              "no version 9 loaded or failed");
  ExpectError(Call("GET", "/v1/models/mlp/versions/x/metadata"), 404,
              "version \"x\" is not a positive number");
  ExpectError(Call("POST", "/v1/models/mlp/versions/9:predict", "{}"), 404,
              "no version 9 served (versions served: 1, 2)");
  ExpectError(Call("POST", "/v1/models/mlp:classify", "{}"), 404,
              "no method :classify");
  ExpectError(Call("GET", "/v1/models/mlp/labels/stable"), 404,
              "version labels are not supported");
  ExpectError(Call("GET", "/v1/models/mlp/extra"), 404, "no endpoint GET");
  ExpectError(Call("GET", "/v3"), 404, "no endpoint GET /v3");
  const HttpReply wrong = Call("GET", "/v1/models/mlp:predict");
  ExpectError(wrong, 405, "takes POST, not GET");
  EXPECT_THAT(wrong.headers, ::testing::Contains(Pair("Allow", "POST")));
  ExpectError(Call("POST", "/v1/models/mlp"), 405, "takes GET, not POST");
  ExpectError(Call("DELETE", "/v2/models/mlp/infer"), 405, "takes POST");
  ExpectError(Call("POST", "/v2/health/live"), 405, "takes GET");
  ExpectError(Call("POST", "/healthz"), 405, "takes GET");
  ExpectError(Call("POST", "/v1/models/mlp:predict", R"({"inputs": [[1]]})"),
              400, "expected shape [-1, 64], got [1, 1]");
  ExpectError(Call("POST", "/v2/models/mlp/infer", R"({"inputs": 1})"), 400,
              "no \"inputs\" array");
  ExpectError(
      Call("POST", "/v2/models/mlp/infer", "{}", "application/json", "many"),
      400, "Inference-Header-Content-Length is \"many\"");
}

// The JSON limits answer 400 in every protocol, naming what was wrong.
TEST_F(ServeApiTest, DeepOrDuplicatedJsonIs400) {
  const std::string deep(1 << 20, '[');
  for (const char* path :
       {"/v1/models/mlp:predict", "/v2/models/mlp/infer"}) {
    ExpectError(Call("POST", path, deep), 400,
                "nests arrays and objects deeper than 24 levels (the limit)");
  }
  const std::string row = Rows(MlpInput(1, 0));
  ExpectError(Call("POST", "/v1/models/mlp:predict",
                   absl::StrCat(R"({"instances": )", row,
                                R"(, "instances": )", row, "}")),
              400, "gives key \"instances\" twice");
  ExpectError(
      Call("POST", "/v2/models/mlp/infer",
           absl::StrCat(R"({"inputs": [{"name": "image", "shape": [1, 64],
                            "datatype": "FP32", "datatype": "FP32", "data": )",
                        row, "}]}")),
      400, "gives key \"datatype\" twice");
}

TEST_F(ServeApiTest, HealthAndMetrics) {
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  ASSERT_EQ(Call("POST", "/v1/models/other:predict",
                 absl::StrCat(R"({"instances": )", Rows(MlpInput(1, 0)), "}"))
                .status,
            200);
  const HttpReply metrics = Call("GET", "/metrics");
  EXPECT_THAT(metrics.content_type, StartsWith("text/plain"));
  EXPECT_THAT(metrics.body,
              HasSubstr("scopeflow_batch_size_count{model=\"other\","
                        "version=\"7\"} 1\n"));
  EXPECT_THAT(metrics.body,
              HasSubstr("scopeflow_compute_duration_seconds_count{model="
                        "\"other\",version=\"7\"} 1\n"));
  EXPECT_THAT(metrics.body, HasSubstr("scopeflow_model_version_served{model="
                                      "\"mlp\",version=\"1\"} 1\n"));
  // A model with no version loaded makes the server not ready.
  fs::create_directories(root_ + "/broken/1");
  ASSERT_TRUE(WriteFileAtomically(root_ + "/models.config",
                                  "model_config_list {\n"
                                  "  config { name: 'mlp' base_path: 'mlp' }\n"
                                  "  config { name: 'broken' base_path: "
                                  "'broken' }\n"
                                  "}\n")
                  .ok());
  EXPECT_FALSE(models_->Poll().ok());
  EXPECT_EQ(Call("GET", "/healthz").status, 503);
  EXPECT_EQ(Call("GET", "/v2/health/ready").status, 400);
  EXPECT_EQ(Call("GET", "/v2/health/live").status, 200);
  ExpectError(Call("POST", "/v1/models/broken:predict", "{}"), 503,
              "model \"broken\" has no version loaded");
  const HttpReply status = Call("GET", "/v1/models/broken");
  EXPECT_EQ(Json::parse(status.body)["model_version_status"][0]["state"],
            "END");
  // mlp went back to its newest version only; other was unloaded.
  EXPECT_EQ(models_->ServedVersions("mlp"), std::vector<int64_t>{2});
  ExpectError(Call("GET", "/v2/models/other"), 404, "unknown model");
}

// Clients of each protocol over HTTP, through scopeflow serve's own
// server (tools/http_server.h), which hands every request to ServeApi.
TEST_F(ServeApiTest, HttpClientsOfBothProtocols) {
  HttpServerOptions options;
  options.port = 0;
  options.threads = 2;
  HttpServer server(*models_, metrics_, options);
  ASSERT_TRUE(server.Bind().ok());
  absl::Status served;
  std::thread serving([&] { served = server.Serve(); });
  httplib::Client client("127.0.0.1", server.port());

  const Tensor image = MlpInput(1, 5);
  httplib::Result tf = client.Post(
      "/v1/models/mlp:predict",
      absl::StrCat(R"({"instances": )", Rows(image), "}"), "application/json");
  ASSERT_TRUE(tf) << httplib::to_string(tf.error());
  EXPECT_EQ(tf->status, 200) << tf->body;
  EXPECT_EQ(FloatsOf(Json::parse(tf->body)["predictions"]), Direct(2, image));

  const std::string header =
      R"({"inputs": [{"name": "image", "shape": [1, 64], "datatype": "FP32",
          "parameters": {"binary_data_size": 256}}],
          "parameters": {"binary_data_output": true}})";
  std::string body = header;
  body.append(static_cast<const char*>(image.raw_data()), image.nbytes());
  httplib::Headers headers = {
      {"Inference-Header-Content-Length", absl::StrCat(header.size())}};
  httplib::Result kserve =
      client.Post("/v2/models/mlp/versions/1/infer", headers, body,
                  "application/octet-stream");
  ASSERT_TRUE(kserve) << httplib::to_string(kserve.error());
  ASSERT_EQ(kserve->status, 200) << kserve->body;
  const size_t length =
      std::stoul(kserve->get_header_value("Inference-Header-Content-Length"));
  ASSERT_EQ(kserve->body.size(), length + 40);
  std::vector<float> got(10);
  std::memcpy(got.data(), kserve->body.data() + length, 40);
  EXPECT_EQ(got, Direct(1, image));

  httplib::Result live = client.Get("/v2/health/live");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  // The other model answers on the same port.
  httplib::Result other = client.Get("/v1/models/other/metadata");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200) << other->body;
  EXPECT_EQ(Json::parse(other->body)["model_spec"]["version"], "7");
  server.Stop();
  serving.join();
  EXPECT_TRUE(served.ok()) << served;
}

}  // namespace
}  // namespace scopeflow
