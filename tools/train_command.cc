// scopeflow train: the training loop of framework/training behind a
// progress bar, on one replica (Trainer) or several (DataParallelTrainer:
// --replicas threads, --distributed=mpi processes).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/net_io.h"
#include "framework/parallel/communicator.h"
#include "framework/parallel/mpi_communicator.h"
#include "framework/param_io.h"
#include "framework/run_trace.h"
#include "framework/training/data_parallel_trainer.h"
#include "framework/training/dataset.h"
#include "framework/training/trainer.h"
#include "platform/logging.h"
#include "platform/status_macros.h"
#include "tools/commands.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

std::string Duration(double seconds) {
  if (seconds < 60) return absl::StrFormat("%.0fs", seconds);
  return absl::StrFormat("%dm%02ds", static_cast<int>(seconds) / 60,
                         static_cast<int>(seconds) % 60);
}

// One line redrawn in place on a terminal; on a pipe or file, nothing
// between epochs (the epoch lines say it all).
class ProgressBar {
 public:
  ProgressBar() : interactive_(isatty(STDERR_FILENO) != 0) {}

  void Update(const StepReport& report) {
    if (!interactive_) return;
    const Clock::time_point now = Clock::now();
    if (report.step < report.total_steps && now - last_ < kInterval) return;
    last_ = now;
    constexpr int kWidth = 24;
    const double fraction =
        report.total_steps > 0
            ? static_cast<double>(report.step) / report.total_steps
            : 1.0;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(filled, '=');
    if (filled < kWidth) bar += '>';
    bar.resize(kWidth, ' ');
    // Ends in a carriage return: the next update overwrites it.
    SF_LOG(kLogInfo,
           "[%s] step %lld/%lld  epoch %lld/%lld  loss %.4f  %.0f "
           "examples/s  %s left   \r",
           bar, static_cast<long long>(report.step),
           static_cast<long long>(report.total_steps),
           static_cast<long long>(report.epoch + 1),
           static_cast<long long>(report.epochs), report.loss,
           report.examples_per_second, Duration(report.seconds_left));
    dirty_ = LogEnabled(kLogInfo);
  }

  // Ends the redrawn line before other output.
  void Clear() {
    if (!dirty_) return;
    SF_LOG(kLogInfo, "\n");
    dirty_ = false;
  }

 private:
  static constexpr std::chrono::milliseconds kInterval{100};
  const bool interactive_;
  bool dirty_ = false;
  Clock::time_point last_;
};

// The epochs, the final evaluation and the saved parameters, for either
// trainer. `print` is false on every MPI process but rank 0.
template <typename AnyTrainer>
absl::Status TrainAndReport(AnyTrainer& trainer,
                            const TrainCommandOptions& options,
                            const TrainerOptions& trainer_options,
                            const Split& split, bool print) {
  ProgressBar progress;
  const Clock::time_point start = Clock::now();
  int64_t examples = 0;
  double last_loss = 0;
  SF_RETURN_IF_ERROR(trainer.Fit(
      split.train, split.test,
      [&](const StepReport& report) {
        examples += trainer_options.batch_size;
        last_loss = report.loss;
        if (print) progress.Update(report);
      },
      [&](const EvalReport& report) {
        if (!print) return;
        progress.Clear();
        const double seconds =
            std::chrono::duration<double>(Clock::now() - start).count();
        std::printf(
            "epoch %lld/%lld: train loss %.4f  test loss %.4f  test "
            "accuracy %.2f%% (%lld examples)  %.0f examples/s  %.1fs\n",
            static_cast<long long>(report.epoch),
            static_cast<long long>(trainer_options.epochs), last_loss,
            report.loss, 100.0 * report.accuracy,
            static_cast<long long>(report.examples),
            seconds > 0 ? examples / seconds : 0.0, seconds);
        std::fflush(stdout);
      }));
  progress.Clear();
  SF_ASSIGN_OR_RETURN(EvalReport final_report, trainer.Evaluate(split.test));
  if (print) {
    std::printf("final: test loss %.4f  test accuracy %.2f%%\n",
                final_report.loss, 100.0 * final_report.accuracy);
  }
  if (!options.save_params.empty() && print) {
    SF_RETURN_IF_ERROR(SaveParams(trainer.scope(), trainer.state_names(),
                                  options.save_params));
    std::printf("saved the parameters to %s\n", options.save_params.c_str());
  }
  return absl::OkStatus();
}

