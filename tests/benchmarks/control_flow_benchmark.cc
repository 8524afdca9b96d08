// Control-flow overheads: a while loop's cost per iteration (each runs its
// body in a scope of its own), and the bit-counting RNN of
// examples/sequence, forward and forward + backward through time.
//   OMP_NUM_THREADS=1 bazel run //tests/benchmarks:control_flow_benchmark
// Figures in docs/PERFORMANCE.md.
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/net_io.h"

namespace scopeflow {
namespace {

// i counts to n by one; the body is one add and one less. With
// `step_scopes`, every iteration's scope is kept for a gradient.
NetDef Counter(bool step_scopes) {
  std::string text = R"pb(
    format_version: 1
    name: "counter"
    blocks {
      vars {
        name: "n"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 1 ]
      }
      ops {
        type: "fill_constant"
        outputs { slot: "Out" vars: "i0" }
        attrs {
          name: "shape"
          i64s { values: [ 1 ] }
        }
      }
      ops {
        type: "less"
        inputs { slot: "X" vars: "i0" }
        inputs { slot: "Y" vars: "n" }
        outputs { slot: "Out" vars: "c" }
      }
      ops {
        type: "while"
        inputs { slot: "Condition" vars: "c" }
        inputs { slot: "X" vars: "n" }
        inputs { slot: "Init" vars: "i0" }
        outputs {
          slot: "Out"
          vars: [ "i", "c" ]
        } STEPS
        attrs { name: "sub_block" block_idx: 1 }
      }
    }
    blocks {
      parent_idx: 0
      ops {
        type: "scale"
        inputs { slot: "X" vars: "i" }
        outputs { slot: "Out" vars: "i" }
        attrs { name: "bias" f: 1 }
      }
      ops {
        type: "less"
        inputs { slot: "X" vars: "i" }
        inputs { slot: "Y" vars: "n" }
        outputs { slot: "Out" vars: "c" }
      }
    }
  )pb";
  const std::string steps =
      step_scopes ? R"pb(outputs { slot: "StepScopes" vars: "steps" })pb" : "";
  text.replace(text.find("STEPS"), 5, steps);
  absl::StatusOr<NetDef> net = ParseNetText(text);
  if (!net.ok()) std::abort();
  return *net;
}

void WhileLoop(benchmark::State& state, bool step_scopes) {
  const int n = static_cast<int>(state.range(0));
  const Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(Counter(step_scopes), 0, CPUPlace());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  Tensor limit;
  if (!limit.Allocate(CPUPlace(), kFloat32, {1}).ok()) std::abort();
  limit.data<float>()[0] = static_cast<float>(n);
  Scope root;
  const std::vector<Feed> feeds = {{"n", limit}};
  const std::vector<std::string> fetches = {"i"};
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, root, feeds, fetches);
    if (!out.ok() || (*out)[0].data<float>()[0] != n) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// Per iteration: 1 / items_per_second.
void BM_While(benchmark::State& state) { WhileLoop(state, false); }
void BM_WhileKeepingStepScopes(benchmark::State& state) {
  WhileLoop(state, true);
}
BENCHMARK(BM_While)->Arg(1000);
BENCHMARK(BM_WhileKeepingStepScopes)->Arg(1000);

// The RNN of examples/sequence (10 steps, 16 hidden units) on a batch of
// `range(0)` sequences: forward only (inference: no step scope kept), or
// forward and the gradients of its parameters (step scopes kept).
void Rnn(benchmark::State& state, bool backward) {
  const int64_t batch = state.range(0);
  absl::StatusOr<NetDef> startup =
      LoadNet("examples/sequence/rnn_startup.pbtxt");
  absl::StatusOr<NetDef> net = LoadNet("examples/sequence/rnn.pbtxt");
  if (!startup.ok() || !net.ok()) {
    state.SkipWithError("examples/sequence nets not found");
    return;
  }
  std::vector<std::string> fetches = {"loss"};
  if (backward) {
    absl::StatusOr<std::vector<VarGrad>> grads = AppendBackward(*net, "loss");
    if (!grads.ok()) std::abort();
    for (const VarGrad& grad : *grads) fetches.push_back(grad.grad);
  } else {
    // As evaluation runs it: no list of scopes, so nothing is kept.
    for (OpDef& op : *net->mutable_blocks(0)->mutable_ops()) {
      if (op.type() != "recurrent") continue;
      for (int s = op.outputs_size() - 1; s >= 0; --s) {
        if (op.outputs(s).slot() == "StepScopes") {
          op.mutable_outputs()->DeleteSubrange(s, 1);
        }
      }
    }
  }
  const Executor executor;
  Scope root;
  absl::StatusOr<PreparedNet> init = executor.Prepare(*startup, 0, CPUPlace());
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(*net, 0, CPUPlace());
  if (!init.ok() || !prepared.ok() || !executor.Run(*init, root, {}, {}).ok()) {
    state.SkipWithError("preparing the RNN failed");
    return;
  }
  Tensor bits;
  Tensor labels;
  if (!bits.Allocate(CPUPlace(), kFloat32, {batch, 10}).ok() ||
      !labels.Allocate(CPUPlace(), kInt64, {batch, 1}).ok()) {
    std::abort();
  }
  for (int64_t r = 0; r < batch; ++r) {
    int64_t ones = 0;
    for (int64_t t = 0; t < 10; ++t) {
      const bool one = ((r * 7 + t * 3) % 5) < 2;
      bits.data<float>()[r * 10 + t] = one ? 1.0f : 0.0f;
      ones += one;
    }
    labels.data<int64_t>()[r] = ones;
  }
  const std::vector<Feed> feeds = {{"bits", bits}, {"label", labels}};
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, root, feeds, fetches);
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_RnnForward(benchmark::State& state) { Rnn(state, false); }
void BM_RnnForwardBackward(benchmark::State& state) { Rnn(state, true); }
BENCHMARK(BM_RnnForward)->Arg(1)->Arg(32);
BENCHMARK(BM_RnnForwardBackward)->Arg(1)->Arg(32);

}  // namespace
}  // namespace scopeflow

BENCHMARK_MAIN();
