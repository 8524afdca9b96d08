// The subcommands of the scopeflow command, each printing to stdout.
#ifndef SCOPEFLOW_TOOLS_COMMANDS_H_
#define SCOPEFLOW_TOOLS_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/training/gradient_reducer.h"
#include "framework/training/trainer.h"

namespace scopeflow {

struct RunCommandOptions {
  std::string net;
  std::string startup;
  // A parameter file loaded into the root scope (after the startup net).
  std::string params;
  // Names in `params` that neither net has are an error unless this is set.
  bool allow_unused_params = false;
  // Where to save the root scope's variables (the parameters) afterwards.
  std::string save_params;
  // name=FILE.npy
  std::vector<std::string> feeds;
  std::vector<std::string> fetches;
  int repeat = 1;
  bool profile = false;
  std::string place = "cpu";
  std::string output_dir;
  // PrepareOptions::channels_last: off keeps the layouts as written.
  bool channels_last = true;
  // PrepareOptions::fuse_ops: off runs each op as written.
  bool fuse_ops = true;
  // PrepareOptions::activation_layout: "auto", "nhwc", "nchw8c" or
  // "nchw16c".
  std::string layout = "auto";
  // RunOptions::plan_memory: off allocates each temporary on its own.
  bool plan_memory = true;
  // Where to write the runs' trace (RunOptions::trace), "" for nowhere.
  std::string trace;
  // RunOptions::check_numerics.
  bool check_numerics = false;
};

// Runs the startup net (if any) once in a root scope, then the net `repeat`
// times; prints each fetch, the latency (median and p90) and, with
// `profile`, the time per op type.
absl::Status RunCommand(const RunCommandOptions& options);

struct TrainCommandOptions {
  std::string main;
  std::string startup;
  // A CSV file (optionally gzip-compressed) of features then a label per
  // line, or "digits" for the 8x8 digits python3-sklearn installs.
  std::string data;
  // Multiplies every feature; 0: 1/16 for the digits, else 1.
  float feature_scale = 0;
  // The tail of the data held out for evaluation.
  double test_fraction = 0.2;
  // "shuffled": a fixed split in an order shuffled by split_seed; "tail":
  // the last test_fraction of the file as it is.
  std::string split = "shuffled";
  uint64_t split_seed = 0;
  bool resume = false;
  std::string checkpoint_dir;
  // Where to save the trained parameters at the end ("" for nowhere).
  std::string save_params;
  TrainerOptions trainer;
  // Data-parallel training: the batch split over this many replicas, each
  // on its own thread (1: the plain Trainer).
  int replicas = 1;
  // Or one replica per place of this comma-separated list (ParsePlaces):
  // CUDA devices, NCCL summing their gradients ("" for --replicas).
  std::string places;
  // The size of the gradient buckets summed while the backward pass runs
  // (DataParallelTrainer).
  int64_t bucket_bytes = kDefaultBucketBytes;
  // "mpi": one data-parallel process of those mpirun started ("" for one
  // process).
  std::string distributed;
  // Where to write the trace of every step's ops (RunOptions::trace), ""
  // for nowhere.
  std::string trace;
  // RunOptions::check_numerics.
  bool check_numerics = false;
};

// Trains: the startup net once (or the newest checkpoint with `resume`),
// then the epochs with a progress bar, an evaluation and a checkpoint after
// each.
absl::Status TrainCommand(const TrainCommandOptions& options);

// Prepares the net's main block and prints every variable's inferred dtype
// and shape, or every problem found.
absl::Status CheckCommand(const std::string& net_path,
                          const std::string& place);

// Prints block 0 of the net as a Graphviz graph: ops as boxes, variables
// as ellipses (parameters shaded), edges labelled with slot names.
absl::Status DotCommand(const std::string& net_path);

// Prints the net's blocks, variables and ops as written; for a parameter
// file, its tensors (ParamsInfoCommand).
absl::Status InfoCommand(const std::string& net_path);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_COMMANDS_H_
