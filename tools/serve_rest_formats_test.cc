// The REST bodies of TensorFlow Serving and KServe v2, checked against the
// request and reply examples of their documentation (adapted where an
// example uses a dtype scopeflow lacks: strings, UINT32).
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/serve_kserve_rest.h"
#include "tools/serve_tfserving_rest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

TensorInfo Info(const std::string& name, DataType dtype, Dims dims) {
  TensorInfo info;
  info.name = name;
  info.dtype = dtype;
  info.dims = dims;
  info.has_dims = true;
  return info;
}

template <typename T>
Tensor Make(DataType dtype, Dims dims, std::vector<T> values) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), dtype, dims).ok());
  std::memcpy(tensor.raw_data(), values.data(), values.size() * sizeof(T));
  return tensor;
}

template <typename T>
std::vector<T> Elements(const Tensor& tensor) {
  return std::vector<T>(tensor.data<T>(), tensor.data<T>() + tensor.numel());
}

// half_plus_two of TensorFlow Serving's REST documentation: one input "x"
// and one output "y", both float32 of any length.
const std::vector<TensorInfo> kHalfPlusTwoIn = {Info("x", kFloat32, {-1})};
const std::vector<TensorInfo> kHalfPlusTwoOut = {Info("y", kFloat32, {-1})};

TEST(TfServingRestTest, HalfPlusTwoRows) {
  // curl -d '{"instances": [1.0, 2.0, 5.0]}' .../half_plus_two:predict
  absl::StatusOr<TfServingPredictRequest> request = ParseTfServingPredict(
      R"({"instances": [1.0, 2.0, 5.0]})", kHalfPlusTwoIn);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->rows);
  ASSERT_EQ(request->feeds.size(), 1);
  EXPECT_EQ(request->feeds[0].name, "x");
  EXPECT_THAT(Elements<float>(request->feeds[0].tensor),
              ElementsAre(1.0f, 2.0f, 5.0f));
  // { "predictions": [2.5, 3.0, 4.5] }
  const absl::StatusOr<std::string> reply = TfServingPredictReply(
      kHalfPlusTwoOut, {Make<float>(kFloat32, {3}, {2.5f, 3.0f, 4.5f})}, true,
      3);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(Json::parse(*reply),
            Json::parse(R"({ "predictions": [2.5, 3.0, 4.5] })"));
}

TEST(TfServingRestTest, HalfPlusTwoColumnsUnnamed) {
  absl::StatusOr<TfServingPredictRequest> request = ParseTfServingPredict(
      R"({"signature_name": "serving_default", "inputs": [1.0, 2.0, 5.0]})",
      kHalfPlusTwoIn);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_FALSE(request->rows);
  EXPECT_THAT(Elements<float>(request->feeds[0].tensor),
              ElementsAre(1.0f, 2.0f, 5.0f));
  // A single output is the bare value of "outputs".
  const absl::StatusOr<std::string> reply = TfServingPredictReply(
      kHalfPlusTwoOut, {Make<float>(kFloat32, {3}, {2.5f, 3.0f, 4.5f})}, false,
      0);
  EXPECT_EQ(Json::parse(*reply),
            Json::parse(R"({"outputs": [2.5, 3.0, 4.5]})"));
}

// The documentation's example of several named inputs, as rows and as
// columns (without its string input "tag").
const std::vector<TensorInfo> kSignalSensor = {
    Info("signal", kInt32, {-1, 5}), Info("sensor", kFloat32, {-1, 2, 2})};

