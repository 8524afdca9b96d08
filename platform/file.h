// Whole-file reads and atomic writes.
#ifndef SCOPEFLOW_PLATFORM_FILE_H_
#define SCOPEFLOW_PLATFORM_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopeflow {

// The whole contents of `path`; NotFound or an errno message on failure.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Replaces `path` with `contents` so that a reader (or a crash) sees either
// the old file whole or the new one whole: the bytes go to a temporary file
// beside it, are flushed to disk, and the temporary is renamed over `path`.
// On failure `path` is untouched and the temporary is removed.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_FILE_H_
