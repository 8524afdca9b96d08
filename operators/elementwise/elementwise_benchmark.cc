// Costs of the elementwise ops: a chain of adds on one-element tensors run
// by the executor (dispatch overhead), the same op's inference and kernel
// called directly, and kernels on large tensors (vectorized loops), forward
// and gradient.
//   bazel run //operators/elementwise:elementwise_benchmark
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/op_spec.h"
#include "google/protobuf/text_format.h"
#include "operators/common.h"

namespace scopeflow {
namespace {

NetDef ParseNet(const std::string& text) {
  NetDef net;
  if (!google::protobuf::TextFormat::ParseFromString(text, &net)) {
    std::fprintf(stderr, "bad net: %s\n", text.c_str());
    std::abort();
  }
  return net;
}

// An op that computes nothing, to measure what the executor costs per op.
absl::Status Nothing(KernelContext&) { return absl::OkStatus(); }

SF_REGISTER_OP(elementwise_benchmark_nop)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &Nothing);

// v0 = x; v{i+1} = op(v{i}, c) for `length` ops; x and c of shape [1].
NetDef Chain(int length, const std::string& op = "add") {
  std::string text = R"pb(format_version: 1
                          name: "chain"
                          blocks { vars {
                            name: "v0"
                            dtype: DATA_TYPE_FLOAT32
                            shape: [ 1 ]
                          }
                                   vars {
                                     name: "c"
                                     dtype: DATA_TYPE_FLOAT32
                                     shape: [ 1 ]
                                   })pb";
  for (int i = 0; i < length; ++i) {
    absl::StrAppend(&text,
                    absl::StrFormat(R"pb(
                                      ops {
                                        type: "%s"
                                        inputs { slot: "X" vars: "v%d" }
                                        inputs { slot: "Y" vars: "c" }
                                        outputs { slot: "Out" vars: "v%d" }
                                      })pb",
                                    op, i, i + 1));
  }
  absl::StrAppend(&text, "}");
  return ParseNet(text);
}

Tensor Filled(Dims dims, float value) {
  Tensor tensor;
  if (!tensor.Allocate(CPUPlace(), kFloat32, dims).ok()) std::abort();
  float* data = tensor.data<float>();
  for (int64_t i = 0; i < tensor.numel(); ++i) data[i] = value;
  return tensor;
}

template <typename T>
T OrDie(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "%s\n", std::string(value.status().message()).c_str());
    std::abort();
  }
  return *std::move(value);
}