TEST(TfServingRestTest, NamedInputsAsRowsAndColumnsAgree) {
  absl::StatusOr<TfServingPredictRequest> rows = ParseTfServingPredict(
      R"({
        "instances": [
          {"signal": [1, 2, 3, 4, 5], "sensor": [[1, 2], [3, 4]]},
          {"signal": [3, 4, 1, 2, 5], "sensor": [[4, 5], [6, 8]]}
        ]
      })",
      kSignalSensor);
  ASSERT_TRUE(rows.ok()) << rows.status();
  absl::StatusOr<TfServingPredictRequest> columns = ParseTfServingPredict(
      R"({
        "inputs": {
          "signal": [[1, 2, 3, 4, 5], [3, 4, 1, 2, 5]],
          "sensor": [[[1, 2], [3, 4]], [[4, 5], [6, 8]]]
        }
      })",
      kSignalSensor);
  ASSERT_TRUE(columns.ok()) << columns.status();
  ASSERT_EQ(rows->feeds.size(), 2);
  ASSERT_EQ(columns->feeds.size(), 2);
  for (const TfServingPredictRequest* request : {&*rows, &*columns}) {
    const Feed& signal =
        request->feeds[request->feeds[0].name == "signal" ? 0 : 1];
    const Feed& sensor =
        request->feeds[request->feeds[0].name == "signal" ? 1 : 0];
    EXPECT_EQ(signal.tensor.dims(), Dims({2, 5}));
    EXPECT_THAT(Elements<int32_t>(signal.tensor),
                ElementsAre(1, 2, 3, 4, 5, 3, 4, 1, 2, 5));
    EXPECT_EQ(sensor.tensor.dims(), Dims({2, 2, 2}));
    EXPECT_THAT(Elements<float>(sensor.tensor),
                ElementsAre(1, 2, 3, 4, 4, 5, 6, 8));
  }
}

TEST(TfServingRestTest, SeveralOutputsPerRowAndPerColumn) {
  const std::vector<TensorInfo> outputs = {Info("output1", kInt64, {-1, 2}),
                                           Info("output2", kFloat32, {-1})};
  const std::vector<Tensor> tensors = {
      Make<int64_t>(kInt64, {2, 2}, {1, 2, 3, 4}),
      Make<float>(kFloat32, {2}, {3.0f, 4.5f})};
  // {"predictions": [{"output1": [1, 2], "output2": 3.0}, ...]}
  EXPECT_EQ(Json::parse(*TfServingPredictReply(outputs, tensors, true, 2)),
            Json::parse(R"({"predictions": [
              {"output1": [1, 2], "output2": 3.0},
              {"output1": [3, 4], "output2": 4.5}]})"));
  EXPECT_EQ(Json::parse(*TfServingPredictReply(outputs, tensors, false, 0)),
            Json::parse(R"({"outputs": {"output1": [[1, 2], [3, 4]],
                                        "output2": [3.0, 4.5]}})"));
  // Rows need one row per instance in every output.
  EXPECT_THAT(
      TfServingPredictReply(outputs, tensors, true, 3).status().message(),
      HasSubstr("output \"output1\" has shape [2, 2], not one row per "
                "instance (3)"));
}

TEST(TfServingRestTest, BadBodiesSayWhy) {
  auto error = [](const std::string& body,
                  const std::vector<TensorInfo>& inputs) {
    const absl::Status status = ParseTfServingPredict(body, inputs).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << body;
    return std::string(status.message());
  };
  EXPECT_THAT(error(R"({"instances": [1.0, )", kHalfPlusTwoIn),
              HasSubstr("malformed JSON"));
  EXPECT_THAT(error(R"({"instances": [1], "inputs": [1]})", kHalfPlusTwoIn),
              HasSubstr("both \"instances\" and \"inputs\""));
  EXPECT_THAT(error(R"({"signature_name": "serving_default"})", kHalfPlusTwoIn),
              HasSubstr("neither \"instances\""));
  EXPECT_THAT(error(R"({"examples": []})", kHalfPlusTwoIn),
              HasSubstr("unknown field \"examples\""));
  EXPECT_THAT(
      error(R"({"signature_name": "classify", "inputs": [1]})", kHalfPlusTwoIn),
      HasSubstr("unknown signature_name \"classify\""));
  EXPECT_THAT(error(R"({"instances": []})", kHalfPlusTwoIn),
              HasSubstr("an empty array"));
  EXPECT_THAT(error(R"({"instances": [[1, 2], [3]]})", kHalfPlusTwoIn),
              HasSubstr("every instance's \"x\" has the same shape"));
  EXPECT_THAT(
      error(R"({"instances": [{"signal": [1, 2, 3, 4, 5]}]})", kSignalSensor),
      HasSubstr("instance 0 lacks the input \"sensor\""));
  EXPECT_THAT(error(R"({"instances": [[1, 2, 3, 4, 5]]})", kSignalSensor),
              HasSubstr("the model has 2 inputs (signal, sensor)"));
  EXPECT_THAT(error(R"({"inputs": [[1, 2, 3, 4, 5]]})", kSignalSensor),
              HasSubstr("\"inputs\" is an array; the model has 2 inputs"));
  EXPECT_THAT(error(R"({"inputs": {"x": [1], "z": [2]}})", kHalfPlusTwoIn),
              HasSubstr("unknown input \"z\" (the model's inputs: x)"));
  EXPECT_THAT(error(R"({"inputs": {"signal": [["a"]]}})", kSignalSensor),
              HasSubstr("dtype int32 needs integers"));
}

