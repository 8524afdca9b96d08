// Dynamic batching under load: 64 concurrent clients, each sending one
// batch-1 predict request at a time over a keep-alive connection, against
// the CNN of examples/cnn served in-process, with batching off and on.
// Each run is a fixed time of load; counters give requests per second, the
// latency percentiles the clients saw, the mean rows per batch, and the
// CPU time per request of the process and of the server alone (the clients
// share the machine's cores, so the server's CPU per request says what it
// would sustain with its clients elsewhere). Runs alternate off and on, so
// that the ratio is of neighbouring runs. All protocols share one client
// loop (RunLoad).
// BM_GrpcBatchOne is the same load over gRPC with binary tensors, and
// BM_InProcessBatchOne on RunServedModel directly, without a protocol: what
// batching wins once the per-request costs of HTTP and JSON are smaller or
// gone.
//   bazel run -c opt //tools:serve_batching_benchmark
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/param_io.h"
#include "grpcpp/grpcpp.h"
#include "httplib.h"
#include "platform/file.h"
#include "platform/host_memory.h"
#include "proto/kserve/grpc_predict_v2.grpc.pb.h"
#include "tools/http_server.h"
#include "tools/serve_admission.h"
#include "tools/serve_grpc.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kClients = 64;
constexpr auto kWarmUpTime = std::chrono::milliseconds(500);
constexpr auto kLoadTime = std::chrono::seconds(3);

// MODEL_DIR/1/{model.pbtxt, params} for the CNN, its parameters from its
// seeded startup net; made once per process.
const std::string& CnnModelDir() {
  static const std::string* const dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    const fs::path root = fs::path(tmp != nullptr ? tmp : "/tmp") /
                          absl::StrCat("serve_batching_", getpid());
    const fs::path version = root / "cnn" / "1";
    fs::create_directories(version);
    absl::StatusOr<NetDef> startup = LoadNet("examples/cnn/startup.pbtxt");
    absl::StatusOr<std::string> net = ReadFile("examples/cnn/main.pbtxt");
    if (!startup.ok() || !net.ok()) std::abort();
    const Executor executor;
    absl::StatusOr<PreparedNet> prepared =
        executor.Prepare(*startup, 0, CPUPlace());
    Scope parameters;
    if (!prepared.ok() ||
        !executor.Run(*prepared, parameters, {}, {}).ok() ||
        !WriteFileAtomically((version / "model.pbtxt").string(), *net).ok() ||
        !SaveParams(parameters,
                    {"conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc.w",
                     "fc.b"},
                    (version / "params").string())
             .ok()) {
      std::abort();
    }
    return new std::string((root / "cnn").string());
  }();
  return *dir;
}

// One client's request, made again and again on the client's own thread:
// true when answered correctly.
using SendOne = std::function<bool()>;
// Makes client `c`'s SendOne, on that client's thread (so that what it
// holds, a connection or a channel, belongs to that thread).
using MakeClient = std::function<SendOne(int c)>;

// What a load measured: each answered request's latency, the failures, and
// the CPU time the clients' threads and the whole process spent.
struct Load {
  std::vector<double> latencies;
  int64_t failed = 0;
  double client_cpu_seconds = 0;
  double process_cpu_seconds = 0;
};

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * now.tv_nsec;
}

double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * now.tv_nsec;
}

// Each iteration of `state`: kClients threads, each sending its request
// one at a time, for kWarmUpTime unmeasured (connections, threads and
// memory made; the first runs of a process were otherwise the slowest) and
// then kLoadTime measured. The loop every protocol shares.
Load RunLoad(benchmark::State& state, const MakeClient& make_client) {
  Load load;
  for (auto _ : state) {
    std::atomic<bool> measuring{false};
    std::atomic<bool> stop{false};
    std::vector<std::vector<double>> per_client(kClients);
    std::vector<double> client_cpu(kClients);
    std::atomic<int64_t> errors{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, c] {
        const SendOne send = make_client(c);
        bool measured = false;
        double cpu = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          if (!measured && measuring.load(std::memory_order_relaxed)) {
            measured = true;
            cpu = ThreadCpuSeconds();
          }
          const Clock::time_point start = Clock::now();
          const bool ok = send();
          if (!measured) continue;
          if (!ok) {
            errors.fetch_add(1);
            continue;
          }
          per_client[c].push_back(
              std::chrono::duration<double>(Clock::now() - start).count());
        }
        if (measured) client_cpu[c] = ThreadCpuSeconds() - cpu;
      });
    }
    std::this_thread::sleep_for(kWarmUpTime);
    const double process_cpu = ProcessCpuSeconds();
    measuring = true;
    std::this_thread::sleep_for(kLoadTime);
    stop = true;
    for (std::thread& client : clients) client.join();
    load.process_cpu_seconds += ProcessCpuSeconds() - process_cpu;
    for (int c = 0; c < kClients; ++c) {
      load.latencies.insert(load.latencies.end(), per_client[c].begin(),
                            per_client[c].end());
      load.client_cpu_seconds += client_cpu[c];
    }
    load.failed += errors.load();
    state.SetIterationTime(std::chrono::duration<double>(kLoadTime).count());
  }
  return load;
}

