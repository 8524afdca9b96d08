// gRPC calls are admitted and run as REST requests are (tools/
// serve_admission.h): the client's deadline, else the server's default,
// stops the run; a call the client cancels stops its run; a model's full
// queue answers UNAVAILABLE; with batching on, concurrent calls run in
// batches; stopping the server (SIGTERM) answers the calls in flight,
// refuses new ones and cancels what still runs at the drain timeout. The
// slow model is a while loop that would count for hours; the
// run is known to have stopped when its call gives its queue place back.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "operators/control/while/counter_net.h"
#include "platform/file.h"
#include "proto/kserve/grpc_predict_v2.grpc.pb.h"
#include "proto/tfserving/prediction_service.grpc.pb.h"
#include "tools/serve_admission.h"
#include "tools/serve_batcher.h"
#include "tools/serve_grpc.h"
#include "tools/serve_metrics.h"
#include "tools/serve_testing.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// 10^12 iterations: hours, unless stopped.
constexpr int64_t kForever = 1'000'000'000'000;

// MODEL_DIR/1/model.pbtxt: the counting loop of counter_net.h, let run
// for as long as it is asked (input "n", int64 [1]).
absl::Status WriteLoopVersion(const std::string& model_dir) {
  std::string blocks = kCounterLoopBlocks;
  const std::string sub_block = "attrs { name: \"sub_block\" block_idx: 1 }";
  blocks.replace(blocks.find(sub_block), sub_block.size(),
                 sub_block +
                     " attrs { name: \"max_iterations\" i: 2147483647 }");
  std::error_code error;
  fs::create_directories(fs::path(model_dir) / "1", error);
  return WriteFileAtomically(model_dir + "/1/model.pbtxt",
                             "format_version: 1 name: \"loop\" " + blocks);
}

class GrpcRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::path(std::getenv("TEST_TMPDIR")) / "grpc_run").string();
    fs::remove_all(root_);
    ASSERT_TRUE(WriteMlpVersion(root_ + "/mlp", 1, 0).ok());
    ASSERT_TRUE(WriteLoopVersion(root_ + "/loop").ok());
    models_ = std::make_unique<ModelRepository>(
        [this] { return ListModelRepository(root_); }, PredictorOptions(),
        &metrics_);
    const absl::Status loaded = models_->Load();
    ASSERT_TRUE(loaded.ok()) << loaded;
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
  }

  void Start(AdmissionOptions admission, BatchingOptions batching = {}) {
    admission_ = std::make_unique<RequestAdmission>(admission);
    batcher_ = std::make_unique<ServeBatcher>(batching);
    GrpcServerOptions options;
    options.port = 0;
    server_ = std::make_unique<GrpcServer>(*models_, options, admission_.get(),
                                           batcher_.get());
    ASSERT_TRUE(server_->Start().ok());
    channel_ =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                            grpc::InsecureChannelCredentials());
    kserve_ = inference::GRPCInferenceService::NewStub(channel_);
    tfserving_ = tensorflow::serving::PredictionService::NewStub(channel_);
  }

  // Whether model `name`'s queue empties within 2 s: its calls' runs have
  // stopped and their handlers returned.
  bool QueueEmpties(const std::string& name) {
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(2);
    while (admission_->queued(name) > 0) {
      if (Clock::now() > give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  // Waits (up to 2 s) until model `name` has `count` calls admitted.
  void AwaitQueued(const std::string& name, int count) {
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(2);
    while (admission_->queued(name) < count && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_EQ(admission_->queued(name), count);
  }

  static inference::ModelInferRequest LoopRequest(int64_t n) {
    inference::ModelInferRequest request;
    request.set_model_name("loop");
    auto* input = request.add_inputs();
    input->set_name("n");
    input->set_datatype("INT64");
    input->add_shape(1);
    input->mutable_contents()->add_int64_contents(n);
    return request;
  }

  static inference::ModelInferRequest MlpRequest(const Tensor& image) {
    inference::ModelInferRequest request;
    request.set_model_name("mlp");
    auto* input = request.add_inputs();
    input->set_name("image");
    input->set_datatype("FP32");
    for (int64_t dim : image.dims()) input->add_shape(dim);
    request.add_raw_input_contents(static_cast<const char*>(image.raw_data()),
                                   image.nbytes());
    return request;
  }

  std::string root_;
  ServeMetrics metrics_;
  std::unique_ptr<ModelRepository> models_;
  std::unique_ptr<RequestAdmission> admission_;
  std::unique_ptr<ServeBatcher> batcher_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> kserve_;
  std::unique_ptr<tensorflow::serving::PredictionService::Stub> tfserving_;
};

TEST_F(GrpcRunTest, LoopAnswersWhenLetFinish) {
  Start(AdmissionOptions());
  inference::ModelInferResponse response;
  grpc::ClientContext context;
  const grpc::Status status =
      kserve_->ModelInfer(&context, LoopRequest(100), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(response.outputs_size(), 0);
}

TEST_F(GrpcRunTest, ClientDeadlineStopsTheRun) {
  Start(AdmissionOptions());
  // TensorFlow Serving's Predict.
  tensorflow::serving::PredictRequest request;
  request.mutable_model_spec()->set_name("loop");
  tensorflow::TensorProto& n = (*request.mutable_inputs())["n"];
  n.set_dtype(tensorflow::DT_INT64);
  n.mutable_tensor_shape()->add_dim()->set_size(1);
  n.add_int64_val(kForever);
  tensorflow::serving::PredictResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(100));
  EXPECT_EQ(tfserving_->Predict(&context, request, &response).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  // The client gave up at its deadline; the server's run stopped at the
  // same deadline instead of counting on for hours.
  EXPECT_TRUE(QueueEmpties("loop"));
}

TEST_F(GrpcRunTest, ServerDefaultDeadlineStopsTheRun) {
  AdmissionOptions admission;
  admission.request_timeout_ms = 100;
  Start(admission);
  inference::ModelInferResponse response;
  grpc::ClientContext context;
  // The client sets no deadline: the server's default applies, and the
  // run's own error comes back.
  const grpc::Status status =
      kserve_->ModelInfer(&context, LoopRequest(kForever), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("the run passed its deadline"));
  EXPECT_TRUE(QueueEmpties("loop"));
}

TEST_F(GrpcRunTest, CancelledCallStopsTheRun) {
  Start(AdmissionOptions());
  grpc::ClientContext context;
  std::thread canceller([&] {
    AwaitQueued("loop", 1);
    context.TryCancel();
  });
  inference::ModelInferResponse response;
  const grpc::Status status =
      kserve_->ModelInfer(&context, LoopRequest(kForever), &response);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(QueueEmpties("loop"));
}

TEST_F(GrpcRunTest, FullQueueIsUnavailableAndOtherModelsGoOn) {
  AdmissionOptions admission;
  admission.max_queued_requests = 1;
  Start(admission);
  grpc::ClientContext slow_context;
  grpc::Status slow_status;
  std::thread slow([&] {
    inference::ModelInferResponse response;
    slow_status =
        kserve_->ModelInfer(&slow_context, LoopRequest(kForever), &response);
  });
  AwaitQueued("loop", 1);
  inference::ModelInferResponse response;
  grpc::ClientContext refused_context;
  const grpc::Status refused =
      kserve_->ModelInfer(&refused_context, LoopRequest(1), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("1 requests for model \"loop\" are queued already, "
                        "the limit (--max_queued_requests)"));
  // Another model's queue is its own.
  grpc::ClientContext mlp_context;
  const grpc::Status mlp =
      kserve_->ModelInfer(&mlp_context, MlpRequest(MlpInput(1, 0)), &response);
  EXPECT_TRUE(mlp.ok()) << mlp.error_message();
  slow_context.TryCancel();
  slow.join();
  EXPECT_EQ(slow_status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(QueueEmpties("loop"));
}

// The calls join batches whatever the machine's speed: a request of the
// model admitted but never arriving keeps each batch open (a batch whose
// model has nothing else on the way runs at once) until it is full, with
// all kCalls calls, or has waited out the timeout.
TEST_F(GrpcRunTest, ConcurrentCallsRunInBatches) {
  constexpr int kCalls = 8;
  BatchingOptions batching;
  batching.max_batch_size = kCalls;
  batching.batch_timeout_micros = 2'000'000;
  Start(AdmissionOptions(), batching);
  absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> on_the_way =
      admission_->Admit("mlp", RequestAdmission::Clock::now(), 0);
  ASSERT_TRUE(on_the_way.ok());
  const std::shared_ptr<const ServedModel> mlp = *models_->Resolve("mlp", 0);
  std::vector<grpc::Status> statuses(kCalls);
  std::vector<inference::ModelInferResponse> responses(kCalls);
  std::vector<std::thread> clients;
  for (int i = 0; i < kCalls; ++i) {
    clients.emplace_back([&, i] {
      grpc::ClientContext context;
      statuses[i] =
          kserve_->ModelInfer(&context, MlpRequest(MlpInput(1, i)), &responses[i]);
    });
  }
  for (std::thread& client : clients) client.join();
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    absl::StatusOr<std::vector<Tensor>> alone =
        mlp->predictor.Run({Feed{"image", MlpInput(1, i)}});
    ASSERT_TRUE(alone.ok());
    const Tensor& expected = (*alone)[0];
    ASSERT_EQ(responses[i].raw_output_contents(0).size(), expected.nbytes());
    const float* got = reinterpret_cast<const float*>(
        responses[i].raw_output_contents(0).data());
    for (int64_t k = 0; k < expected.numel(); ++k) {
      EXPECT_EQ(got[k], expected.data<float>()[k]) << i << " " << k;
    }
  }
  EXPECT_EQ(batcher_->rows_run(), kCalls);
  EXPECT_LT(batcher_->batches_run(), kCalls);
  // gRPC's runs count in the model version's metrics as REST's do.
  const std::string page = metrics_.Render();
  const std::string labels = R"({model="mlp",version="1"} )";
  EXPECT_THAT(page, HasSubstr(absl::StrCat("scopeflow_batch_size_count", labels,
                                           batcher_->batches_run(), "\n")));
  EXPECT_THAT(page, HasSubstr(absl::StrCat("scopeflow_batch_size_sum", labels,
                                           kCalls, "\n")));
  EXPECT_THAT(page,
              HasSubstr(absl::StrCat("scopeflow_queue_duration_seconds_count",
                                     labels, kCalls, "\n")));
}

// What SIGTERM does to the gRPC server (ServeCommand calls Stop with
// --drain_timeout_ms): a call in flight is answered, a call made after the
// stop began is refused at once with UNAVAILABLE. The call in flight is
// held in the batcher for 1.5 s by a second request of its model that is
// admitted but never arrives (the batch waits out its timeout for it), so
// that it is still in flight, whatever the machine's speed, when the stop
// and the refused call come.
TEST_F(GrpcRunTest, StopAnswersTheCallInFlightAndRefusesNewOnes) {
  BatchingOptions batching;
  batching.max_batch_size = 8;
  batching.batch_timeout_micros = 1'500'000;
  Start(AdmissionOptions(), batching);
  absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> on_the_way =
      admission_->Admit("mlp", RequestAdmission::Clock::now(), 0);
  ASSERT_TRUE(on_the_way.ok());
  const Tensor image = MlpInput(1, 5);
  grpc::Status in_flight_status;
  inference::ModelInferResponse in_flight;
  std::thread caller([&] {
    grpc::ClientContext context;
    in_flight_status =
        kserve_->ModelInfer(&context, MlpRequest(image), &in_flight);
  });
  AwaitQueued("mlp", 2);
  // The rows the batcher had run when Stop returned: the call's, if Stop
  // waited for it. (The client may see its answer after Stop returns.)
  int64_t rows_run_when_stopped = -1;
  std::thread stopper([&] {
    server_->Stop(absl::Seconds(20));
    rows_run_when_stopped = batcher_->rows_run();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  const Clock::time_point refused_at = Clock::now();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  inference::ModelInferResponse response;
  const grpc::Status refused =
      kserve_->ModelInfer(&context, MlpRequest(image), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.error_message();
  EXPECT_LT(Clock::now() - refused_at, std::chrono::seconds(1));
  // Refused while the first call was still in flight.
  EXPECT_EQ(admission_->queued("mlp"), 2);

  caller.join();
  stopper.join();
  ASSERT_TRUE(in_flight_status.ok()) << in_flight_status.error_message();
  absl::StatusOr<std::vector<Tensor>> alone =
      (*models_->Resolve("mlp", 0))->predictor.Run({Feed{"image", image}});
  ASSERT_TRUE(alone.ok());
  const Tensor& expected = (*alone)[0];
  ASSERT_EQ(in_flight.raw_output_contents(0).size(), expected.nbytes());
  const float* got =
      reinterpret_cast<const float*>(in_flight.raw_output_contents(0).data());
  for (int64_t k = 0; k < expected.numel(); ++k) {
    EXPECT_EQ(got[k], expected.data<float>()[k]) << k;
  }
  // Stop waited for the call's run.
  EXPECT_EQ(rows_run_when_stopped, 1);
  on_the_way->reset();
}

// A call still running when the drain timeout passes is cancelled: Stop
// returns soon after the timeout and the run stops.
TEST_F(GrpcRunTest, DrainTimeoutCancelsTheCallStillRunning) {
  Start(AdmissionOptions());
  grpc::Status status;
  std::thread caller([&] {
    grpc::ClientContext context;
    inference::ModelInferResponse response;
    status = kserve_->ModelInfer(&context, LoopRequest(kForever), &response);
  });
  AwaitQueued("loop", 1);
  const Clock::time_point stop = Clock::now();
  server_->Stop(absl::Milliseconds(100));
  EXPECT_LT(Clock::now() - stop, std::chrono::seconds(2));
  caller.join();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(QueueEmpties("loop"));
}

}  // namespace
}  // namespace scopeflow