TEST(TfServingRestTest, StatusLikeTheDocumentation) {
  // {"model_version_status": [{"version": "123", "state": "AVAILABLE",
  //   "status": {"error_code": "OK", "error_message": ""}}]}
  EXPECT_EQ(Json::parse(TfServingStatusJson(
                {VersionState{123, true, absl::OkStatus()}})),
            Json::parse(R"({"model_version_status": [{"version": "123",
              "state": "AVAILABLE", "status": {"error_code": "OK",
              "error_message": ""}}]})"));
  EXPECT_EQ(Json::parse(TfServingStatusJson({VersionState{
                7, false,
                absl::InvalidArgumentError(
                    "model folder m/7: bad")}}))["model_version_status"][0],
            Json::parse(R"({"version": "7", "state": "END", "status": {
        "error_code": "INVALID_ARGUMENT",
        "error_message": "model folder m/7: bad"}})"));
}

// The KServe v2 specification's inference example (UINT32 made INT32, and
// the BOOL input given all three of its values).
const std::vector<TensorInfo> kMyModelIn = {Info("input0", kInt32, {2, 2}),
                                            Info("input1", kBool, {3})};
const std::vector<TensorInfo> kMyModelOut = {Info("output0", kFloat32, {3, 2}),
                                             Info("output1", kInt32, {2, 2})};

TEST(KServeRestTest, SpecificationsJsonExample) {
  absl::StatusOr<KServeInferRequest> request = ParseKServeInfer(
      R"({
        "id" : "42",
        "inputs" : [
          {"name" : "input0", "shape" : [ 2, 2 ], "datatype" : "INT32",
           "data" : [ 1, 2, 3, 4 ]},
          {"name" : "input1", "shape" : [ 3 ], "datatype" : "BOOL",
           "data" : [ true, false, true ]}
        ],
        "outputs" : [ {"name" : "output0"} ]
      })",
      std::nullopt, kMyModelIn, kMyModelOut);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->id, "42");
  ASSERT_EQ(request->feeds.size(), 2);
  EXPECT_EQ(request->feeds[0].tensor.dims(), Dims({2, 2}));
  EXPECT_THAT(Elements<int32_t>(request->feeds[0].tensor),
              ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Elements<bool>(request->feeds[1].tensor),
              ElementsAre(true, false, true));
  EXPECT_THAT(request->outputs, ElementsAre(0));

  const HttpReply reply = KServeInferReply(
      "mymodel", 1, kMyModelOut, *request,
      {Make<float>(kFloat32, {3, 2}, {1.0f, 1.1f, 2.0f, 2.1f, 3.0f, 3.1f}),
       Make<int32_t>(kInt32, {2, 2}, {10, 11, 12, 13})});
  EXPECT_EQ(reply.status, 200);
  EXPECT_TRUE(reply.headers.empty());
  EXPECT_EQ(Json::parse(reply.body), Json::parse(R"({
    "model_name": "mymodel", "model_version": "1", "id" : "42",
    "outputs" : [{"name" : "output0", "shape" : [ 3, 2 ],
                  "datatype"  : "FP32",
                  "data" : [ 1.0, 1.1, 2.0, 2.1, 3.0, 3.1 ]}]})"));
}