template <typename AnyTrainer>
absl::Status InitializeOrResume(AnyTrainer& trainer,
                                const TrainCommandOptions& options,
                                bool print) {
  SF_RETURN_IF_ERROR(trainer.Initialize());
  if (!options.resume) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(bool resumed, trainer.Resume());
  SF_ASSIGN_OR_RETURN(int64_t step, trainer.step());
  if (!print) return absl::OkStatus();
  if (resumed) {
    std::printf("resumed from %s at step %lld\n",
                options.checkpoint_dir.c_str(), static_cast<long long>(step));
  } else {
    std::printf("no checkpoint in %s: starting afresh\n",
                options.checkpoint_dir.c_str());
  }
  return absl::OkStatus();
}

// Where a data-parallel run's steps went, per step.
void PrintStepTimes(const DataParallelTimes& times) {
  if (times.steps == 0) return;
  const double ms = 1000.0 / times.steps;
  const double reduce = times.reduce_seconds + times.all_reduce_seconds;
  const double hidden =
      times.reduce_hidden_seconds + times.all_reduce_hidden_seconds;
  std::printf(
      "per step: forward+backward %.3f ms, gradient sum %.3f ms, "
      "all-reduce %.3f ms, update %.3f ms (%.1f%% of the reductions done "
      "while the backward pass ran)\n",
      times.forward_backward_seconds * ms, times.reduce_seconds * ms,
      times.all_reduce_seconds * ms, times.update_seconds * ms,
      reduce > 0 ? 100.0 * hidden / reduce : 0.0);
}

// Writes the trace where --trace says, if it does (on rank 0 only).
absl::Status WriteTrace(const RunTrace& trace, const std::string& path,
                        bool print) {
  if (path.empty() || !print) return absl::OkStatus();
  SF_RETURN_IF_ERROR(trace.WriteJson(path));
  std::printf("trace of %zu event(s) written to %s\n", trace.size(),
              path.c_str());
  return absl::OkStatus();
}

}  // namespace

