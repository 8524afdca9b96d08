// scopeflow run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/npy.h"
#include "framework/param_io.h"
#include "framework/run_trace.h"
#include "platform/file.h"
#include "platform/status_macros.h"
#include "tools/commands.h"
#include "tools/tensor_summary.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

absl::StatusOr<std::vector<Feed>> ReadFeeds(
    const std::vector<std::string>& specs) {
  std::vector<Feed> feeds;
  absl::flat_hash_map<std::string, std::string> fed;  // name -> spec
  for (const std::string& spec : specs) {
    std::vector<std::string> parts =
        absl::StrSplit(spec, absl::MaxSplits('=', 1));
    SF_CHECK(parts.size() == 2 && !parts[0].empty() && !parts[1].empty(),
             "--feed \"%s\": expected name=FILE.npy", spec);
    const auto [earlier, added] = fed.emplace(parts[0], spec);
    SF_CHECK(added, "--feed feeds \"%s\" twice (\"%s\" and \"%s\")", parts[0],
             earlier->second, spec);
    SF_ASSIGN_OR_RETURN(Tensor tensor, ReadNpy(parts[1]));
    feeds.push_back({parts[0], std::move(tensor)});
  }
  return feeds;
}

// Variables some op writes and no op reads: what a net computes.
std::vector<std::string> NetOutputs(const PreparedNet& prepared) {
  std::vector<bool> read(prepared.var_names().size(), false);
  std::vector<bool> written(prepared.var_names().size(), false);
  for (const PreparedOp& op : prepared.ops()) {
    for (const auto& slot : op.inputs) {
      for (int v : slot) read[v] = true;
    }
    for (const auto& slot : op.outputs) {
      for (int v : slot) written[v] = true;
    }
  }
  std::vector<std::string> outputs;
  for (size_t v = 0; v < read.size(); ++v) {
    if (written[v] && !read[v]) outputs.push_back(prepared.var_names()[v]);
  }
  return outputs;
}

double Percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const size_t index =
      static_cast<size_t>(fraction * (values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

void PrintProfile(const PreparedNet& prepared, const RunProfile& profile,
                  int runs) {
  struct Row {
    int calls = 0;
    double total = 0;
    double kernel = 0;
  };
  std::map<std::string, Row> rows;
  double all = 0;
  for (size_t i = 0; i < prepared.ops().size(); ++i) {
    Row& row = rows[prepared.ops()[i].spec->type()];
    row.calls += runs;
    row.total += profile.ops[i].total_seconds;
    row.kernel += profile.ops[i].kernel_seconds;
    all += profile.ops[i].total_seconds;
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.total > b.second.total;
  });
  std::printf("\nprofile over %d run(s), per op type (ms per run):\n", runs);
  std::printf("  %-26s %8s %10s %10s %10s %7s\n", "op type", "calls", "total",
              "kernel", "framework", "share");
  for (const auto& [type, row] : sorted) {
    std::printf("  %-26s %8d %10.4f %10.4f %10.4f %6.1f%%\n", type.c_str(),
                row.calls, 1e3 * row.total / runs, 1e3 * row.kernel / runs,
                1e3 * (row.total - row.kernel) / runs,
                all > 0 ? 100 * row.total / all : 0.0);
  }
  // The ops themselves, slowest first: which convolution of several is the
  // costly one. Ops as run, so on the CPU after the layout rewrite, with
  // the variable each writes first.
  std::vector<size_t> order(prepared.ops().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return profile.ops[a].total_seconds > profile.ops[b].total_seconds;
  });
  constexpr size_t kSlowestOps = 10;
  order.resize(std::min(order.size(), kSlowestOps));
  std::printf("\nslowest ops (ms per run):\n");
  std::printf("  %5s %-20s %-28s %10s %7s\n", "op", "type", "writes", "total",
              "share");
  for (size_t i : order) {
    const PreparedOp& op = prepared.ops()[i];
    std::string output;
    for (const std::vector<int>& vars : op.outputs) {
      if (!vars.empty()) {
        output = prepared.var_names()[vars[0]];
        break;
      }
    }
    std::printf("  %5d %-20s %-28s %10.4f %6.1f%%\n", op.index,
                op.spec->type().c_str(), output.c_str(),
                1e3 * profile.ops[i].total_seconds / runs,
                all > 0 ? 100 * profile.ops[i].total_seconds / all : 0.0);
  }
}

// --layout's value as PrepareOptions::activation_layout.
absl::StatusOr<ActivationLayout> ParseLayout(const std::string& layout) {
  if (layout == "auto") return ActivationLayout::kAuto;
  if (layout == "nhwc") return ActivationLayout::kNhwc;
  if (layout == "nchw8c") return ActivationLayout::kNchw8c;
  if (layout == "nchw16c") return ActivationLayout::kNchw16c;
  return absl::InvalidArgumentError(absl::StrCat(
      "--layout must be auto, nhwc, nchw8c or nchw16c, got \"", layout, "\""));
}

}  // namespace