TEST(KServeRestTest, SpecificationsBinaryExample) {
  const std::string json = R"({
    "model_name" : "mymodel",
    "inputs" : [
      {"name" : "input0", "shape" : [ 2, 2 ], "datatype" : "INT32",
       "parameters" : {"binary_data_size" : 16}},
      {"name" : "input1", "shape" : [ 3 ], "datatype" : "BOOL",
       "parameters" : {"binary_data_size" : 3}}
    ],
    "outputs" : [
      {"name" : "output0", "parameters" : {"binary_data" : true}},
      {"name" : "output1"}
    ]
  })";
  const int32_t input0[] = {1, 2, 3, 4};
  const bool input1[] = {true, false, true};
  std::string body = json;
  body.append(reinterpret_cast<const char*>(input0), sizeof(input0));
  body.append(reinterpret_cast<const char*>(input1), sizeof(input1));
  absl::StatusOr<KServeInferRequest> request =
      ParseKServeInfer(body, json.size(), kMyModelIn, kMyModelOut);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(Elements<int32_t>(request->feeds[0].tensor),
              ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Elements<bool>(request->feeds[1].tensor),
              ElementsAre(true, false, true));
  EXPECT_THAT(request->binary, ElementsAre(true, false));

  const std::vector<float> output0 = {1.0f, 1.1f, 2.0f, 2.1f, 3.0f, 3.1f};
  const HttpReply reply =
      KServeInferReply("mymodel", 2, kMyModelOut, *request,
                       {Make<float>(kFloat32, {3, 2}, output0),
                        Make<int32_t>(kInt32, {2, 2}, {10, 11, 12, 13})});
  EXPECT_EQ(reply.content_type, "application/octet-stream");
  ASSERT_EQ(reply.headers.size(), 1);
  EXPECT_EQ(reply.headers[0].first, "Inference-Header-Content-Length");
  const size_t header = std::stoul(reply.headers[0].second);
  ASSERT_EQ(reply.body.size(), header + 24);
  EXPECT_EQ(Json::parse(reply.body.substr(0, header)), Json::parse(R"({
    "model_name": "mymodel", "model_version": "2",
    "outputs" : [
      {"name" : "output0", "shape" : [ 3, 2 ], "datatype"  : "FP32",
       "parameters" : {"binary_data_size" : 24}},
      {"name" : "output1", "shape" : [ 2, 2 ], "datatype"  : "INT32",
       "data" : [ 10, 11, 12, 13 ]}]})"));
  std::vector<float> got(6);
  std::memcpy(got.data(), reply.body.data() + header, 24);
  EXPECT_EQ(got, output0);
}

TEST(KServeRestTest, BinaryOutputForEveryOutputByRequestParameter) {
  absl::StatusOr<KServeInferRequest> request = ParseKServeInfer(
      R"({"parameters": {"binary_data_output": true}, "inputs": [
          {"name": "input0", "shape": [2, 2], "datatype": "INT32",
           "data": [[1, 2], [3, 4]]},
          {"name": "input1", "shape": [3], "datatype": "BOOL",
           "data": [true, true, false]}]})",
      std::nullopt, kMyModelIn, kMyModelOut);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(request->outputs, ElementsAre(0, 1));
  EXPECT_THAT(request->binary, ElementsAre(true, true));
}

TEST(KServeRestTest, BadBodiesSayWhy) {
  auto error = [](const std::string& body,
                  std::optional<size_t> header = std::nullopt) {
    const absl::Status status =
        ParseKServeInfer(body, header, kMyModelIn, kMyModelOut).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << body;
    return std::string(status.message());
  };
  const std::string input1 =
      R"({"name": "input1", "shape": [3], "datatype": "BOOL",
          "data": [true, true, false]})";
  EXPECT_THAT(error(R"({"inputs": [)"), HasSubstr("malformed JSON"));
  EXPECT_THAT(error("{}"), HasSubstr("no \"inputs\" array"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "nope", "shape": [1],
                       "datatype": "FP32", "data": [1]}]})"),
              HasSubstr("unknown input \"nope\" (the model's inputs: input0, "
                        "input1)"));
  EXPECT_THAT(error(R"({"inputs": [)" + input1 + "," + input1 + "]}"),
              HasSubstr("input \"input1\" is given twice"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "input0", "shape": [2, 2],
                       "datatype": "UINT32", "data": [1, 2, 3, 4]}]})"),
              HasSubstr("datatype \"UINT32\", which scopeflow lacks"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "input0", "shape": [2, 2],
                       "datatype": "FP32", "data": [1, 2, 3, 4]}]})"),
              HasSubstr("has datatype FP32; the model takes INT32"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "input0", "shape": [2, -2],
                       "datatype": "INT32", "data": [1, 2, 3, 4]}]})"),
              HasSubstr("expected non-negative integers"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "input0", "shape": [2, 2],
                       "datatype": "INT32", "data": [1, 2, 3]}]})"),
              HasSubstr("3 elements for shape [2, 2], which holds 4"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "input0", "shape": [2, 2],
                       "datatype": "INT32", "data": [1, 2, 3, 4.5]}]})"),
              HasSubstr("element 3 is a fraction (4.5); dtype int32 needs"));
  EXPECT_THAT(error(R"({"inputs": [)" + input1 +
                    R"(], "outputs": [{"name": "output9"}]})"),
              HasSubstr("unknown output \"output9\""));
  // Binary framing.
  const std::string binary =
      R"({"inputs": [{"name": "input1", "shape": [3], "datatype": "BOOL",
          "parameters": {"binary_data_size": 3}}]})";
  EXPECT_THAT(error(binary, binary.size() + 1), HasSubstr("beyond the body's"));
  EXPECT_THAT(error(binary + "ab", binary.size()),
              HasSubstr("binary_data_size 3 is beyond the 2 bytes"));
  EXPECT_THAT(error(binary + "abcd", binary.size()),
              HasSubstr("1 bytes of binary data after the JSON are not "
                        "claimed"));
  const std::string wrong_size =
      R"({"inputs": [{"name": "input0", "shape": [2, 2], "datatype": "INT32",
          "parameters": {"binary_data_size": 8}}]})";
  EXPECT_THAT(error(wrong_size + "12345678", wrong_size.size()),
              HasSubstr("binary_data_size is 8 bytes; INT32 [2, 2] needs 16"));
}

