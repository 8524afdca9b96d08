#include "platform/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scopeflow {
namespace {

absl::Status ErrnoError(int error, absl::string_view what,
                        const std::string& path) {
  const std::string message =
      absl::StrFormat("%s %s: %s", what, path, std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) {
    return absl::PermissionDeniedError(message);
  }
  return absl::UnknownError(message);
}

// Closes the descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  // Closes now and reports the result (close can report a failed write).
  int Close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

absl::Status WriteAll(int fd, absl::string_view contents,
                      const std::string& path) {
  while (!contents.empty()) {
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot write", path);
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) return ErrnoError(errno, "cannot open", path);
  std::string contents;
  char chunk[1 << 16];
  while (true) {
    const ssize_t got = ::read(file.get(), chunk, sizeof(chunk));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot read", path);
    }
    if (got == 0) break;
    contents.append(chunk, static_cast<size_t>(got));
  }
  return contents;
}

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Open(
    const std::string& path) {
  std::string temporary = absl::StrCat(path, ".tmp.XXXXXX");
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot create", temporary);
  return std::make_unique<AtomicFileWriter>(Key(), path, std::move(temporary),
                                            fd);
}

AtomicFileWriter::AtomicFileWriter(Key, std::string path, std::string temporary,
                                   int fd)
    : path_(std::move(path)), temporary_(std::move(temporary)), fd_(fd) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
}

absl::Status AtomicFileWriter::Append(absl::string_view bytes) {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", path_, ": the writer is closed"));
  }
  return WriteAll(fd_, bytes, temporary_);
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot commit ", path_, ": the writer is closed"));
  }
  absl::Status status;
  if (::fsync(fd_) != 0) status = ErrnoError(errno, "cannot flush", temporary_);
  if (::close(fd_) != 0 && status.ok()) {
    status = ErrnoError(errno, "cannot close", temporary_);
  }
  fd_ = -1;
  if (status.ok() && std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    status = ErrnoError(errno, "cannot rename the temporary file to", path_);
  }
  if (!status.ok()) return status;
  committed_ = true;
  // Make the rename itself durable.
  const size_t slash = path_.find_last_of('/');
  const std::string directory =
      slash == std::string::npos ? "." : path_.substr(0, slash + 1);
  FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY));
  if (dir.get() >= 0) ::fsync(dir.get());
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
      AtomicFileWriter::Open(path);
  if (!writer.ok()) return writer.status();
  absl::Status status = (*writer)->Append(contents);
  if (!status.ok()) return status;
  return (*writer)->Commit();
}

}  // namespace scopeflow
