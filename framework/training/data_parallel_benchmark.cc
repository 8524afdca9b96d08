// Examples per second of training steps on 1 and 2 replicas, for the digits
// MLP (64-128-10) and a 784-1024-1024-10 MLP, batch 64 (global), Adam:
//
//   bazel run -c opt --config=cpu_only \
//     //framework/training:data_parallel_benchmark -- \
//     --benchmark_repetitions=3
//
// Cases: Trainer and 1 replica on one OpenMP thread, 1 replica on two
// (threads inside each op), 2 replicas on one thread each (the goal: 2
// replicas at least 1.8x one replica at one thread), with the default
// gradient buckets (25 MiB, the first 1 MiB) and with 256 KiB ones.
// Counters: examples/s, CPU microseconds per example (all threads; what a
// loaded machine leaves comparable), the gradient sum and all-reduce per
// step (reduce_us) and the share of it done while a replica's backward pass
// still ran (hidden).
//
// Across processes, one replica each, a fixed number of steps:
//
//   mpirun -np 2 bazel-bin/framework/training/data_parallel_benchmark --mpi
#include <sys/resource.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/net_io.h"
#include "framework/parallel/mpi_communicator.h"
#include "framework/training/data_parallel_trainer.h"
#include "framework/training/trainer.h"
#include "platform/host_memory.h"
#include "platform/parallel.h"