absl::Status TrainCommand(const TrainCommandOptions& options) {
  SF_CHECK(!options.main.empty(), "train: --main NET is required");
  SF_CHECK(!options.startup.empty(), "train: --startup NET is required");
  SF_CHECK(!options.data.empty(), "train: --data DATASET is required");
  SF_CHECK(!options.resume || !options.checkpoint_dir.empty(),
           "train: --resume needs --checkpoint_dir");
  SF_CHECK(options.replicas >= 1, "train: --replicas must be >= 1, got %d",
           options.replicas);
  SF_CHECK(options.distributed.empty() || options.distributed == "mpi",
           "train: --distributed must be mpi or empty, got \"%s\"",
           options.distributed);
  std::vector<Place> places;
  if (!options.places.empty()) {
    absl::StatusOr<std::vector<Place>> parsed = ParsePlaces(options.places);
    SF_CHECK(parsed.ok(), "train: --places: %s", parsed.status().message());
    places = *std::move(parsed);
    SF_CHECK(options.replicas == 1 ||
                 options.replicas == static_cast<int>(places.size()),
             "train: --replicas=%d and --places with %d places: a replica "
             "per place, give one of the two",
             options.replicas, places.size());
  }
  std::unique_ptr<Communicator> communicator;
  if (options.distributed == "mpi") {
    SF_ASSIGN_OR_RETURN(communicator, NewMpiCommunicator());
  }
  const bool print = communicator == nullptr || communicator->rank() == 0;
  SF_ASSIGN_OR_RETURN(NetDef main, LoadNet(options.main));
  SF_ASSIGN_OR_RETURN(NetDef startup, LoadNet(options.startup));

  const bool digits = options.data == "digits";
  const std::string path = digits ? kDebianDigitsPath : options.data;
  float scale = options.feature_scale;
  if (scale <= 0) scale = digits ? 1.0f / 16 : 1.0f;
  SF_ASSIGN_OR_RETURN(Dataset data, LoadCsvDataset(path, scale));
  SF_CHECK(options.split == "shuffled" || options.split == "tail",
           "train: --split must be shuffled or tail, got \"%s\"",
           options.split);
  SF_ASSIGN_OR_RETURN(
      Split split,
      options.split == "tail"
          ? SplitTail(data, options.test_fraction)
          : SplitShuffled(data, options.test_fraction, options.split_seed));
  if (print) {
    std::printf(
        "data: %s (%s split), %lld train and %lld test examples, %lld "
        "features, %lld classes\n",
        path.c_str(), options.split.c_str(),
        static_cast<long long>(split.train.size()),
        static_cast<long long>(split.test.size()),
        static_cast<long long>(data.features.dim(1)),
        static_cast<long long>(data.num_classes));
  }

  TrainerOptions trainer_options = options.trainer;
  RunTrace trace;
  if (!options.trace.empty()) trainer_options.run.trace = &trace;
  trainer_options.run.check_numerics = options.check_numerics;
  const int64_t per_epoch = split.train.size() / trainer_options.batch_size;
  if (trainer_options.optimizer.total_steps == 0) {
    trainer_options.optimizer.total_steps = per_epoch * trainer_options.epochs;
  }
  if (options.replicas == 1 && places.empty() && communicator == nullptr) {
    SF_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                        Trainer::Create(startup, main, trainer_options));
    SF_RETURN_IF_ERROR(InitializeOrResume(*trainer, options, print));
    SF_RETURN_IF_ERROR(
        TrainAndReport(*trainer, options, trainer_options, split, print));
    return WriteTrace(trace, options.trace, print);
  }
  absl::StatusOr<std::unique_ptr<DataParallelTrainer>> created =
      places.empty()
          ? DataParallelTrainer::Create(startup, main, trainer_options,
                                        options.replicas, communicator.get(),
                                        options.bucket_bytes)
          : DataParallelTrainer::Create(startup, main, trainer_options, places,
                                        communicator.get(),
                                        options.bucket_bytes);
  SF_RETURN_IF_ERROR(created.status());
  std::unique_ptr<DataParallelTrainer> trainer = *std::move(created);
  if (print && !places.empty()) {
    std::printf("places: %s (%d device%s holding the state)\n",
                options.places.c_str(), trainer->devices(),
                trainer->devices() == 1 ? "" : "s");
  }
  if (print) {
    std::printf(
        "data parallel: global batch %lld = %d process%s x %d replica%s x "
        "%lld examples (per-replica batch %lld), %d OpenMP thread%s per "
        "replica\n",
        static_cast<long long>(trainer_options.batch_size),
        trainer->processes(), trainer->processes() == 1 ? "" : "es",
        trainer->replicas(), trainer->replicas() == 1 ? "" : "s",
        static_cast<long long>(trainer->replica_batch()),
        static_cast<long long>(trainer->replica_batch()),
        trainer->threads_per_replica(),
        trainer->threads_per_replica() == 1 ? "" : "s");
  }
  SF_RETURN_IF_ERROR(InitializeOrResume(*trainer, options, print));
  SF_RETURN_IF_ERROR(
      TrainAndReport(*trainer, options, trainer_options, split, print));
  if (print) PrintStepTimes(trainer->times());
  return WriteTrace(trace, options.trace, print);
}

}  // namespace scopeflow