// Requests per second, the latency percentiles the clients saw, errors, the
// mean rows per batch, and CPU time per request: the whole process's, and
// the server's (the process's less the client threads'), which says what a
// server whose clients ran elsewhere would spend on each request.
void ReportLoad(benchmark::State& state, Load& load,
                const ServeBatcher& batcher) {
  std::vector<double>& latencies = load.latencies;
  std::sort(latencies.begin(), latencies.end());
  auto percentile = [&](double p) {
    return latencies.empty()
               ? 0.0
               : latencies[static_cast<size_t>(p * (latencies.size() - 1))] *
                     1e3;
  };
  const double seconds = std::chrono::duration<double>(kLoadTime).count() *
                         static_cast<double>(state.iterations());
  const double answered = std::max<double>(1, latencies.size());
  state.counters["req_per_s"] = static_cast<double>(latencies.size()) / seconds;
  state.counters["p50_ms"] = percentile(0.5);
  state.counters["p99_ms"] = percentile(0.99);
  state.counters["errors"] = static_cast<double>(load.failed);
  state.counters["cpu_us_per_req"] = 1e6 * load.process_cpu_seconds / answered;
  state.counters["server_cpu_us_per_req"] =
      1e6 * (load.process_cpu_seconds - load.client_cpu_seconds) / answered;
  const int64_t batches = batcher.batches_run();
  state.counters["rows_per_batch"] =
      batches == 0 ? 1.0
                   : static_cast<double>(batcher.rows_run()) /
                         static_cast<double>(batches);
}

// The served CNN, as the server's repository holds it.
ModelSourceList CnnSources() {
  const ModelSource cnn{"cnn", CnnModelDir(), VersionPolicy()};
  return [cnn]() -> absl::StatusOr<std::vector<ModelSource>> {
    return std::vector<ModelSource>{cnn};
  };
}

// A batch-1 image of client `c`.
std::vector<float> ClientImage(int c) {
  std::vector<float> image(64);
  for (int i = 0; i < 64; ++i) {
    image[i] = static_cast<float>((c * 31 + i * 7) % 97) / 97;
  }
  return image;
}

std::string RequestBody(int c) {
  return absl::StrCat(R"({"inputs": {"image": [[)",
                      absl::StrJoin(ClientImage(c), ","), "]]}}");
}

// Over HTTP: TensorFlow Serving's JSON predict on a keep-alive connection
// per client.
// Args: max_batch_size (0: off), batch_timeout_micros, TCP_NODELAY on the
// clients (1) or Nagle's algorithm (0).
void BM_ConcurrentBatchOne(benchmark::State& state) {
  ServeMetrics metrics;
  ModelRepository models(CnnSources(), PredictorOptions(), &metrics);
  if (!models.Load().ok()) std::abort();
  HttpServerOptions options;
  options.port = 0;
  options.threads =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.batching.max_batch_size = static_cast<int>(state.range(0));
  options.batching.batch_timeout_micros = state.range(1);
  HttpServer server(models, metrics, options);
  if (!server.Bind().ok()) std::abort();
  std::thread serving([&] { (void)server.Serve(); });
  Load load = RunLoad(state, [&](int c) -> SendOne {
    auto client = std::make_shared<httplib::Client>("127.0.0.1", server.port());
    client->set_keep_alive(true);
    // httplib writes a request's head and body apart: with Nagle's
    // algorithm on, the body waits for the head's acknowledgement, which
    // the server sends at once (tools/http_transport.cc) but the kernel
    // would delay by up to 40 ms. Arg 2 turns Nagle off, as curl and wrk
    // do.
    client->set_tcp_nodelay(state.range(2) != 0);
    return [client, body = RequestBody(c)] {
      httplib::Result result =
          client->Post("/v1/models/cnn:predict", body, "application/json");
      return result && result->status == 200;
    };
  });
  server.Stop();
  serving.join();
  ReportLoad(state, load, server.batcher());
}