namespace scopeflow {
namespace {

constexpr int64_t kBatch = 64;

std::vector<int64_t> Widths(int net) {
  if (net == 0) return {64, 128, 10};
  return {784, 1024, 1024, 10};
}

std::string Shape(int64_t a, int64_t b) {
  return b < 0 ? absl::StrCat("[ ", a, " ]")
               : absl::StrCat("[ ", a, ", ", b, " ]");
}

// A relu MLP of `widths` with softmax cross-entropy, and its seeded
// startup net.
void MlpNets(const std::vector<int64_t>& widths, NetDef& startup,
             NetDef& main) {
  std::string vars;
  std::string init;
  std::string ops;
  std::string input = "image";
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    const std::string w = absl::StrCat("fc", l, ".w");
    const std::string b = absl::StrCat("fc", l, ".b");
    vars += absl::StrCat(
        "vars { name: \"", w,
        "\" dtype: DATA_TYPE_FLOAT32 shape: ", Shape(widths[l], widths[l + 1]),
        " persistable: true }\n", "vars { name: \"", b,
        "\" dtype: DATA_TYPE_FLOAT32 shape: ", Shape(widths[l + 1], -1),
        " persistable: true }\n");
    init += absl::StrCat(
        "ops { type: \"gaussian_random\" outputs { slot: \"Out\" vars: \"", w,
        "\" } attrs { name: \"shape\" i64s { values: [ ", widths[l], ", ",
        widths[l + 1],
        " ] } } attrs { name: \"std\" f: 0.05 } attrs { name: "
        "\"seed\" i: ",
        l + 1, " } }\n",
        "ops { type: \"fill_constant\" outputs { slot: \"Out\" vars: \"", b,
        "\" } attrs { name: \"shape\" i64s { values: [ ", widths[l + 1],
        " ] } } attrs { name: \"value\" f: 0 } }\n");
    const std::string out = absl::StrCat("h", l);
    ops +=
        absl::StrCat("ops { type: \"fc\" inputs { slot: \"X\" vars: \"", input,
                     "\" } inputs { slot: \"W\" vars: \"", w,
                     "\" } inputs { slot: \"Bias\" vars: \"", b,
                     "\" } outputs { slot: \"Out\" vars: \"", out, "\" } }\n");
    input = out;
    if (l + 2 < widths.size()) {
      ops += absl::StrCat("ops { type: \"relu\" inputs { slot: \"X\" vars: \"",
                          out, "\" } outputs { slot: \"Out\" vars: \"", out,
                          ".relu\" } }\n");
      input = out + ".relu";
    }
  }
  ops += absl::StrCat(
      "ops { type: \"softmax_with_cross_entropy\" inputs { slot: \"Logits\" "
      "vars: \"",
      input,
      "\" } inputs { slot: \"Label\" vars: \"label\" } "
      "outputs { slot: \"Softmax\" vars: \"prob\" } outputs { slot: \"Loss\" "
      "vars: \"losses\" } }\n"
      "ops { type: \"mean\" inputs { slot: \"X\" vars: \"losses\" } outputs { "
      "slot: \"Out\" vars: \"loss\" } }\n");
  startup = *ParseNetText(absl::StrCat(
      "format_version: 1 name: \"startup\" blocks {\n", vars, init, "}\n"));
  main = *ParseNetText(absl::StrCat(
      "format_version: 1 name: \"mlp\" blocks {\n"
      "vars { name: \"image\" dtype: DATA_TYPE_FLOAT32 shape: ",
      Shape(-1, widths[0]), " }\n",
      "vars { name: \"label\" dtype: DATA_TYPE_INT64 shape: [ -1, 1 ] }\n",
      vars, ops, "}\n"));
}

Dataset RandomBatch(int64_t features) {
  Dataset data;
  (void)data.features.Allocate(CPUPlace(), kFloat32, {kBatch, features});
  (void)data.labels.Allocate(CPUPlace(), kInt64, {kBatch, 1});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(0, 1);
  for (int64_t i = 0; i < kBatch * features; ++i) {
    data.features.data<float>()[i] = uniform(rng);
  }
  for (int64_t i = 0; i < kBatch; ++i) {
    data.labels.data<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
  }
  data.num_classes = 10;
  return data;
}

// CPU seconds this process has used, all threads together: on a machine
// other jobs load, CPU time per example says what wall time cannot.
double ProcessCpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

TrainerOptions Options() {
  TrainerOptions options;
  options.batch_size = kBatch;
  options.accuracy = "";
  options.optimizer.type = "adam";
  options.optimizer.learning_rate = 1e-4f;
  return options;
}

// args: net (0 digits MLP, 1 784-1024-1024-10), replicas, OpenMP threads
// of the caller (each replica gets threads / replicas), gradient bucket
// KiB (0: the default), who sums the buckets (1: the replicas' threads,
// 0: the training thread). `communicator`: across processes (null: one).
void DataParallelStep(benchmark::State& state, Communicator* communicator) {
  const std::vector<int64_t> widths = Widths(static_cast<int>(state.range(0)));
  const int replicas = static_cast<int>(state.range(1));
  ScopedMaxThreads threads(static_cast<int>(state.range(2)));
  const int64_t bucket_bytes =
      state.range(3) > 0 ? state.range(3) << 10 : kDefaultBucketBytes;
  NetDef startup;
  NetDef main;
  MlpNets(widths, startup, main);
  const Dataset batch = RandomBatch(widths[0]);
  // The global batch: each process takes its rank's rows of it.
  auto trainer = DataParallelTrainer::Create(startup, main, Options(), replicas,
                                             communicator, bucket_bytes);
  if (!trainer.ok() || !(*trainer)->Initialize().ok()) {
    state.SkipWithError("could not create the trainer");
    return;
  }
  (*trainer)->set_sum_on_replica_threads(state.range(4) != 0);
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) {
    absl::StatusOr<double> loss = (*trainer)->TrainStep(batch);
    if (!loss.ok()) {
      state.SkipWithError(std::string(loss.status().message()).c_str());
      return;
    }
  }
  const DataParallelTimes& times = (*trainer)->times();
  // Of the global batch, all processes together.
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(kBatch),
                         benchmark::Counter::kIsIterationInvariantRate);
  const double reduce = times.reduce_seconds + times.all_reduce_seconds;
  const double hidden =
      times.reduce_hidden_seconds + times.all_reduce_hidden_seconds;
  state.counters["reduce_us"] =
      times.steps > 0 ? 1e6 * reduce / static_cast<double>(times.steps) : 0;
  state.counters["hidden"] = reduce > 0 ? hidden / reduce : 0;
  state.counters["buckets"] = (*trainer)->reducer().buckets();
  state.counters["cpu_us/example"] =
      1e6 * (ProcessCpuSeconds() - cpu_start) /
      (static_cast<double>(state.iterations()) * kBatch);
  state.counters["threads_per_replica"] = (*trainer)->threads_per_replica();
}