absl::Status RunCommand(const RunCommandOptions& options) {
  SF_CHECK(options.repeat >= 1, "--repeat must be at least 1, got %d",
           options.repeat);
  SF_ASSIGN_OR_RETURN(Place place, ParsePlace(options.place));
  ExecutorOptions executor_options;
  executor_options.prepare.channels_last = options.channels_last;
  executor_options.prepare.fuse_ops = options.fuse_ops;
  SF_ASSIGN_OR_RETURN(executor_options.prepare.activation_layout,
                      ParseLayout(options.layout));
  executor_options.run.plan_memory = options.plan_memory;
  executor_options.run.check_numerics = options.check_numerics;
  RunTrace trace;
  if (!options.trace.empty()) executor_options.run.trace = &trace;
  if (!options.output_dir.empty()) {
    // Created, as every output folder is, when it is not there.
    std::error_code error;
    std::filesystem::create_directories(options.output_dir, error);
    SF_CHECK(!error, "--output_dir %s: cannot create it: %s",
             options.output_dir, error.message());
  }
  const Executor executor(executor_options);
  Scope root;
  std::optional<NetDef> startup;
  if (!options.startup.empty()) {
    SF_ASSIGN_OR_RETURN(startup, LoadNet(options.startup));
    SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                        executor.Prepare(*startup, 0, place));
    SF_RETURN_IF_ERROR(executor.Run(prepared, root, {}, {}).status());
  }
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(options.net));
  if (!options.params.empty()) {
    SF_ASSIGN_OR_RETURN(std::vector<std::string> loaded,
                        LoadParams(options.params, root, place));
    if (!options.allow_unused_params) {
      std::vector<const NetDef*> nets = {&net};
      if (startup.has_value()) nets.push_back(&*startup);
      SF_RETURN_IF_ERROR(CheckParamsUsed(loaded, nets, options.params));
    }
    std::printf("loaded %zu parameter(s) from %s\n", loaded.size(),
                options.params.c_str());
  }
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, executor.Prepare(net, 0, place));
  SF_ASSIGN_OR_RETURN(std::vector<Feed> feeds, ReadFeeds(options.feeds));
  const std::vector<std::string> fetches =
      options.fetches.empty() ? NetOutputs(prepared) : options.fetches;

  if (options.repeat > 1) {  // Warm-up: first-touch of memory, caches.
    SF_RETURN_IF_ERROR(executor.Run(prepared, root, feeds, fetches).status());
  }
  RunProfile profile;
  std::vector<double> latencies;
  std::vector<Tensor> results;
  for (int i = 0; i < options.repeat; ++i) {
    const Clock::time_point start = Clock::now();
    SF_ASSIGN_OR_RETURN(results,
                        executor.Run(prepared, root, feeds, fetches,
                                     options.profile ? &profile : nullptr));
    latencies.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start)
            .count());
  }

  std::printf("net \"%s\" on %s\n", net.name().c_str(),
              place.ToString().c_str());
  for (size_t i = 0; i < fetches.size(); ++i) {
    SF_ASSIGN_OR_RETURN(Tensor host, results[i].CopyTo(CPUPlace()));
    std::printf("%s: %s\n", fetches[i].c_str(), SummarizeTensor(host).c_str());
    if (!options.output_dir.empty()) {
      // The net names its variables: a name like "../x" must not write
      // outside the folder (platform/file.h, SafeFileName).
      const std::string file_name = SafeFileName(fetches[i]);
      const std::string path =
          absl::StrCat(options.output_dir, "/", file_name, ".npy");
      SF_RETURN_IF_ERROR(WriteNpy(path, host));
      if (file_name != fetches[i]) {
        std::printf("  (\"%s\" written as %s: names are %%-encoded)\n",
                    absl::CHexEscape(fetches[i]).c_str(), path.c_str());
      }
    }
  }
  std::printf("latency over %d run(s): median %.4f ms, p90 %.4f ms\n",
              options.repeat, Percentile(latencies, 0.5),
              Percentile(latencies, 0.9));
  if (options.profile) PrintProfile(prepared, profile, options.repeat);
  if (!options.trace.empty()) {
    SF_RETURN_IF_ERROR(trace.WriteJson(options.trace));
    std::printf("trace of %zu event(s) written to %s\n", trace.size(),
                options.trace.c_str());
  }
  if (!options.save_params.empty()) {
    // The root scope holds exactly the persistable variables.
    const std::vector<std::string> names = root.LocalVarNames();
    SF_RETURN_IF_ERROR(SaveParams(root, names, options.save_params));
    std::printf("saved %zu parameter(s) to %s\n", names.size(),
                options.save_params.c_str());
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
