// gRPC clients, as TensorFlow Serving's and KServe's users write them,
// against GrpcServer in-process on a free port.
#include "tools/serve_grpc.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/kserve/grpc_predict_v2.grpc.pb.h"
#include "proto/tfserving/prediction_service.grpc.pb.h"
#include "tools/serve_testing.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::path(std::getenv("TEST_TMPDIR")) / "grpc").string();
    fs::remove_all(root_);
    ASSERT_TRUE(WriteMlpVersion(root_ + "/mlp", 1, 0).ok());
    ASSERT_TRUE(WriteMlpVersion(root_ + "/mlp", 2, 0.5).ok());
    // Every version served, so that calls can name either.
    models_ = std::make_unique<ModelRepository>(
        [this] {
          absl::StatusOr<std::vector<ModelSource>> sources =
              ListModelRepository(root_);
          if (sources.ok()) {
            for (ModelSource& source : *sources) source.policy.all = true;
          }
          return sources;
        },
        PredictorOptions(), nullptr);
    ASSERT_TRUE(models_->Load().ok());
    GrpcServerOptions options;
    options.port = 0;
    server_ = std::make_unique<GrpcServer>(*models_, options);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
    channel_ =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                            grpc::InsecureChannelCredentials());
    parameters_ = *MlpParameters();
  }

  void TearDown() override { server_->Stop(); }

  std::vector<float> Direct(int64_t version, const Tensor& image) {
    absl::StatusOr<std::vector<Tensor>> out =
        (*models_->Resolve("mlp", version))
            ->predictor.Run({Feed{"image", image}});
    EXPECT_TRUE(out.ok()) << out.status();
    const Tensor& p = (*out)[0];
    return std::vector<float>(p.data<float>(), p.data<float>() + p.numel());
  }

  std::string root_;
  std::unique_ptr<ModelRepository> models_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Scope> parameters_;
};

tensorflow::TensorProto FloatTensor(const Tensor& image, bool typed) {
  tensorflow::TensorProto proto;
  proto.set_dtype(tensorflow::DT_FLOAT);
  for (int64_t dim : image.dims()) {
    proto.mutable_tensor_shape()->add_dim()->set_size(dim);
  }
  if (typed) {
    for (int64_t i = 0; i < image.numel(); ++i) {
      proto.add_float_val(image.data<float>()[i]);
    }
  } else {
    proto.set_tensor_content(static_cast<const char*>(image.raw_data()),
                             image.nbytes());
  }
  return proto;
}

std::vector<float> FloatsOf(const tensorflow::TensorProto& proto) {
  std::vector<float> out(proto.tensor_content().size() / sizeof(float));
  std::memcpy(out.data(), proto.tensor_content().data(),
              proto.tensor_content().size());
  return out;
}