// Executor::Run of a chain of `op`; the counter gives the time per op.
void RunChain(benchmark::State& state, const std::string& op) {
  const int length = static_cast<int>(state.range(0));
  Executor executor;
  const PreparedNet prepared =
      OrDie(executor.Prepare(Chain(length, op), 0, CPUPlace()));
  const std::vector<Feed> feeds = {{"v0", Filled({1}, 1)},
                                   {"c", Filled({1}, 0.5f)}};
  const std::vector<std::string> fetches = {absl::StrCat("v", length)};
  Scope scope;
  for (auto _ : state) {
    std::vector<Tensor> out =
        OrDie(executor.Run(prepared, scope, feeds, fetches));
    benchmark::DoNotOptimize(out[0].data<float>()[0]);
  }
  state.counters["per_op"] =
      benchmark::Counter(static_cast<double>(length),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

void BM_AddChainRun(benchmark::State& state) { RunChain(state, "add"); }
BENCHMARK(BM_AddChainRun)->Arg(1000);

// The executor's own share: the same chain of ops that compute nothing.
void BM_NopChainRun(benchmark::State& state) {
  RunChain(state, "elementwise_benchmark_nop");
}
BENCHMARK(BM_NopChainRun)->Arg(1000);

// One prepared op of `net` with its tensors: runs its inference and kernel
// as the executor does, without the executor.
class DirectOp {
 public:
  DirectOp(const std::string& net_text, const std::vector<Feed>& feeds)
      : prepared_(OrDie(Executor().Prepare(ParseNet(net_text), 0, CPUPlace()))),
        tensors_(prepared_.var_names().size()),
        infos_(prepared_.var_infos()) {
    for (const Feed& feed : feeds) {
      const int v = prepared_.VarIndex(feed.name);
      tensors_[v] = feed.tensor;
      infos_[v].dims = feed.tensor.dims();
      infos_[v].has_dims = true;
    }
    for (Tensor& tensor : tensors_) pointers_.push_back(&tensor);
    if (!Infer().ok()) std::abort();
    const PreparedOp& op = prepared_.ops()[0];
    for (const auto& slot : op.outputs) {
      for (int v : slot) {
        if (!tensors_[v]
                 .Allocate(CPUPlace(), infos_[v].dtype, infos_[v].dims)
                 .ok()) {
          std::abort();
        }
      }
    }
  }

  absl::Status Infer() {
    InferContext context(prepared_.ops()[0], infos_, prepared_.var_names());
    return prepared_.ops()[0].spec->infer()(context);
  }

  absl::Status Kernel() {
    const PreparedOp& op = prepared_.ops()[0];
    KernelContext context(op, pointers_.data(), prepared_.var_names(), place_);
    return op.kernel(context);
  }

 private:
  PreparedNet prepared_;
  std::vector<Tensor> tensors_;
  std::vector<Tensor*> pointers_;
  std::vector<VarInfo> infos_;
  Place place_ = CPUPlace();
};

std::string AddNet(const Dims& x, const Dims& y) {
  auto shape = [](const Dims& dims) {
    return dims.empty()
               ? std::string()
               : absl::StrCat("shape: [", absl::StrJoin(dims, ","), "]");
  };
  return absl::StrFormat(R"pb(format_version: 1
                              name: "add"
                              blocks {
                                vars { name: "x" dtype: DATA_TYPE_FLOAT32 %s }
                                vars { name: "y" dtype: DATA_TYPE_FLOAT32 %s }
                                ops {
                                  type: "add"
                                  inputs { slot: "X" vars: "x" }
                                  inputs { slot: "Y" vars: "y" }
                                  outputs { slot: "Out" vars: "out" }
                                }
                              })pb",
                         shape(x), shape(y));
}

// The elementwise library's share of one add on one-element tensors.
void BM_AddInferAndKernel(benchmark::State& state) {
  DirectOp op(AddNet({1}, {1}), {{"x", Filled({1}, 1)}, {"y", Filled({1}, 2)}});
  for (auto _ : state) {
    benchmark::DoNotOptimize(op.Infer());
    benchmark::DoNotOptimize(op.Kernel());
  }
}
BENCHMARK(BM_AddInferAndKernel);

void BM_AddInferOnly(benchmark::State& state) {
  DirectOp op(AddNet({1}, {1}), {{"x", Filled({1}, 1)}, {"y", Filled({1}, 2)}});
  for (auto _ : state) benchmark::DoNotOptimize(op.Infer());
}
BENCHMARK(BM_AddInferOnly);

void BM_AddKernelOnly(benchmark::State& state) {
  DirectOp op(AddNet({1}, {1}), {{"x", Filled({1}, 1)}, {"y", Filled({1}, 2)}});
  for (auto _ : state) benchmark::DoNotOptimize(op.Kernel());
}
BENCHMARK(BM_AddKernelOnly);

// Kernel only, on large operands: elements per second.
void RunAddKernel(benchmark::State& state, const Dims& x, const Dims& y) {
  DirectOp op(AddNet(x, y), {{"x", Filled(x, 1)}, {"y", Filled(y, 2)}});
  int64_t n = 1;
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const int64_t dx = i < x.size() ? x[x.size() - 1 - i] : 1;
    const int64_t dy = i < y.size() ? y[y.size() - 1 - i] : 1;
    n *= std::max(dx, dy);
  }
  for (auto _ : state) benchmark::DoNotOptimize(op.Kernel());
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_AddSameShape(benchmark::State& state) {
  RunAddKernel(state, {1024, 1024}, {1024, 1024});
}
BENCHMARK(BM_AddSameShape);

void BM_AddScalar(benchmark::State& state) {
  RunAddKernel(state, {1024, 1024}, {});
}
BENCHMARK(BM_AddScalar);

void BM_AddRow(benchmark::State& state) {
  RunAddKernel(state, {1024, 1024}, {1024});
}
BENCHMARK(BM_AddRow);

void BM_AddColumnWithRow(benchmark::State& state) {
  RunAddKernel(state, {1024, 1}, {1, 1024});
}
BENCHMARK(BM_AddColumnWithRow);

// Cache-resident sizes, where the vector width rather than memory bandwidth
// bounds the loops: 65536 floats of each operand, and a bias row added to
// a [64, 1024] activation.
void BM_AddSameShapeSmall(benchmark::State& state) {
  RunAddKernel(state, {65536}, {65536});
}
BENCHMARK(BM_AddSameShapeSmall);

void BM_AddBiasRow(benchmark::State& state) {
  RunAddKernel(state, {64, 1024}, {1024});
}
BENCHMARK(BM_AddBiasRow);

void BM_AddRank4(benchmark::State& state) {
  RunAddKernel(state, {32, 1, 32, 32}, {1, 32, 1, 32});
}
BENCHMARK(BM_AddRank4);

std::string AddGradNet(const Dims& x, const Dims& y) {
  return absl::StrFormat(
      R"pb(format_version: 1
           name: "add_grad"
           blocks {
             vars {
               name: "x"
               dtype: DATA_TYPE_FLOAT32
               shape: [ %s ]
             }
             vars {
               name: "y"
               dtype: DATA_TYPE_FLOAT32
               shape: [ %s ]
             }
             vars {
               name: "g"
               dtype: DATA_TYPE_FLOAT32
               shape: [ %s ]
             }
             ops {
               type: "add_grad"
               inputs { slot: "X" vars: "x" }
               inputs { slot: "Y" vars: "y" }
               inputs { slot: "Out@GRAD" vars: "g" }
               outputs { slot: "X@GRAD" vars: "dx" }
               outputs { slot: "Y@GRAD" vars: "dy" }
             }
           })pb",
      absl::StrJoin(x, ","), absl::StrJoin(y, ","), absl::StrJoin(x, ","));
}