// The same load without a protocol: 64 threads each calling
// RunServedModel (what every protocol calls once a request is decoded) on
// one batch-1 image at a time, batching off and on. What batching wins on
// the model's side, before the per-request costs of a protocol.
// Args: max_batch_size (0: off), batch_timeout_micros.
void BM_InProcessBatchOne(benchmark::State& state) {
  const fs::path version = fs::path(CnnModelDir()) / "1";
  absl::StatusOr<Predictor> cnn = Predictor::Load(
      (version / "model.pbtxt").string(), (version / "params").string());
  if (!cnn.ok()) std::abort();
  const ServedModel model{"cnn", 1, *std::move(cnn)};
  BatchingOptions batching;
  batching.max_batch_size = static_cast<int>(state.range(0));
  batching.batch_timeout_micros = state.range(1);
  ServeBatcher batcher(batching);
  Load load = RunLoad(state, [&](int c) -> SendOne {
    auto image = std::make_shared<Tensor>();
    if (!image->Allocate(CPUPlace(), kFloat32, {1, 64}).ok()) std::abort();
    const std::vector<float> values = ClientImage(c);
    std::copy(values.begin(), values.end(), image->data<float>());
    return [&model, &batcher, image] {
      RunCancellation cancellation;
      return RunServedModel(model, {Feed{"image", *image}},
                            PredictContext{&cancellation, &batcher})
          .ok();
    };
  });
  ReportLoad(state, load, batcher);
}

BENCHMARK(BM_InProcessBatchOne)
    ->Args({0, 0})
    ->Args({64, 0})
    ->Args({64, 2000})
    ->Args({0, 0})
    ->Args({64, 0})
    ->Args({64, 2000})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The same load over gRPC: each client its own channel, calling KServe's
// ModelInfer with the image as raw bytes (no JSON), batching off and on.
// Args: max_batch_size (0: off), batch_timeout_micros.
void BM_GrpcBatchOne(benchmark::State& state) {
  ModelRepository models(CnnSources(), PredictorOptions(), nullptr);
  if (!models.Load().ok()) std::abort();
  BatchingOptions batching;
  batching.max_batch_size = static_cast<int>(state.range(0));
  batching.batch_timeout_micros = state.range(1);
  ServeBatcher batcher(batching);
  RequestAdmission admission{AdmissionOptions()};
  GrpcServerOptions options;
  options.port = 0;
  GrpcServer server(models, options, &admission, &batcher);
  if (!server.Start().ok()) std::abort();
  Load load = RunLoad(state, [&](int c) -> SendOne {
    grpc::ChannelArguments arguments;
    // A channel of its own, as separate client processes would have.
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    std::shared_ptr<inference::GRPCInferenceService::Stub> stub =
        inference::GRPCInferenceService::NewStub(grpc::CreateCustomChannel(
            absl::StrCat("127.0.0.1:", server.port()),
            grpc::InsecureChannelCredentials(), arguments));
    auto request = std::make_shared<inference::ModelInferRequest>();
    request->set_model_name("cnn");
    auto* input = request->add_inputs();
    input->set_name("image");
    input->set_datatype("FP32");
    input->add_shape(1);
    input->add_shape(64);
    const std::vector<float> image = ClientImage(c);
    request->add_raw_input_contents(reinterpret_cast<const char*>(image.data()),
                                    image.size() * sizeof(float));
    return [stub, request] {
      grpc::ClientContext context;
      inference::ModelInferResponse response;
      return stub->ModelInfer(&context, *request, &response).ok();
    };
  });
  server.Stop();
  ReportLoad(state, load, batcher);
}
BENCHMARK(BM_GrpcBatchOne)
    ->Args({0, 0})
    ->Args({64, 0})
    ->Args({64, 2000})
    ->Args({0, 0})
    ->Args({64, 0})
    ->Args({64, 2000})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// One run of the CNN on `rows` images, in-process: the batch's run time
// of the latency goal (p99 under twice the batch timeout plus one batch's
// run).
void BM_CnnRun(benchmark::State& state) {
  const fs::path version = fs::path(CnnModelDir()) / "1";
  absl::StatusOr<Predictor> cnn = Predictor::Load(
      (version / "model.pbtxt").string(), (version / "params").string());
  if (!cnn.ok()) std::abort();
  Tensor image;
  if (!image.Allocate(CPUPlace(), kFloat32, {state.range(0), 64}).ok()) {
    std::abort();
  }
  for (int64_t i = 0; i < image.numel(); ++i) {
    image.data<float>()[i] = static_cast<float>(i % 97) / 97.0f;
  }
  const std::vector<Feed> feeds = {{"image", image}};
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out = cnn->Run(feeds);
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out);
  }
  state.counters["rows_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * state.range(0)),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CnnRun)->Arg(1)->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_ConcurrentBatchOne)
    ->Args({0, 0, 1})
    ->Args({64, 2000, 1})
    ->Args({32, 1000, 1})
    ->Args({0, 0, 0})
    ->Args({64, 2000, 0})
    ->Args({0, 0, 1})
    ->Args({64, 2000, 1})
    ->Args({32, 1000, 1})
    ->Args({0, 0, 0})
    ->Args({64, 2000, 0})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  scopeflow::KeepFreedHostMemoryForReuse();
  // As `scopeflow serve` runs (tools/serve_command.cc).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  std::error_code ignored;
  std::filesystem::remove_all(
      std::filesystem::path(scopeflow::CnnModelDir()).parent_path(), ignored);
  return 0;
}
