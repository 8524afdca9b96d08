// Costs of the Scope operations the executor and serving paths use.
//   bazel run //framework:scope_benchmark
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/scope.h"

namespace scopeflow {
namespace {

// A chain of `depth` scopes; the first holds `vars` variables named v0...
// Returns the last (deepest) scope.
Scope* MakeChain(Scope& root, int depth, int vars) {
  for (int i = 0; i < vars; ++i) root.Var(absl::StrCat("v", i));
  Scope* scope = &root;
  for (int level = 1; level < depth; ++level) {
    scope = &scope->NewScope();
    // Each level has a few variables of its own, as run scopes do.
    for (int i = 0; i < 8; ++i) scope->Var(absl::StrCat("local", i));
  }
  return scope;
}

// FindVar that finds its variable `depth` scopes up (depth 1: locally).
void BM_FindVarHit(benchmark::State& state) {
  // Shared by the benchmark's threads; thread 0 sets it up before the
  // timing loop's start barrier and tears it down after its end barrier.
  static std::unique_ptr<Scope> root;
  static Scope* leaf = nullptr;
  if (state.thread_index() == 0) {
    root = std::make_unique<Scope>();
    leaf = MakeChain(*root, static_cast<int>(state.range(0)), 100);
  }
  const std::string name = "v42";
  for (auto _ : state) {
    benchmark::DoNotOptimize(leaf->FindVar(name));
  }
  if (state.thread_index() == 0) root.reset();
}
BENCHMARK(BM_FindVarHit)->Arg(1)->Arg(8)->Threads(1)->Threads(2)->UseRealTime();

// FindVar of a name no scope of the chain holds.
void BM_FindVarMiss(benchmark::State& state) {
  Scope root;
  Scope* leaf = MakeChain(root, static_cast<int>(state.range(0)), 100);
  const std::string name = "absent";
  for (auto _ : state) {
    benchmark::DoNotOptimize(leaf->FindVar(name));
  }
}
BENCHMARK(BM_FindVarMiss)->Arg(1)->Arg(8);

// Var creating a new variable (the batch is erased between iterations,
// untimed).
void BM_VarCreate(benchmark::State& state) {
  constexpr int kBatch = 1000;
  std::vector<std::string> names;
  for (int i = 0; i < kBatch; ++i) names.push_back(absl::StrCat("tmp", i));
  Scope scope;
  for (auto _ : state) {
    for (const std::string& name : names) {
      benchmark::DoNotOptimize(scope.Var(name));
    }
    state.PauseTiming();
    scope.EraseVars(names);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_VarCreate);

// NewScope followed by DeleteScope, as a run scope per request.
void BM_NewScopeDeleteScope(benchmark::State& state) {
  Scope root;
  root.Var("w");
  for (auto _ : state) {
    Scope& kid = root.NewScope();
    benchmark::DoNotOptimize(kid.Var("x"));
    benchmark::DoNotOptimize(root.DeleteScope(&kid));
  }
}
BENCHMARK(BM_NewScopeDeleteScope);

}  // namespace
}  // namespace scopeflow

BENCHMARK_MAIN();
