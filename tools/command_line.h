// The scopeflow command's conventions, apart from what each command does:
// --help and -h (exit 0) for the whole command or one command, --version,
// unknown commands named, and the flags each command takes.
#ifndef SCOPEFLOW_TOOLS_COMMAND_LINE_H_
#define SCOPEFLOW_TOOLS_COMMAND_LINE_H_

#include <optional>
#include <string>
#include <vector>

namespace scopeflow {

struct CommandHelp {
  const char* name;
  // What follows the name: "NET [flags]".
  const char* arguments;
  // One line on what it does.
  const char* summary;
  // The flags it reads (without "--"); their help texts and defaults come
  // from the flags themselves.
  std::vector<const char*> flags;
};

// Every command, in the order the help lists them.
const std::vector<CommandHelp>& Commands();
const CommandHelp* FindCommand(const std::string& name);

// "scopeflow 0.9.0 (CPU only build, oneDNN 3.0.0)": the VERSION file's
// version and how this binary was built.
std::string VersionText();

// The help of one command (its flags only), or of the whole command with
// `command` null.
std::string HelpText(const CommandHelp* command);

// Handles what comes before a command runs, given the arguments with
// flags' dashes already made underscores: --help or -h anywhere prints the
// help of the command named (or of all) to stdout; --version prints
// VersionText(); no command or an unknown one is an error naming it, with
// the list of commands. Returns the exit status when the program should
// end here, none when the command should run.
std::optional<int> HandleHelpAndVersion(const std::vector<std::string>& args);

// After flag parsing: warns (at warning level) about each flag set to
// another value than its default that `command` does not read.
void WarnAboutOtherCommandsFlags(const std::string& command);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_COMMAND_LINE_H_
