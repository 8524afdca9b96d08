// Leveled logging to stderr: the one place where scopeflow's libraries and
// tools say what they are doing, warn, or report an error that does not
// travel back as an absl::Status.
//
//   SF_LOG(kInfo, "now serving %s", name);
//
// A message is written when its level is at most the threshold: 0 errors,
// 1 warnings, 2 information (the default), 3 and above ever more detail.
// The threshold comes from SetLogLevel (the command's --v=N) or else from
// the SCOPEFLOW_LOG_LEVEL environment variable (a number or error, warning,
// info, debug). Thread-safe: messages are written whole, one at a time.
#ifndef SCOPEFLOW_PLATFORM_LOGGING_H_
#define SCOPEFLOW_PLATFORM_LOGGING_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace scopeflow {

enum LogLevel : int {
  kLogError = 0,
  kLogWarning = 1,
  kLogInfo = 2,
  kLogDebug = 3,
};

// The current threshold (SCOPEFLOW_LOG_LEVEL's value, read once, until
// SetLogLevel is called; kLogInfo when it is unset).
int LogLevelThreshold();
void SetLogLevel(int level);

// "2", "info", "warning", "error", "debug" (any case) as a level; an
// InvalidArgument error saying what is accepted otherwise.
absl::StatusOr<int> ParseLogLevel(absl::string_view text);

inline bool LogEnabled(int level) { return level <= LogLevelThreshold(); }

// Writes `message` at `level` to the sink (stderr unless replaced): errors
// as "scopeflow: error: MESSAGE", warnings as "scopeflow: warning: MESSAGE",
// the others as the message itself; a newline is added unless the message
// ends in one or in a carriage return (a progress line redrawn in place).
void WriteLog(int level, absl::string_view message);

// Where messages go: a function given the level and the formatted line
// (newline included), or null for stderr. For tests; not to be called while
// other threads log.
using LogSink = std::function<void(int level, const std::string& line)>;
void SetLogSink(LogSink sink);

}  // namespace scopeflow

// Formats and writes a message at `level` when the threshold admits it; the
// arguments are not evaluated otherwise.
#define SF_LOG(level, ...)                                   \
  do {                                                       \
    if (::scopeflow::LogEnabled(::scopeflow::level)) {       \
      ::scopeflow::WriteLog(::scopeflow::level,              \
                            ::absl::StrFormat(__VA_ARGS__)); \
    }                                                        \
  } while (false)

#endif  // SCOPEFLOW_PLATFORM_LOGGING_H_
