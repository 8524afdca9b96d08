// One predict of a batch of 64 MLP images (examples/mlp) in each protocol's
// body, without HTTP: decode, run, encode. What each wire format costs on
// top of the run (docs/PERFORMANCE.md, "Serving").
//   OMP_NUM_THREADS=1 bazel run --config=cpu_only
//   //tools:serve_protocols_benchmark
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/serving/mlp_fixture.h"
#include "platform/host_memory.h"
#include "tools/serve_json_tensor.h"
#include "tools/serve_kserve_rest.h"
#include "tools/serve_predict.h"
#include "tools/serve_tf_tensor.h"
#include "tools/serve_tfserving_rest.h"

namespace scopeflow {
namespace {

constexpr int kBatch = 64;

const ServedModel& Model() {
  static const ServedModel* const model = [] {
    absl::StatusOr<Predictor> predictor = LoadMlp();
    if (!predictor.ok()) std::abort();
    static ServedModel kept{"mlp", 1, *std::move(predictor)};
    return &kept;
  }();
  return *model;
}

void BM_RunOnly(benchmark::State& state) {
  const Tensor image = MlpInput(kBatch, 0);
  for (auto _ : state) {
    auto out = RunServedModel(Model(), {Feed{"image", image}});
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_RunOnly);

// The JSON of BM_TfServingColumns parsed alone: ParseJsonBody (a pass that
// checks depth and memory, then one that builds with duplicate keys
// refused) against nlohmann's document parser alone, which does neither.
void BM_ParseJsonBody(benchmark::State& state) {
  std::string tensor;
  AppendNestedJson(tensor, MlpInput(kBatch, 0));
  const std::string body = absl::StrCat(R"({"inputs": )", tensor, "}");
  for (auto _ : state) {
    absl::StatusOr<Json> doc = ParseJsonBody(body);
    if (!doc.ok()) std::abort();
    benchmark::DoNotOptimize(doc);
  }
}
void BM_NlohmannParse(benchmark::State& state) {
  std::string tensor;
  AppendNestedJson(tensor, MlpInput(kBatch, 0));
  const std::string body = absl::StrCat(R"({"inputs": )", tensor, "}");
  for (auto _ : state) {
    Json doc = Json::parse(body.begin(), body.end(), nullptr, false);
    if (doc.is_discarded()) std::abort();
    benchmark::DoNotOptimize(doc);
  }
}
BENCHMARK(BM_ParseJsonBody);
BENCHMARK(BM_NlohmannParse);

void TfServing(benchmark::State& state, bool rows) {
  std::string tensor;
  AppendNestedJson(tensor, MlpInput(kBatch, 0));
  const std::string body =
      absl::StrCat(rows ? R"({"instances": )" : R"({"inputs": )", tensor, "}");
  for (auto _ : state) {
    auto request = ParseTfServingPredict(body, Model().predictor.inputs());
    if (!request.ok()) std::abort();
    auto out = RunServedModel(Model(), std::move(request->feeds));
    if (!out.ok()) std::abort();
    auto reply =
        TfServingPredictReply(Model().predictor.outputs(), *out, rows, kBatch);
    if (!reply.ok()) std::abort();
    benchmark::DoNotOptimize(reply);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
void BM_TfServingRows(benchmark::State& state) { TfServing(state, true); }
void BM_TfServingColumns(benchmark::State& state) { TfServing(state, false); }
BENCHMARK(BM_TfServingRows);
BENCHMARK(BM_TfServingColumns);

void KServe(benchmark::State& state, bool binary) {
  const Tensor image = MlpInput(kBatch, 0);
  std::string body;
  std::optional<size_t> header;
  if (binary) {
    body = absl::StrCat(
        R"({"inputs": [{"name": "image", "shape": [64, 64], "datatype": "FP32",)",
        R"( "parameters": {"binary_data_size": )", image.nbytes(),
        R"(}}], "parameters": {"binary_data_output": true}})");
    header = body.size();
    body.append(static_cast<const char*>(image.raw_data()), image.nbytes());
  } else {
    std::string data;
    AppendFlatJson(data, image);
    body = absl::StrCat(
        R"({"inputs": [{"name": "image", "shape": [64, 64], "datatype": "FP32",)",
        R"( "data": )", data, "}]}");
  }
  for (auto _ : state) {
    auto request = ParseKServeInfer(body, header, Model().predictor.inputs(),
                                    Model().predictor.outputs());
    if (!request.ok()) std::abort();
    auto out = RunServedModel(Model(), std::move(request->feeds));
    if (!out.ok()) std::abort();
    HttpReply reply =
        KServeInferReply("mlp", 1, Model().predictor.outputs(), *request, *out);
    benchmark::DoNotOptimize(reply);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
void BM_KServeJson(benchmark::State& state) { KServe(state, false); }
void BM_KServeBinary(benchmark::State& state) { KServe(state, true); }
BENCHMARK(BM_KServeJson);
BENCHMARK(BM_KServeBinary);

// TensorFlow Serving's gRPC body: TensorProto in (typed float_val, as
// Python's tf.make_tensor_proto writes small tensors) and out.
void BM_TfServingProto(benchmark::State& state) {
  const Tensor image = MlpInput(kBatch, 0);
  tensorflow::TensorProto proto = TfProtoOf(image);
  proto.clear_tensor_content();
  for (int64_t i = 0; i < image.numel(); ++i) {
    proto.add_float_val(image.data<float>()[i]);
  }
  const std::string wire = proto.SerializeAsString();
  for (auto _ : state) {
    tensorflow::TensorProto in;
    if (!in.ParseFromString(wire)) std::abort();
    auto tensor = TensorFromTfProto("image", in);
    if (!tensor.ok()) std::abort();
    auto out = RunServedModel(Model(), {Feed{"image", *tensor}});
    if (!out.ok()) std::abort();
    std::string reply = TfProtoOf((*out)[0]).SerializeAsString();
    benchmark::DoNotOptimize(reply);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_TfServingProto);

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  scopeflow::KeepFreedHostMemoryForReuse();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
