// The scopeflow command: a thin layer over the library.
//
//   scopeflow run NET [--startup NET] [--params FILE] [--save_params FILE]
//                 [--feed name=FILE.npy,...]
//                 [--fetch name,...] [--repeat N] [--profile] [--place P]
//                 [--output_dir DIR]
//   scopeflow check NET    validate and print each variable's inferred
//                          shape and dtype
//   scopeflow dot NET      print the main block as a Graphviz graph
//   scopeflow info NET     print the blocks, variables and ops as written
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "platform/host_memory.h"
#include "tools/commands.h"

ABSL_FLAG(std::string, startup, "",
          "run: a startup net run once first, to fill the parameters");
ABSL_FLAG(std::string, params, "",
          "run: a parameter file loaded after the startup net");
ABSL_FLAG(std::string, save_params, "",
          "run: save the parameters to this file after running");
ABSL_FLAG(std::vector<std::string>, feed, {},
          "run: inputs as name=FILE.npy, comma-separated");
ABSL_FLAG(std::vector<std::string>, fetch, {},
          "run: variables to fetch (default: those no op reads)");
ABSL_FLAG(int, repeat, 1,
          "run: how many timed runs (after one warm-up run when above 1)");
ABSL_FLAG(bool, profile, false, "run: print the time per op type");
ABSL_FLAG(std::string, place, "cpu", "where to run: cpu or cuda:N");
ABSL_FLAG(std::string, output_dir, "",
          "run: also write each fetched tensor to DIR/NAME.npy");

namespace {

constexpr char kUsage[] =
    "scopeflow COMMAND NET [flags]\n"
    "  run NET     run a net: --startup NET --params FILE --save_params FILE\n"
    "              --feed name=FILE.npy,... --fetch name,...\n"
    "              --repeat N --profile --place cpu|cuda:N --output_dir DIR\n"
    "  check NET   validate NET and print each variable's inferred shape and "
    "dtype\n"
    "  dot NET     print NET's main block as a Graphviz graph\n"
    "  info NET    print the blocks, variables and ops of NET as written\n";

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "scopeflow: %s\n",
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  scopeflow::KeepFreedHostMemoryForReuse();
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() != 3) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = positional[1];
  const std::string net = positional[2];
  absl::Status status;
  if (command == "run") {
    scopeflow::RunCommandOptions options;
    options.net = net;
    options.startup = absl::GetFlag(FLAGS_startup);
    options.params = absl::GetFlag(FLAGS_params);
    options.save_params = absl::GetFlag(FLAGS_save_params);
    options.feeds = absl::GetFlag(FLAGS_feed);
    options.fetches = absl::GetFlag(FLAGS_fetch);
    options.repeat = absl::GetFlag(FLAGS_repeat);
    options.profile = absl::GetFlag(FLAGS_profile);
    options.place = absl::GetFlag(FLAGS_place);
    options.output_dir = absl::GetFlag(FLAGS_output_dir);
    status = scopeflow::RunCommand(options);
  } else if (command == "check") {
    status = scopeflow::CheckCommand(net, absl::GetFlag(FLAGS_place));
  } else if (command == "dot") {
    status = scopeflow::DotCommand(net);
  } else if (command == "info") {
    status = scopeflow::InfoCommand(net);
  } else {
    std::fputs(kUsage, stderr);
    return 2;
  }
  return status.ok() ? 0 : Fail(status);
}
