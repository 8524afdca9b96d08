// The scopeflow command: a thin layer over the library.
//
//   scopeflow run NET [--startup NET] [--params FILE] [--save_params FILE]
//                 [--feed name=FILE.npy,...]
//                 [--fetch name,...] [--repeat N] [--profile] [--place P]
//                 [--output_dir DIR] [--nochannels_last] [--nofuse_ops]
//                 [--layout auto|nhwc|nchw8c|nchw16c] [--noplan_memory]
//   scopeflow check NET    validate and print each variable's inferred
//                          shape and dtype
//   scopeflow dot NET      print the main block as a Graphviz graph
//   scopeflow info NET     print the blocks, variables and ops as written
//   scopeflow train --startup NET --main NET --data DATASET [--epochs N]
//                   [--batch B] [--checkpoint_dir D] [--resume] ...
//   scopeflow import-onnx MODEL.onnx -o NET.pb [--params FILE]
//                          convert an ONNX model into a net and parameters
//   scopeflow serve MODEL_DIR [--port P] [--threads N] [--host H]
//                   [--grpc_port P]
//   scopeflow serve --model_config_file=FILE | --model_repository=ROOT
//                          serve models over HTTP and gRPC
//                          (docs/SERVING.md)
//   scopeflow plan NET [--startup NET] [--params FILE] [--batch=N]
//                  [--device_memory_budget=BYTES]
//                  [--offload_policy=on_demand|planned]
//                          print the memory plan without running the net
//
// Flags may be written with dashes or underscores (--checkpoint-dir).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "platform/cpu_allocator.h"
#include "platform/host_memory.h"
#include "platform/logging.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/import_onnx_command.h"
#include "tools/ops_command.h"
#include "tools/params_command.h"
#include "tools/plan_command.h"
#include "tools/serve_command.h"

ABSL_FLAG(std::string, startup, "",
          "run, train: a startup net run once first, to fill the parameters");
ABSL_FLAG(std::string, params, "",
          "run: a parameter file loaded after the startup net; import-onnx: "
          "where to write the model's parameters");
ABSL_FLAG(std::string, output, "",
          "import-onnx: where to write the net (.pbtxt: text, else binary); "
          "-o for short");
ABSL_FLAG(std::string, save_params, "",
          "run, train: save the parameters to this file at the end");
ABSL_FLAG(std::vector<std::string>, feed, {},
          "run: inputs as name=FILE.npy, comma-separated");
ABSL_FLAG(std::vector<std::string>, fetch, {},
          "run: variables to fetch (default: those no op reads)");
ABSL_FLAG(int, repeat, 1,
          "run: how many timed runs (after one warm-up run when above 1)");
ABSL_FLAG(bool, profile, false,
          "run: print the time per op type and the slowest ops");
ABSL_FLAG(bool, channels_last, true,
          "run: keep convolutions' activations in a faster layout and fuse "
          "their relus on the CPU (false: keep the layouts as written)");
ABSL_FLAG(bool, fuse_ops, true,
          "run: fuse matmul + add of a bias + relu into one fc op, and x * "
          "sigmoid(x) into silu (false: run each op as written); "
          "import-onnx: import GELU and layer norm written as chains of "
          "nodes as one op and fold ops computing constants (false: node "
          "by node)");
ABSL_FLAG(bool, huge_pages, true,
          "place host blocks of 2 MiB or more (weights, large activations) "
          "on transparent huge pages (false: small pages only)");
ABSL_FLAG(std::string, layout, "auto",
          "run: that layout: nhwc, nchw8c or nchw16c (channel blocks of 8 "
          "or 16), or auto (the one this CPU's convolutions run fastest on)");
ABSL_FLAG(std::string, place, "cpu", "where to run: cpu or cuda:N");
ABSL_FLAG(std::string, output_dir, "",
          "run: also write each fetched tensor to DIR/NAME.npy");
ABSL_FLAG(std::string, main, "", "train: the forward net, with a loss");
ABSL_FLAG(std::string, data, "",
          "train: CSV file (may be .gz) of features then label per line, or "
          "'digits' for the 8x8 digits of python3-sklearn");