TEST_F(GrpcServerTest, TfServingPredictAndMetadata) {
  auto stub = tensorflow::serving::PredictionService::NewStub(channel_);
  const Tensor image = MlpInput(2, 4);
  for (const bool typed : {true, false}) {
    tensorflow::serving::PredictRequest request;
    request.mutable_model_spec()->set_name("mlp");
    request.mutable_model_spec()->mutable_version()->set_value(1);
    (*request.mutable_inputs())["image"] = FloatTensor(image, typed);
    tensorflow::serving::PredictResponse response;
    grpc::ClientContext context;
    const grpc::Status status = stub->Predict(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.model_spec().name(), "mlp");
    EXPECT_EQ(response.model_spec().version().value(), 1);
    ASSERT_EQ(response.outputs().count("probabilities"), 1);
    const tensorflow::TensorProto& out = response.outputs().at("probabilities");
    EXPECT_EQ(out.dtype(), tensorflow::DT_FLOAT);
    ASSERT_EQ(out.tensor_shape().dim_size(), 2);
    EXPECT_EQ(out.tensor_shape().dim(1).size(), 10);
    const std::vector<double> reference = ReferenceMlp(*parameters_, image);
    const std::vector<float> got = FloatsOf(out);
    ASSERT_EQ(got.size(), reference.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], reference[i], 1e-5) << i;
    }
  }
  // No version: the newest.
  tensorflow::serving::PredictRequest newest;
  newest.mutable_model_spec()->set_name("mlp");
  (*newest.mutable_inputs())["image"] = FloatTensor(image, false);
  tensorflow::serving::PredictResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub->Predict(&context, newest, &response).ok());
  EXPECT_EQ(response.model_spec().version().value(), 2);
  EXPECT_EQ(FloatsOf(response.outputs().at("probabilities")), Direct(2, image));

  tensorflow::serving::GetModelMetadataRequest ask;
  ask.mutable_model_spec()->set_name("mlp");
  ask.add_metadata_field("signature_def");
  tensorflow::serving::GetModelMetadataResponse metadata;
  grpc::ClientContext metadata_context;
  ASSERT_TRUE(stub->GetModelMetadata(&metadata_context, ask, &metadata).ok());
  tensorflow::serving::SignatureDefMap signatures;
  ASSERT_TRUE(metadata.metadata().at("signature_def").UnpackTo(&signatures));
  const tensorflow::SignatureDef& signature =
      signatures.signature_def().at("serving_default");
  EXPECT_EQ(signature.inputs().at("image").dtype(), tensorflow::DT_FLOAT);
  EXPECT_EQ(signature.inputs().at("image").tensor_shape().dim(0).size(), -1);
  EXPECT_EQ(
      signature.outputs().at("probabilities").tensor_shape().dim(1).size(), 10);
}

TEST_F(GrpcServerTest, TfServingErrorsCarryCodes) {
  auto stub = tensorflow::serving::PredictionService::NewStub(channel_);
  auto predict = [&](tensorflow::serving::PredictRequest request) {
    tensorflow::serving::PredictResponse response;
    grpc::ClientContext context;
    return stub->Predict(&context, request, &response);
  };
  tensorflow::serving::PredictRequest request;
  request.mutable_model_spec()->set_name("nope");
  grpc::Status status = predict(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("unknown model \"nope\""));

  request.mutable_model_spec()->set_name("mlp");
  tensorflow::TensorProto strings;
  strings.set_dtype(tensorflow::DT_STRING);
  (*request.mutable_inputs())["image"] = strings;
  status = predict(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("DT_STRING"));

  tensorflow::TensorProto short_content = FloatTensor(MlpInput(1, 0), false);
  short_content.mutable_tensor_content()->resize(12);
  (*request.mutable_inputs())["image"] = short_content;
  status = predict(request);
  EXPECT_THAT(status.error_message(),
              HasSubstr("tensor_content has 12 bytes; float32 [1, 64] needs "
                        "256"));

  (*request.mutable_inputs())["image"] = FloatTensor(MlpInput(1, 0), true);
  request.add_output_filter("logits");
  status = predict(request);
  EXPECT_THAT(status.error_message(),
              HasSubstr("output_filter names \"logits\""));
  request.clear_output_filter();
  request.mutable_model_spec()->set_signature_name("classify");
  status = predict(request);
  EXPECT_THAT(status.error_message(), HasSubstr("unknown signature_name"));
}

