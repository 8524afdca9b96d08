// Whole-file reads and atomic writes.
#ifndef SCOPEFLOW_PLATFORM_FILE_H_
#define SCOPEFLOW_PLATFORM_FILE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopeflow {

// The whole contents of `path`; NotFound or an errno message on failure.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Writes a file in pieces so that it appears whole or not at all: bytes go
// to a temporary file beside `path`; Commit flushes them to disk and renames
// the temporary over `path`. Destroying the writer without a successful
// Commit removes the temporary and leaves `path` untouched. Not
// thread-safe.
class AtomicFileWriter {
 public:
  // Creates the temporary file.
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Open(
      const std::string& path);
  ~AtomicFileWriter();

  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status Append(absl::string_view bytes);
  absl::Status Commit();

 private:
  struct Key {};

 public:
  // For Open only (the key is private).
  AtomicFileWriter(Key, std::string path, std::string temporary, int fd);

 private:
  const std::string path_;
  const std::string temporary_;
  int fd_;
  bool committed_ = false;
};

// Replaces `path` with `contents` so that a reader (or a crash) sees either
// the old file whole or the new one whole: the bytes go to a temporary file
// beside it, are flushed to disk, and the temporary is renamed over `path`.
// On failure `path` is untouched and the temporary is removed.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_FILE_H_