ABSL_FLAG(double, test_fraction, 0.2,
          "train: the tail of the data held out for evaluation");
ABSL_FLAG(std::string, split, "shuffled",
          "train: shuffled (a fixed split in an order shuffled by "
          "--split_seed) or tail (the last --test_fraction of the file)");
ABSL_FLAG(uint64_t, split_seed, 0, "train: seeds the shuffled split");
ABSL_FLAG(double, feature_scale, 0,
          "train: multiplies every feature (0: 1/16 for digits, else 1)");
ABSL_FLAG(int64_t, epochs, 10, "train: epochs to train");
ABSL_FLAG(int64_t, batch, 64,
          "train: examples per step; plan (where given): the size of the "
          "unknown dimensions of the net's inputs");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "train: save a checkpoint here after every epoch");
ABSL_FLAG(bool, resume, false,
          "train: continue from the newest checkpoint of --checkpoint_dir");
ABSL_FLAG(bool, reset_optimizer_state, false,
          "train: with --resume, keep the checkpoint's parameters and step "
          "but start the optimizer's state afresh (to change --optimizer)");
ABSL_FLAG(bool, allow_unused_params, false,
          "run, serve: accept parameter files holding names the net does "
          "not use (by default an error naming them)");
ABSL_FLAG(std::string, loss, "loss", "train: the variable to minimise");
ABSL_FLAG(std::string, accuracy, "accuracy",
          "train: the accuracy variable ('' for none)");
ABSL_FLAG(std::string, features_feed, "image",
          "train: the net's input for the features");
ABSL_FLAG(std::string, labels_feed, "label",
          "train: the net's input for the labels");
ABSL_FLAG(std::string, optimizer, "adam", "train: sgd, momentum or adam");
ABSL_FLAG(double, learning_rate, 0.001, "train: the base learning rate");
ABSL_FLAG(double, momentum, 0.9, "train: momentum's coefficient");
ABSL_FLAG(bool, nesterov, false, "train: Nesterov momentum");
ABSL_FLAG(double, weight_decay, 0,
          "train: decoupled for adam, L2 for sgd and momentum");
ABSL_FLAG(double, clip_norm, 0,
          "train: clip gradients to this global norm (0: no clipping)");
ABSL_FLAG(std::string, lr_policy, "constant",
          "train: constant, step, exponential or cosine");
ABSL_FLAG(int64_t, lr_step_size, 1000, "train: steps per decay (step)");
ABSL_FLAG(double, lr_gamma, 0.1, "train: decay factor (step, exponential)");
ABSL_FLAG(int64_t, warmup_steps, 0, "train: linear warm-up steps");
ABSL_FLAG(int64_t, seed, 1, "train: seeds the order of the examples");
ABSL_FLAG(int, replicas, 1,
          "train: split each batch over this many replicas on threads");
ABSL_FLAG(std::string, places, "",
          "train: one data-parallel replica per place, comma-separated: "
          "cuda:0,cuda:1 (one per device) or cuda:0,cuda:0 (two on one)");
ABSL_FLAG(double, bucket_mb, 25,
          "train: data-parallel gradient buckets of this many MiB, each summed "
          "as soon as the backward pass has produced it");
ABSL_FLAG(std::string, distributed, "",
          "train: mpi (one process of those mpirun starts) or '' for one");
ABSL_FLAG(std::string, host, "127.0.0.1",
          "serve: the address to listen on (0.0.0.0: every interface)");
ABSL_FLAG(int, port, 8500, "serve: the port to listen on (0: any free one)");
ABSL_FLAG(int, threads, 0, "serve: requests handled at once (0: one per core)");
ABSL_FLAG(int, keep_alive_requests, 100,
          "serve: requests per keep-alive connection before it is closed");
ABSL_FLAG(double, poll_seconds, 1,
          "serve: how often MODEL_DIR is checked for a new version");
ABSL_FLAG(bool, plan_memory, true,
          "run: place the temporaries whose shapes are known in one arena "
          "per run (false: allocate each on its own)");
