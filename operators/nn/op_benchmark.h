// The loop of the nn benchmarks: one net of one op, prepared once and run
// through the executor per iteration, as a net runs the op.
#ifndef SCOPEFLOW_OPERATORS_NN_OP_BENCHMARK_H_
#define SCOPEFLOW_OPERATORS_NN_OP_BENCHMARK_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "google/protobuf/text_format.h"

namespace scopeflow {

// Parses the block `block_text` (vars and ops, in protobuf text format) into
// a net, prepares it on the CPU and runs it once per iteration of `state`
// with `feeds`, fetching `fetch`. An error skips the benchmark with its
// message. Returns whether every run succeeded.
inline bool RunOpNet(benchmark::State& state, const std::string& block_text,
                     const std::vector<Feed>& feeds, const std::string& fetch) {
  NetDef net;
  if (!google::protobuf::TextFormat::ParseFromString(
          absl::StrCat("format_version: ", kNetFormatVersion, " blocks { ",
                       block_text, " }"),
          &net)) {
    state.SkipWithError("the benchmark's net does not parse");
    return false;
  }
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return false;
  }
  Scope scope;
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, scope, feeds, {fetch});
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return false;
    }
    benchmark::DoNotOptimize((*out)[0].raw_data());
  }
  return true;
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_OP_BENCHMARK_H_