// The single-replica Trainer itself, for the overhead of splitting its net.
void BM_TrainerStep(benchmark::State& state) {
  const std::vector<int64_t> widths = Widths(static_cast<int>(state.range(0)));
  ScopedMaxThreads threads(static_cast<int>(state.range(1)));
  NetDef startup;
  NetDef main;
  MlpNets(widths, startup, main);
  const Dataset batch = RandomBatch(widths[0]);
  auto trainer = Trainer::Create(startup, main, Options());
  if (!trainer.ok() || !(*trainer)->Initialize().ok()) {
    state.SkipWithError("could not create the trainer");
    return;
  }
  int64_t step = 0;
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) {
    // A data set of one batch: every step takes all of it.
    if (!(*trainer)->TrainUntil(batch, ++step, nullptr).ok()) {
      state.SkipWithError("step failed");
      return;
    }
  }
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(kBatch),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["cpu_us/example"] =
      1e6 * (ProcessCpuSeconds() - cpu_start) /
      (static_cast<double>(state.iterations()) * kBatch);
}

// Reports nothing: for every rank but 0.
class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

void RegisterInProcess() {
  benchmark::RegisterBenchmark("BM_TrainerStep", BM_TrainerStep)
      ->ArgNames({"net", "threads"})
      ->Args({0, 1})
      ->Args({1, 1})
      ->UseRealTime()
      ->MinTime(1.0);
  benchmark::RegisterBenchmark(
      "BM_DataParallelStep",
      [](benchmark::State& state) { DataParallelStep(state, nullptr); })
      ->ArgNames({"net", "replicas", "threads", "bucket_kib", "on_replicas"})
      ->Args({0, 1, 1, 0, 1})
      ->Args({0, 2, 2, 0, 1})
      ->Args({0, 2, 2, 16, 0})
      ->Args({0, 2, 2, 16, 1})
      ->Args({0, 1, 2, 0, 1})
      ->Args({1, 1, 1, 0, 1})
      ->Args({1, 2, 2, 0, 0})
      ->Args({1, 2, 2, 0, 1})
      ->Args({1, 2, 2, 256, 0})
      ->Args({1, 2, 2, 256, 1})
      ->Args({1, 1, 2, 0, 1})
      ->UseRealTime()
      ->MinTime(1.0);
}

// Every rank must run the same steps: a fixed count, not a time.
void RegisterAcrossProcesses(Communicator* communicator) {
  benchmark::RegisterBenchmark("BM_DataParallelStepMpi",
                               [communicator](benchmark::State& state) {
                                 DataParallelStep(state, communicator);
                               })
      ->ArgNames({"net", "replicas", "threads", "bucket_kib", "on_replicas"})
      ->Args({0, 1, 1, 0, 1})
      ->Args({0, 1, 1, 16, 1})
      ->Args({1, 1, 1, 0, 1})
      ->Args({1, 1, 1, 256, 1})
      ->UseRealTime()
      ->Iterations(200);
}

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  // As the scopeflow command does: freed buffers are reused, not mapped
  // afresh (a page fault per 4 KiB) at every step.
  scopeflow::KeepFreedHostMemoryForReuse();
  bool mpi = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--mpi") {
      mpi = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (!mpi) {
    scopeflow::RegisterInProcess();
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }
  absl::StatusOr<std::unique_ptr<scopeflow::Communicator>> communicator =
      scopeflow::NewMpiCommunicator();
  if (!communicator.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(communicator.status().message()).c_str());
    return 1;
  }
  scopeflow::RegisterAcrossProcesses(communicator->get());
  if ((*communicator)->rank() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    scopeflow::NullReporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  return 0;
}
