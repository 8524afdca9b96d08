// Times attention as torch exports it (the heads' transposes, the scale,
// the scores' product, mask, softmax, the values' product, the transpose
// back: Prepare's block as written) against the attention op Prepare fuses
// it into, through the executor, for the zoo's shapes: ViT-small (197
// tokens), the TransformerEncoder (128) and the TransformerDecoder's
// masked self-attention (64), 4 heads of 64, batch 1 and 8. At 1 and 2
// threads, interleaved:
//   OMP_NUM_THREADS=1 bazel run --config=cpu_only \
//     //operators/attention:attention_benchmark -- \
//     --benchmark_enable_random_interleaving=true \
//     --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/op_test_util.h"
#include "framework/prepare.h"
#include "google/protobuf/text_format.h"

namespace scopeflow {
namespace {

struct Shape {
  const char* name;
  int64_t batch, seq;
  bool mask;
};
constexpr int64_t kHeads = 4, kHeadDim = 64;

std::string Op(const std::string& type, const std::string& ins,
               const std::string& out, const std::string& attrs = "") {
  return absl::StrCat("ops { type: '", type, "' ", ins,
                      " outputs { slot: 'Out' vars: '", out, "' } ", attrs,
                      " }\n");
}
std::string In(const std::string& slot, const std::string& var) {
  return absl::StrCat("inputs { slot: '", slot, "' vars: '", var, "' } ");
}
std::string Perm(const std::string& perm) {
  return "attrs { name: 'perm' ints { values: " + perm + " } }";
}

// torch 1.13's nn.MultiheadAttention after the input projection: Q, K, V
// of [seq, batch * heads, head_dim].
NetDef TorchAttention(const Shape& shape) {
  const std::string dims = absl::StrCat(
      "[", shape.seq, ", ", shape.batch * kHeads, ", ", kHeadDim, "]");
  std::string vars;
  for (const char* name : {"q", "k", "v"}) {
    absl::StrAppend(&vars, "vars { name: '", name,
                    "' dtype: DATA_TYPE_FLOAT32 shape: ", dims, " } ");
  }
  absl::StrAppend(&vars,
                  "vars { name: 'c' dtype: DATA_TYPE_FLOAT32 shape: [1] } ",
                  "vars { name: 'mask' dtype: DATA_TYPE_FLOAT32 shape: [",
                  shape.seq, ", ", shape.seq, "] } ");
  std::string ops = Op("transpose", In("X", "q"), "qt", Perm("[1, 0, 2]")) +
                    Op("transpose", In("X", "k"), "kt", Perm("[1, 2, 0]")) +
                    Op("transpose", In("X", "v"), "vt", Perm("[1, 0, 2]")) +
                    Op("div", In("X", "qt") + In("Y", "c"), "qs") +
                    Op("matmul", In("X", "qs") + In("Y", "kt"), "s");
  std::string scores = "s";
  if (shape.mask) {
    ops += Op("add", In("X", "s") + In("Y", "mask"), "masked");
    scores = "masked";
  }
  ops += Op("softmax", In("X", scores), "p") +
         Op("matmul", In("X", "p") + In("Y", "vt"), "o") +
         Op("transpose", In("X", "o"), "out", Perm("[1, 0, 2]"));
  NetDef net;
  google::protobuf::TextFormat::ParseFromString(
      "name: 'attention' format_version: 1 blocks { " + vars + ops + "}", &net);
  return net;
}

void Run(benchmark::State& state, const Shape& shape, bool fused) {
  const NetDef net = TorchAttention(shape);
  absl::StatusOr<PreparedNet> prepared =
      PrepareNet(net, 0, CPUPlace(),
                 fused ? PrepareOptions() : PrepareOptions::AsWritten());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  const Dims dims = {shape.seq, shape.batch * kHeads, kHeadDim};
  std::vector<Feed> feeds = {
      {"q", MakeTensor<float>(dims, RandomFloats(NumElements(dims), 1))},
      {"k", MakeTensor<float>(dims, RandomFloats(NumElements(dims), 2))},
      {"v", MakeTensor<float>(dims, RandomFloats(NumElements(dims), 3))},
      {"c", MakeTensor<float>({1}, {8.0f})}};
  if (shape.mask) {
    std::vector<float> causal(shape.seq * shape.seq, 0.0f);
    for (int64_t i = 0; i < shape.seq; ++i) {
      for (int64_t j = i + 1; j < shape.seq; ++j) {
        causal[i * shape.seq + j] = -1e9f;
      }
    }
    feeds.push_back(
        {"mask", MakeTensor<float>({shape.seq, shape.seq}, causal)});
  }
  const Executor executor;
  Scope scope;
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, scope, feeds, {"out"});
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out->front().data<float>());
  }
}

const bool kRegistered = [] {
  static const Shape kShapes[] = {{"vit_b1_seq197", 1, 197, false},
                                  {"vit_b8_seq197", 8, 197, false},
                                  {"encoder_b1_seq128", 1, 128, false},
                                  {"encoder_b8_seq128", 8, 128, false},
                                  {"decoder_self_b1_seq64_mask", 1, 64, true},
                                  {"decoder_self_b8_seq64_mask", 8, 64, true}};
  for (const Shape& shape : kShapes) {
    for (bool fused : {false, true}) {
      benchmark::RegisterBenchmark(
          absl::StrCat(shape.name, fused ? "/fused" : "/as_written").c_str(),
          [&shape, fused](benchmark::State& state) {
            Run(state, shape, fused);
          })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace scopeflow
