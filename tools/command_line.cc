#include "tools/command_line.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneapi/dnnl/dnnl.h"
#include "platform/cuda_runtime.h"
#include "platform/logging.h"
#include "tools/version.h"

namespace scopeflow {
namespace {

// Flags every command reads.
const std::vector<const char*>& CommonFlags() {
  static const auto* const flags =
      new std::vector<const char*>{"huge_pages", "v"};
  return *flags;
}

bool Contains(const std::vector<const char*>& names, absl::string_view name) {
  return std::any_of(names.begin(), names.end(),
                     [name](const char* n) { return name == n; });
}

// Whether `flag` is one of the scopeflow command's own (not one Abseil
// defines for every program, like --flagfile).
bool IsScopeflowFlag(const absl::CommandLineFlag& flag) {
  return absl::StrContains(flag.Filename(), "tools/");
}

std::string FlagLines(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    absl::StrAppend(
        &out, "  --", name, "  ", flag->Help(), " (default: ",
        flag->DefaultValue().empty() ? "\"\"" : flag->DefaultValue(), ")\n");
  }
  return out;
}

std::string CommandNames() {
  std::vector<std::string> names;
  for (const CommandHelp& command : Commands()) names.push_back(command.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

const std::vector<CommandHelp>& Commands() {
  static const auto* const commands = new std::vector<CommandHelp>{
      {"run",
       "NET [flags]",
       "run a net: its startup net or parameters, feeds from .npy files, "
       "fetches printed and written",
       {"startup", "params", "save_params", "feed", "fetch", "repeat",
        "profile", "place", "output_dir", "channels_last", "fuse_ops", "layout",
        "plan_memory", "trace", "check_numerics", "allow_unused_params"}},
      {"check",
       "NET [flags]",
       "validate a net and print each variable's inferred dtype and shape",
       {"place"}},
      {"dot", "NET", "print a net's main block as a Graphviz graph", {}},
      {"info",
       "NET|FILE.params",
       "print a net's blocks, variables and ops as written, or a parameter "
       "file's tensors with their checksums",
       {}},
      {"train",
       "[flags]",
       "train a net on a CSV data set or the digits, with checkpoints",
       {"startup",       "main",           "data",          "epochs",
        "batch",         "checkpoint_dir", "resume",        "save_params",
        "place",         "optimizer",      "learning_rate", "momentum",
        "nesterov",      "weight_decay",   "clip_norm",     "lr_policy",
        "lr_step_size",  "lr_gamma",       "warmup_steps",  "seed",
        "loss",          "accuracy",       "features_feed", "labels_feed",
        "test_fraction", "split",          "split_seed",    "feature_scale",
        "replicas",      "distributed",    "trace",         "check_numerics",
        "reset_optimizer_state", "bucket_mb",     "places"}},
      {"import-onnx",
       "MODEL.onnx -o NET.pb [flags]",
       "convert an ONNX model (opsets 7 to 27) into a net and parameters",
       {"output", "params", "fuse_ops"}},
      {"serve",
       "MODEL_DIR [flags]",
       "serve MODEL_DIR/VERSION/{model.pb|model.pbtxt,params} over HTTP "
       "(docs/SERVING.md)",
       {"host", "port", "threads", "keep_alive_requests", "poll_seconds",
        "max_body_bytes", "place", "allow_unused_params", "grpc_port",
        "model_config_file", "model_repository", "request_timeout_ms",
        "drain_timeout_ms", "max_queued_requests", "idle_timeout_ms",
        "request_read_timeout_ms", "max_batch_size", "batch_timeout_micros",
        "batch_threads", "ssl_cert", "ssl_key"}},
      {"plan",
       "NET [flags]",
       "print a net's memory plan without running it",
       {"startup", "params", "batch", "device_memory_budget", "offload_policy",
        "place"}},
      {"ops",
       "[NAME] [flags]",
       "the registered ops: one line each, NAME in full, or all as Markdown "
       "(docs/OPS.md)",
       {"markdown"}},
      {"params",
       "--to_npz IN.params OUT.npz | --from_npz IN.npz OUT.params",
       "convert parameter files to and from numpy's .npz",
       {"to_npz", "from_npz"}},
  };
  return *commands;
}

const CommandHelp* FindCommand(const std::string& name) {
  for (const CommandHelp& command : Commands()) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

std::string VersionText() {
  const dnnl_version_t* dnnl = dnnl_version();
  return absl::StrCat("scopeflow ", SCOPEFLOW_VERSION, " (",
                      BuiltWithCuda() ? "CPU and CUDA" : "CPU only",
                      " build, oneDNN ", dnnl->major, ".", dnnl->minor, ".",
                      dnnl->patch, ")\n");
}

std::string HelpText(const CommandHelp* command) {
  if (command != nullptr) {
    std::vector<std::string> flags(command->flags.begin(),
                                   command->flags.end());
    std::sort(flags.begin(), flags.end());
    std::vector<std::string> common(CommonFlags().begin(), CommonFlags().end());
    return absl::StrCat(
        "scopeflow ", command->name, " ", command->arguments, "\n  ",
        command->summary, "\n\nflags:\n",
        flags.empty() ? "  none of its own\n" : FlagLines(flags),
        "\nflags of every command:\n", FlagLines(common),
        "  --flagfile=FILE  read flags from FILE, one a line\n");
  }
  std::string out = "scopeflow COMMAND [arguments] [flags]\n\ncommands:\n";
  for (const CommandHelp& c : Commands()) {
    absl::StrAppend(&out, "  ", c.name, " ", c.arguments, "\n      ", c.summary,
                    "\n");
  }
  // Flags of no command's list are every command's, listed here so that a
  // new flag is never missing from the help.
  std::vector<std::string> common(CommonFlags().begin(), CommonFlags().end());
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!IsScopeflowFlag(*flag) || Contains(CommonFlags(), name)) continue;
    const bool listed = std::any_of(
        Commands().begin(), Commands().end(),
        [&](const CommandHelp& c) { return Contains(c.flags, name); });
    if (!listed) common.emplace_back(name);
  }
  std::sort(common.begin(), common.end());
  absl::StrAppend(&out, "\nflags of every command:\n", FlagLines(common),
                  "  --flagfile=FILE  read flags from FILE, one a line\n",
                  "  --help, -h  this help; scopeflow COMMAND --help: that "
                  "command's flags\n",
                  "  --version  the version and how this binary was built\n",
                  "\nFlags may be written with dashes or underscores "
                  "(--checkpoint-dir).\n");
  return out;
}

std::optional<int> HandleHelpAndVersion(const std::vector<std::string>& args) {
  std::string command;
  bool help = false;
  bool version = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h" || arg == "--help=true" ||
        arg == "-help") {
      help = true;
    } else if (arg == "--version" || arg == "--version=true") {
      version = true;
    } else if (command.empty() && !arg.empty() && arg[0] != '-') {
      command = arg;
    }
  }
  if (version) {
    std::fputs(VersionText().c_str(), stdout);
    return 0;
  }
  const CommandHelp* found = command.empty() ? nullptr : FindCommand(command);
  if (!command.empty() && found == nullptr) {
    std::fprintf(stderr,
                 "scopeflow: unknown command \"%s\" (commands: %s; "
                 "scopeflow --help for more)\n",
                 command.c_str(), CommandNames().c_str());
    return 2;
  }
  if (help) {
    std::fputs(HelpText(found).c_str(), stdout);
    return 0;
  }
  if (command.empty()) {
    std::fprintf(stderr,
                 "scopeflow: no command given (commands: %s; scopeflow "
                 "--help for more)\n",
                 CommandNames().c_str());
    return 2;
  }
  return std::nullopt;
}

void WarnAboutOtherCommandsFlags(const std::string& command) {
  const CommandHelp* found = FindCommand(command);
  if (found == nullptr) return;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    // Set to a value of its own (on the command line or in a flagfile).
    if (!IsScopeflowFlag(*flag) ||
        flag->CurrentValue() == flag->DefaultValue() ||
        Contains(found->flags, name) || Contains(CommonFlags(), name)) {
      continue;
    }
    const bool listed = std::any_of(
        Commands().begin(), Commands().end(),
        [&](const CommandHelp& c) { return Contains(c.flags, name); });
    if (!listed) continue;  // a flag of every command
    SF_LOG(kLogWarning,
           "scopeflow %s does not read --%s (scopeflow %s --help lists its "
           "flags)",
           command, name, command);
  }
}

}  // namespace scopeflow