ABSL_FLAG(uint64_t, device_memory_budget, 0,
          "plan: the most bytes of variables kept on the device (0: no "
          "budget)");
ABSL_FLAG(std::string, offload_policy, "planned",
          "plan: on_demand (each op's variables in before it, out after) or "
          "planned (evict the furthest next use, prefetch)");
ABSL_FLAG(int64_t, max_body_bytes, int64_t{64} << 20,
          "serve: larger request bodies are refused (413)");
ABSL_FLAG(std::string, trace, "",
          "run, train: write each op's time, inputs' shapes and kernel time "
          "as Chrome trace JSON to this file (chrome://tracing, "
          "ui.perfetto.dev)");
ABSL_FLAG(bool, check_numerics, false,
          "run, train: stop at the first op writing a NaN or an infinity, "
          "naming the op, the variable and the element");
ABSL_FLAG(bool, markdown, false, "ops: every op in full, as Markdown");
ABSL_FLAG(bool, to_npz, false, "params: convert IN.params to OUT.npz");
ABSL_FLAG(bool, from_npz, false, "params: convert IN.npz to OUT.params");
ABSL_FLAG(int, v, -1,
          "how much to log on stderr: 0 errors, 1 and warnings, 2 and "
          "progress (the default), 3 and more detail; -1: the "
          "SCOPEFLOW_LOG_LEVEL environment variable's, or 2");
ABSL_FLAG(int, grpc_port, -1,
          "serve: the port of the gRPC services (-1: none, 0: any free one)");
ABSL_FLAG(std::string, model_config_file, "",
          "serve: the models of a TensorFlow Serving model config file "
          "(instead of MODEL_DIR)");
ABSL_FLAG(std::string, model_repository, "",
          "serve: every folder under this root is a model (instead of "
          "MODEL_DIR)");
ABSL_FLAG(int64_t, request_timeout_ms, 0,
          "serve: deadline of requests without X-Request-Timeout-Ms (0: none)");
ABSL_FLAG(int64_t, drain_timeout_ms, 10000,
          "serve: on SIGTERM, how long requests in flight may still run");
ABSL_FLAG(int, max_queued_requests, 256,
          "serve: requests per model waiting to run; more get 503");
ABSL_FLAG(int64_t, idle_timeout_ms, 5000,
          "serve: idle keep-alive connections are closed after this");
ABSL_FLAG(int64_t, request_read_timeout_ms, 10000,
          "serve: a request must arrive whole within this (408)");
ABSL_FLAG(int, max_batch_size, 0,
          "serve: batch predict requests up to this many rows (0: off)");
ABSL_FLAG(int64_t, batch_timeout_micros, 1000,
          "serve: how long a batch waits for more requests");
ABSL_FLAG(int, batch_threads, 1, "serve: batches run at once");
ABSL_FLAG(std::string, ssl_cert, "",
          "serve: PEM certificate chain; with --ssl_key, serve HTTPS only");
ABSL_FLAG(std::string, ssl_key, "", "serve: PEM private key of --ssl_cert");

namespace {

// Abseil flags are identifiers; accept the dashed spelling users type too,
// and -o for --output.
std::vector<std::string> UnderscoreFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& arg : args) {
    if (arg == "-o") arg = "--output";
    if (arg.compare(0, 3, "-o=") == 0) arg = "--output" + arg.substr(2);
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const size_t end = std::min(arg.find('='), arg.size());
    for (size_t i = 2; i < end; ++i) {
      if (arg[i] == '-') arg[i] = '_';
    }
  }
  return args;
}