TEST_F(GrpcServerTest, KServeInferenceService) {
  auto stub = inference::GRPCInferenceService::NewStub(channel_);
  {
    grpc::ClientContext context;
    inference::ServerLiveResponse live;
    ASSERT_TRUE(stub->ServerLive(&context, {}, &live).ok());
    EXPECT_TRUE(live.live());
  }
  {
    grpc::ClientContext context;
    inference::ServerReadyResponse ready;
    ASSERT_TRUE(stub->ServerReady(&context, {}, &ready).ok());
    EXPECT_TRUE(ready.ready());
  }
  {
    grpc::ClientContext context;
    inference::ModelReadyRequest request;
    request.set_name("mlp");
    request.set_version("1");
    inference::ModelReadyResponse ready;
    ASSERT_TRUE(stub->ModelReady(&context, request, &ready).ok());
    EXPECT_TRUE(ready.ready());
  }
  {
    grpc::ClientContext context;
    inference::ModelMetadataRequest request;
    request.set_name("mlp");
    inference::ModelMetadataResponse metadata;
    ASSERT_TRUE(stub->ModelMetadata(&context, request, &metadata).ok());
    EXPECT_THAT(metadata.versions(), ElementsAre("1", "2"));
    EXPECT_EQ(metadata.inputs(0).name(), "image");
    EXPECT_EQ(metadata.inputs(0).datatype(), "FP32");
    EXPECT_THAT(metadata.inputs(0).shape(), ElementsAre(-1, 64));
    EXPECT_THAT(metadata.outputs(0).shape(), ElementsAre(-1, 10));
  }
  const Tensor image = MlpInput(3, 2);
  for (const bool raw : {true, false}) {
    inference::ModelInferRequest request;
    request.set_model_name("mlp");
    request.set_id("req-1");
    inference::ModelInferRequest::InferInputTensor* input =
        request.add_inputs();
    input->set_name("image");
    input->set_datatype("FP32");
    input->add_shape(3);
    input->add_shape(64);
    if (raw) {
      request.add_raw_input_contents(static_cast<const char*>(image.raw_data()),
                                     image.nbytes());
    } else {
      for (int64_t i = 0; i < image.numel(); ++i) {
        input->mutable_contents()->add_fp32_contents(image.data<float>()[i]);
      }
    }
    inference::ModelInferResponse response;
    grpc::ClientContext context;
    const grpc::Status status = stub->ModelInfer(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.model_name(), "mlp");
    EXPECT_EQ(response.model_version(), "2");
    EXPECT_EQ(response.id(), "req-1");
    ASSERT_EQ(response.outputs_size(), 1);
    EXPECT_EQ(response.outputs(0).datatype(), "FP32");
    EXPECT_THAT(response.outputs(0).shape(), ElementsAre(3, 10));
    ASSERT_EQ(response.raw_output_contents_size(), 1);
    std::vector<float> got(30);
    ASSERT_EQ(response.raw_output_contents(0).size(), 120);
    std::memcpy(got.data(), response.raw_output_contents(0).data(), 120);
    EXPECT_EQ(got, Direct(2, image));
  }
  // Errors.
  inference::ModelInferRequest bad;
  bad.set_model_name("mlp");
  bad.set_model_version("9");
  inference::ModelInferResponse response;
  grpc::ClientContext context;
  grpc::Status status = stub->ModelInfer(&context, bad, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  bad.set_model_version("");
  auto* input = bad.add_inputs();
  input->set_name("image");
  input->set_datatype("FP32");
  input->add_shape(1);
  input->add_shape(64);
  input->mutable_contents()->add_fp32_contents(1);
  grpc::ClientContext context2;
  status = stub->ModelInfer(&context2, bad, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("contents.fp32_contents has 1 values for shape "
                        "[1, 64]"));
  // An integer out of its datatype's range is refused, not wrapped (the
  // contents are read before the model checks the input's name).
  inference::ModelInferRequest wide;
  wide.set_model_name("mlp");
  auto* flag = wide.add_inputs();
  flag->set_name("flag");
  flag->set_datatype("INT8");
  flag->add_shape(1);
  flag->mutable_contents()->add_int_contents(300);
  grpc::ClientContext context4;
  status = stub->ModelInfer(&context4, wide, &response);
  EXPECT_THAT(status.error_message(),
              HasSubstr("input \"flag\": contents.int_contents[0] is 300, "
                        "out of range for INT8"));
  grpc::ClientContext context3;
  inference::ModelReadyRequest unknown;
  unknown.set_name("nope");
  inference::ModelReadyResponse ready;
  EXPECT_EQ(stub->ModelReady(&context3, unknown, &ready).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, StopEndsCallsAndTakenPortIsAnError) {
  GrpcServerOptions options;
  options.port = server_->port();
  GrpcServer second(*models_, options);
  EXPECT_THAT(second.Start().message(), HasSubstr("cannot serve gRPC"));
  server_->Stop();
  server_->Stop();
  auto stub = inference::GRPCInferenceService::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  inference::ServerLiveResponse live;
  EXPECT_FALSE(stub->ServerLive(&context, {}, &live).ok());
}

}  // namespace
}  // namespace scopeflow
