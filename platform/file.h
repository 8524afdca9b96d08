// Whole-file reads and atomic writes.
#ifndef SCOPEFLOW_PLATFORM_FILE_H_
#define SCOPEFLOW_PLATFORM_FILE_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopeflow {

// The whole contents of `path`; NotFound or an errno message on failure.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Writes a file in pieces so that it appears whole or not at all: bytes go
// to a temporary file beside the destination; Commit flushes them to disk,
// gives the temporary the mode and owner of the file it replaces, renames
// it over the destination and flushes the folder. The destination is
// `path`, or, when `path` is a symbolic link, the file it points to (the
// link stays a link). Destroying the writer without a successful Commit
// removes the temporary and leaves the destination untouched.
//
// Temporaries are named "NAME.tmp.PID.XXXXXX" (PID: the writer's process).
// Open removes those of the destination's folder whose process is gone
// (left by a writer killed mid-save), reports each on stderr and lists
// them in removed_stale(). Not thread-safe.
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

  // The file the writer replaces (`path` with symbolic links followed).
  const std::string& destination() const { return path_; }
  const std::string& temporary() const { return temporary_; }
  // The stale temporaries Open removed.
  const std::vector<std::string>& removed_stale() const {
    return removed_stale_;
  }

 private:
  struct Key {};

 public:
  // For Open only (the key is private).
  AtomicFileWriter(Key, std::string path, std::string temporary, int fd,
                   std::vector<std::string> removed_stale);

 private:
  const std::string path_;
  const std::string temporary_;
  int fd_;
  bool committed_ = false;
  const std::vector<std::string> removed_stale_;
};

// Replaces `path` with `contents` so that a reader (or a crash) sees either
// the old file whole or the new one whole (see AtomicFileWriter). On
// failure `path` is untouched and the temporary is removed.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

// Removes the temporaries of AtomicFileWriter in `dir` whose writing
// process no longer runs; returns their paths. Errors (an unreadable
// folder, a file that cannot be removed) leave the files in place.
std::vector<std::string> RemoveStaleTemporaries(const std::string& dir);

// The process that wrote temporary file `filename` (a name without
// folder) if it follows AtomicFileWriter's pattern, else -1.
pid_t TemporaryWriterPid(absl::string_view filename);

// `name` (a variable's, say) as one file name that stays inside the folder
// it is joined to: bytes other than ASCII letters, digits and "_-.@" become
// %XX (so "/" is %2F, "%" itself %25, NUL %00), as does a leading "." (no
// ".", ".." or hidden files); "" becomes "%". The encoding is one to one.
// A result over 200 bytes keeps its first 183 and ends in "~" and 16 hex
// digits of a hash of `name`, under the 255-byte limit of file systems.
std::string SafeFileName(absl::string_view name);

// The steps of an atomic write, in order.
enum class FileStep { kCreate, kWrite, kSync, kRename, kSyncFolder };

// Test-only fault injection: while set, every AtomicFileWriter calls
// `fault(step)` before each step and, when it returns a non-zero errno,
// fails that step as if the system call had returned that errno. nullptr
// turns it off. Production code never sets it.
using FileFaultForTesting = int (*)(FileStep step);
void SetFileFaultForTesting(FileFaultForTesting fault);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_FILE_H_