scopeflow::TrainCommandOptions TrainOptionsFromFlags() {
  scopeflow::TrainCommandOptions options;
  options.main = absl::GetFlag(FLAGS_main);
  options.startup = absl::GetFlag(FLAGS_startup);
  options.data = absl::GetFlag(FLAGS_data);
  options.feature_scale =
      static_cast<float>(absl::GetFlag(FLAGS_feature_scale));
  options.test_fraction = absl::GetFlag(FLAGS_test_fraction);
  options.split = absl::GetFlag(FLAGS_split);
  options.split_seed = absl::GetFlag(FLAGS_split_seed);
  options.resume = absl::GetFlag(FLAGS_resume);
  options.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  options.trainer.reset_optimizer_state =
      absl::GetFlag(FLAGS_reset_optimizer_state);
  options.save_params = absl::GetFlag(FLAGS_save_params);
  options.replicas = absl::GetFlag(FLAGS_replicas);
  options.distributed = absl::GetFlag(FLAGS_distributed);
  options.places = absl::GetFlag(FLAGS_places);
  options.bucket_bytes =
      static_cast<int64_t>(absl::GetFlag(FLAGS_bucket_mb) * (1 << 20));
  scopeflow::TrainerOptions& trainer = options.trainer;
  trainer.loss = absl::GetFlag(FLAGS_loss);
  trainer.accuracy = absl::GetFlag(FLAGS_accuracy);
  trainer.features_feed = absl::GetFlag(FLAGS_features_feed);
  trainer.labels_feed = absl::GetFlag(FLAGS_labels_feed);
  trainer.batch_size = absl::GetFlag(FLAGS_batch);
  trainer.epochs = absl::GetFlag(FLAGS_epochs);
  trainer.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  trainer.checkpoint_dir = options.checkpoint_dir;
  scopeflow::OptimizerConfig& optimizer = trainer.optimizer;
  optimizer.type = absl::GetFlag(FLAGS_optimizer);
  optimizer.learning_rate =
      static_cast<float>(absl::GetFlag(FLAGS_learning_rate));
  optimizer.momentum = static_cast<float>(absl::GetFlag(FLAGS_momentum));
  optimizer.nesterov = absl::GetFlag(FLAGS_nesterov);
  optimizer.weight_decay =
      static_cast<float>(absl::GetFlag(FLAGS_weight_decay));
  optimizer.clip_norm = static_cast<float>(absl::GetFlag(FLAGS_clip_norm));
  optimizer.lr_policy = absl::GetFlag(FLAGS_lr_policy);
  optimizer.lr_step_size = absl::GetFlag(FLAGS_lr_step_size);
  optimizer.lr_gamma = static_cast<float>(absl::GetFlag(FLAGS_lr_gamma));
  optimizer.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  options.trace = absl::GetFlag(FLAGS_trace);
  options.check_numerics = absl::GetFlag(FLAGS_check_numerics);
  return options;
}

constexpr char kUsage[] =
    "scopeflow COMMAND NET [flags]\n"
    "  run NET     run a net: --startup NET --params FILE --save_params FILE\n"
    "              --feed name=FILE.npy,... --fetch name,...\n"
    "              --repeat N --profile --place cpu|cuda:N --output_dir DIR\n"
    "              --nochannels_last --layout auto|nhwc|nchw8c|nchw16c\n"
    "              --nofuse_ops --noplan_memory --allow_unused_params\n"
    "  check NET   validate NET and print each variable's inferred shape and "
    "dtype\n"
    "  dot NET     print NET's main block as a Graphviz graph\n"
    "  info NET    print the blocks, variables and ops of NET as written\n"
    "  train       train: --startup NET --main NET --data FILE|digits\n"
    "              --epochs N --batch B --checkpoint_dir D --resume\n"
    "              --reset_optimizer_state\n"
    "              --optimizer sgd|momentum|adam --learning_rate X ...\n"
    "              --place cpu|cuda:N --replicas N --distributed mpi\n"
    "              --places cuda:0,cuda:1 --bucket_mb M\n"
    "  import-onnx MODEL.onnx -o NET.pb --params FILE\n"
    "              convert an ONNX model (opsets 7 to 27, external data\n"
    "              read beside it) into a net and a parameter file\n"
    "  serve MODEL_DIR  serve MODEL_DIR/VERSION/{model.pb|model.pbtxt,params}\n"
    "              over HTTP: --port P --threads N --host H --poll_seconds S\n"
    "              --max_body_bytes B --keep_alive_requests K --place P\n"
    "              --grpc_port P; or serve --model_config_file FILE or\n"
    "              --model_repository ROOT for several models\n"
    "  plan NET    print NET's memory plan without running it: --startup NET\n"
    "              --params FILE --batch N --device_memory_budget BYTES\n"
    "              --offload_policy on_demand|planned\n"
    "  every command: --nohuge_pages keeps host blocks on small pages\n";