// add_grad's kernel where X has the output's shape: elements of the
// output's gradient per second.
void RunAddGradKernel(benchmark::State& state, const Dims& x, const Dims& y) {
  DirectOp op(AddGradNet(x, y),
              {{"x", Filled(x, 1)}, {"y", Filled(y, 2)}, {"g", Filled(x, 3)}});
  for (auto _ : state) benchmark::DoNotOptimize(op.Kernel());
  state.SetItemsProcessed(state.iterations() * NumElements(x));
}

// Both gradients copies of the output's: 65536 floats.
void BM_AddGradSameShape(benchmark::State& state) {
  RunAddGradKernel(state, {65536}, {65536});
}
BENCHMARK(BM_AddGradSameShape);

// A bias row's gradient: the output's [64, 1024] summed over its rows.
void BM_AddGradBiasRow(benchmark::State& state) {
  RunAddGradKernel(state, {64, 1024}, {1024});
}
BENCHMARK(BM_AddGradBiasRow);

// mul_grad with both gradients bound, x, y and g all ones.
std::string MulGradNet(const Dims& x, const Dims& y, const Dims& out) {
  auto shape = [](const Dims& dims) {
    return absl::StrCat("shape: [", absl::StrJoin(dims, ","), "]");
  };
  return absl::StrFormat(
      "format_version: 1 name: \"mul_grad\" blocks { "
      "vars { name: \"x\" dtype: DATA_TYPE_FLOAT32 %s } "
      "vars { name: \"y\" dtype: DATA_TYPE_FLOAT32 %s } "
      "vars { name: \"g\" dtype: DATA_TYPE_FLOAT32 %s } "
      "ops { type: \"mul_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Y\" vars: \"y\" } "
      "inputs { slot: \"Out@GRAD\" vars: \"g\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "outputs { slot: \"Y@GRAD\" vars: \"dy\" } } }",
      shape(x), shape(y), shape(out));
}

// Kernel only: output elements per second (each one read for both
// gradients).
void RunMulGradKernel(benchmark::State& state, const Dims& x, const Dims& y,
                      const Dims& out) {
  DirectOp op(
      MulGradNet(x, y, out),
      {{"x", Filled(x, 1)}, {"y", Filled(y, 1)}, {"g", Filled(out, 1)}});
  for (auto _ : state) benchmark::DoNotOptimize(op.Kernel());
  state.SetItemsProcessed(state.iterations() * NumElements(out));
}

void BM_MulGradSameShape(benchmark::State& state) {
  RunMulGradKernel(state, {1024, 1024}, {1024, 1024}, {1024, 1024});
}
BENCHMARK(BM_MulGradSameShape);

void BM_MulGradScalar(benchmark::State& state) {
  RunMulGradKernel(state, {1024, 1024}, {1}, {1024, 1024});
}
BENCHMARK(BM_MulGradScalar);

// A bias along the last axis.
void BM_MulGradRow(benchmark::State& state) {
  RunMulGradKernel(state, {1024, 1024}, {1024}, {1024, 1024});
}
BENCHMARK(BM_MulGradRow);

// A per-channel bias of an NCHW tensor: rows reduce into one element.
void BM_MulGradChannel(benchmark::State& state) {
  RunMulGradKernel(state, {16, 64, 32, 32}, {64, 1, 1}, {16, 64, 32, 32});
}
BENCHMARK(BM_MulGradChannel);

void BM_MulGradColumnWithRow(benchmark::State& state) {
  RunMulGradKernel(state, {1024, 1}, {1, 1024}, {1024, 1024});
}
BENCHMARK(BM_MulGradColumnWithRow);

}  // namespace
}  // namespace scopeflow

BENCHMARK_MAIN();