// A key given twice in one object is refused by name in every request
// format: nlohmann's document parser would keep the last one silently, so
// a client's mistake (or a proxy's merge) would run on half its data.
TEST(TfServingRestTest, DuplicateKeysAreRefusedByName) {
  auto error = [](const std::string& body,
                  const std::vector<TensorInfo>& inputs) {
    const absl::Status status = ParseTfServingPredict(body, inputs).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << body;
    return std::string(status.message());
  };
  // Rows: the top level, and an instance's inputs.
  EXPECT_THAT(
      error(R"({"instances": [1.0], "instances": [2.0]})", kHalfPlusTwoIn),
      HasSubstr("gives key \"instances\" twice in one object"));
  EXPECT_THAT(error(R"({"instances": [{"signal": [1, 2, 3, 4, 5],
                        "sensor": [1.5], "signal": [5, 4, 3, 2, 1]}]})",
                    kSignalSensor),
              HasSubstr("gives key \"signal\" twice"));
  // Columns, named.
  EXPECT_THAT(error(R"({"inputs": {"x": [1.0], "x": [2.0]}})", kHalfPlusTwoIn),
              HasSubstr("gives key \"x\" twice"));
  // Columns, unnamed (a model of one input), and the signature.
  EXPECT_THAT(error(R"({"inputs": [1.0], "inputs": [2.0]})", kHalfPlusTwoIn),
              HasSubstr("gives key \"inputs\" twice"));
  EXPECT_THAT(error(R"({"signature_name": "", "inputs": [1.0],
                        "signature_name": "serving_default"})",
                    kHalfPlusTwoIn),
              HasSubstr("gives key \"signature_name\" twice"));
}

TEST(KServeRestTest, DuplicateKeysAreRefusedByName) {
  auto error = [](const std::string& body,
                  std::optional<size_t> header = std::nullopt) {
    const absl::Status status =
        ParseKServeInfer(body, header, kMyModelIn, kMyModelOut).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << body;
    return std::string(status.message());
  };
  EXPECT_THAT(error(R"({"inputs": [{"name": "input1", "shape": [3],
                       "datatype": "BOOL", "data": [true, true, false],
                       "data": [false, false, true]}]})"),
              HasSubstr("gives key \"data\" twice"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "input1", "name": "input0",
                       "shape": [3], "datatype": "BOOL",
                       "data": [true, true, false]}]})"),
              HasSubstr("gives key \"name\" twice"));
  EXPECT_THAT(error(R"({"id": "a", "inputs": [], "id": "b"})"),
              HasSubstr("gives key \"id\" twice"));
  // The JSON of a binary body.
  const std::string binary =
      R"({"inputs": [{"name": "input1", "shape": [3], "datatype": "BOOL",
          "parameters": {"binary_data_size": 3, "binary_data_size": 2}}]})";
  EXPECT_THAT(error(binary + "abc", binary.size()),
              HasSubstr("gives key \"binary_data_size\" twice"));
}

}  // namespace
}  // namespace scopeflow