int Fail(const absl::Status& status) {
  SF_LOG(kLogError, "%s", status.message());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  scopeflow::KeepFreedHostMemoryForReuse();
  std::vector<std::string> args = UnderscoreFlagNames(argc, argv);
  if (std::optional<int> exit_status = scopeflow::HandleHelpAndVersion(args)) {
    return *exit_status;
  }
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  std::vector<char*> positional = absl::ParseCommandLine(
      static_cast<int>(arg_pointers.size()), arg_pointers.data());
  scopeflow::SetHugePagesForLargeHostBlocks(absl::GetFlag(FLAGS_huge_pages));
  if (absl::GetFlag(FLAGS_v) >= 0) {
    scopeflow::SetLogLevel(absl::GetFlag(FLAGS_v));
  } else {
    scopeflow::LogLevelThreshold();  // reports a bad SCOPEFLOW_LOG_LEVEL
  }
  // HandleHelpAndVersion saw a command; Abseil may have read it as the
  // value of a flag before it.
  if (positional.size() < 2 ||
      scopeflow::FindCommand(positional[1]) == nullptr) {
    std::fputs("scopeflow: write the command first (scopeflow --help)\n",
               stderr);
    return 2;
  }
  scopeflow::WarnAboutOtherCommandsFlags(positional[1]);
  // ops takes an optional NAME, params IN and OUT.
  if (std::string(positional[1]) == "ops" && positional.size() <= 3) {
    scopeflow::OpsCommandOptions options;
    if (positional.size() == 3) options.name = positional[2];
    options.markdown = absl::GetFlag(FLAGS_markdown);
    const absl::Status status = scopeflow::OpsCommand(options);
    return status.ok() ? 0 : Fail(status);
  }
  if (std::string(positional[1]) == "params") {
    if (positional.size() != 4) {
      std::fputs(scopeflow::HelpText(scopeflow::FindCommand("params")).c_str(),
                 stderr);
      return 2;
    }
    const absl::Status status = scopeflow::ParamsCommand(
        absl::GetFlag(FLAGS_to_npz), absl::GetFlag(FLAGS_from_npz),
        positional[2], positional[3]);
    return status.ok() ? 0 : Fail(status);
  }
  // serve names its models by flag or by MODEL_DIR.
  const bool train_or_serve =
      positional.size() == 2 && (std::string(positional[1]) == "train" ||
                                 std::string(positional[1]) == "serve");
  const bool train = train_or_serve && std::string(positional[1]) == "train";
  if (positional.size() != 3 && !train_or_serve) {
    std::fprintf(
        stderr, "scopeflow %s: expected %s\n\n%s", positional[1],
        scopeflow::FindCommand(positional[1])->arguments,
        scopeflow::HelpText(scopeflow::FindCommand(positional[1])).c_str());
    return 2;
  }
  const std::string command = positional[1];
  const std::string net = positional.size() == 3 ? positional[2] : "";
  absl::Status status;
  if (train) {
    scopeflow::TrainCommandOptions options = TrainOptionsFromFlags();
    absl::StatusOr<scopeflow::Place> place =
        scopeflow::ParsePlace(absl::GetFlag(FLAGS_place));
    if (!place.ok()) return Fail(place.status());
    options.trainer.place = *place;
    status = scopeflow::TrainCommand(options);
  } else if (command == "run") {
    scopeflow::RunCommandOptions options;
    options.net = net;
    options.startup = absl::GetFlag(FLAGS_startup);
    options.params = absl::GetFlag(FLAGS_params);
    options.save_params = absl::GetFlag(FLAGS_save_params);
    options.feeds = absl::GetFlag(FLAGS_feed);
    options.fetches = absl::GetFlag(FLAGS_fetch);
    options.repeat = absl::GetFlag(FLAGS_repeat);
    options.profile = absl::GetFlag(FLAGS_profile);
    options.channels_last = absl::GetFlag(FLAGS_channels_last);
    options.fuse_ops = absl::GetFlag(FLAGS_fuse_ops);
    options.layout = absl::GetFlag(FLAGS_layout);
    options.place = absl::GetFlag(FLAGS_place);
    options.output_dir = absl::GetFlag(FLAGS_output_dir);
    options.plan_memory = absl::GetFlag(FLAGS_plan_memory);
    options.trace = absl::GetFlag(FLAGS_trace);
    options.check_numerics = absl::GetFlag(FLAGS_check_numerics);
    options.allow_unused_params = absl::GetFlag(FLAGS_allow_unused_params);
    status = scopeflow::RunCommand(options);
  } else if (command == "check") {
    status = scopeflow::CheckCommand(net, absl::GetFlag(FLAGS_place));
  } else if (command == "dot") {
    status = scopeflow::DotCommand(net);
  } else if (command == "info") {
    status = scopeflow::InfoCommand(net);
  } else if (command == "import-onnx") {
    if (absl::GetFlag(FLAGS_output).empty()) {
      std::fputs("scopeflow import-onnx: -o NET.pb is required\n", stderr);
      return 2;
    }
    status = scopeflow::ImportOnnxCommand(net, absl::GetFlag(FLAGS_output),
                                          absl::GetFlag(FLAGS_params),
                                          absl::GetFlag(FLAGS_fuse_ops));
  } else if (command == "plan") {
    scopeflow::PlanCommandOptions options;
    options.net = net;
    options.startup = absl::GetFlag(FLAGS_startup);
    options.params = absl::GetFlag(FLAGS_params);
    // --batch's default is train's: plan uses it only where it is given.
    for (const std::string& arg : args) {
      if (arg.compare(0, 7, "--batch") == 0) {
        options.batch = absl::GetFlag(FLAGS_batch);
      }
    }
    options.device_memory_budget = absl::GetFlag(FLAGS_device_memory_budget);
    options.offload_policy = absl::GetFlag(FLAGS_offload_policy);
    options.place = absl::GetFlag(FLAGS_place);
    status = scopeflow::PlanCommand(options);
  } else if (command == "serve") {
    scopeflow::ServeCommandOptions options;
    options.model_dir = net;
    options.host = absl::GetFlag(FLAGS_host);
    options.port = absl::GetFlag(FLAGS_port);
    options.threads = absl::GetFlag(FLAGS_threads);
    options.keep_alive_requests = absl::GetFlag(FLAGS_keep_alive_requests);
    options.poll_seconds = absl::GetFlag(FLAGS_poll_seconds);
    options.max_body_bytes = absl::GetFlag(FLAGS_max_body_bytes);
    options.request_timeout_ms = absl::GetFlag(FLAGS_request_timeout_ms);
    options.drain_timeout_ms = absl::GetFlag(FLAGS_drain_timeout_ms);
    options.max_queued_requests = absl::GetFlag(FLAGS_max_queued_requests);
    options.idle_timeout_ms = absl::GetFlag(FLAGS_idle_timeout_ms);
    options.request_read_timeout_ms =
        absl::GetFlag(FLAGS_request_read_timeout_ms);
    options.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
    options.batch_timeout_micros = absl::GetFlag(FLAGS_batch_timeout_micros);
    options.batch_threads = absl::GetFlag(FLAGS_batch_threads);
    options.ssl_cert = absl::GetFlag(FLAGS_ssl_cert);
    options.ssl_key = absl::GetFlag(FLAGS_ssl_key);
    options.place = absl::GetFlag(FLAGS_place);
    options.allow_unused_params = absl::GetFlag(FLAGS_allow_unused_params);
    options.grpc_port = absl::GetFlag(FLAGS_grpc_port);
    options.model_config_file = absl::GetFlag(FLAGS_model_config_file);
    options.model_repository = absl::GetFlag(FLAGS_model_repository);
    status = scopeflow::ServeCommand(options);
  } else {
    std::fprintf(stderr, "scopeflow: command \"%s\" is not wired up\n",
                 command.c_str());
    return 2;
  }
  return status.ok() ? 0 : Fail(status);
}
