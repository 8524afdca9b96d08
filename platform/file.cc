#include "platform/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scopeflow {
namespace {

constexpr char kTemporaryInfix[] = ".tmp.";
constexpr int kRandomChars = 6;
// Symbolic links followed before giving up, as the kernel's ELOOP limit.
constexpr int kMaxLinkHops = 40;

std::atomic<FileFaultForTesting> file_fault{nullptr};

// The errno a test injects before `step`, or 0.
int InjectedFault(FileStep step) {
  const FileFaultForTesting fault = file_fault.load(std::memory_order_relaxed);
  return fault == nullptr ? 0 : fault(step);
}

absl::Status ErrnoError(int error, absl::string_view what,
                        const std::string& path) {
  const std::string message =
      absl::StrFormat("%s %s: %s", what, path, std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) {
    return absl::PermissionDeniedError(message);
  }
  if (error == ENOSPC || error == EDQUOT) {
    return absl::ResourceExhaustedError(message);
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

 private:
  int fd_;
};

absl::Status WriteAll(int fd, absl::string_view contents,
                      const std::string& path) {
  while (!contents.empty()) {
    if (const int fault = InjectedFault(FileStep::kWrite); fault != 0) {
      return ErrnoError(fault, "cannot write", path);
    }
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot write", path);
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

// The folder of `path` ("." for a bare name).
std::string Folder(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// `path` with every symbolic link of its last component followed (the
// folders may be links: a rename inside them works through them). A
// dangling link resolves to the file it names, which the write creates.
absl::StatusOr<std::string> FollowLinks(const std::string& path) {
  std::string current = path;
  for (int hop = 0; hop < kMaxLinkHops; ++hop) {
    struct stat info;
    if (::lstat(current.c_str(), &info) != 0) {
      if (errno == ENOENT) return current;
      return ErrnoError(errno, "cannot inspect", current);
    }
    if (!S_ISLNK(info.st_mode)) return current;
    char target[PATH_MAX];
    const ssize_t size = ::readlink(current.c_str(), target, sizeof(target));
    if (size < 0) return ErrnoError(errno, "cannot read the link", current);
    if (static_cast<size_t>(size) == sizeof(target)) {
      return ErrnoError(ENAMETOOLONG, "cannot read the link", current);
    }
    std::string next(target, static_cast<size_t>(size));
    current = next[0] == '/' ? next : absl::StrCat(Folder(current), "/", next);
  }
  return ErrnoError(ELOOP, "cannot follow the links of", path);
}

// Creates "PATH.tmp.PID.XXXXXX" with mode 0666 less the umask, as a plain
// open would create PATH. Returns the descriptor and sets `temporary`.
absl::StatusOr<int> CreateTemporary(const std::string& path,
                                    std::string& temporary) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device seed;
  std::mt19937_64 random(seed());
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string suffix(kRandomChars, '\0');
    for (char& c : suffix) c = kChars[random() % (sizeof(kChars) - 1)];
    temporary = absl::StrCat(path, kTemporaryInfix, ::getpid(), ".", suffix);
    if (const int fault = InjectedFault(FileStep::kCreate); fault != 0) {
      return ErrnoError(fault, "cannot create", temporary);
    }
    const int fd = ::open(temporary.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return ErrnoError(errno, "cannot create", temporary);
  }
  return ErrnoError(EEXIST, "cannot create a temporary file beside", path);
}

// Gives the temporary `fd` the owner and permissions of `path` if it
// exists. The owner only where the writer may: changing it needs
// privileges, so EPERM leaves the writer's (as cp does).
absl::Status KeepModeAndOwner(int fd, const std::string& path,
                              const std::string& temporary) {
  struct stat old;
  if (::stat(path.c_str(), &old) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoError(errno, "cannot inspect", path);
  }
  struct stat now;
  if (::fstat(fd, &now) != 0) {
    return ErrnoError(errno, "cannot inspect", temporary);
  }
  if (now.st_uid != old.st_uid || now.st_gid != old.st_gid) {
    if (::fchown(fd, old.st_uid, old.st_gid) != 0 && errno == EPERM) {
      // Not the owner's: still the group where the writer belongs to it.
      (void)!::fchown(fd, static_cast<uid_t>(-1), old.st_gid);
    }
  }
  // After fchown, which may clear set-user-ID bits.
  if (::fchmod(fd, old.st_mode & 07777) != 0) {
    return ErrnoError(errno, "cannot set the permissions of", temporary);
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

pid_t TemporaryWriterPid(absl::string_view filename) {
  const size_t infix = filename.rfind(kTemporaryInfix);
  if (infix == absl::string_view::npos || infix == 0) return -1;
  absl::string_view rest = filename.substr(infix + sizeof(kTemporaryInfix) - 1);
  const size_t dot = rest.find('.');
  if (dot == absl::string_view::npos || dot == 0 ||
      rest.size() - dot - 1 != kRandomChars) {
    return -1;
  }
  for (char c : rest.substr(dot + 1)) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) return -1;
  }
  for (char c : rest.substr(0, dot)) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return -1;
  }
  int pid = 0;
  if (!absl::SimpleAtoi(rest.substr(0, dot), &pid) || pid <= 0) return -1;
  return pid;
}

std::vector<std::string> RemoveStaleTemporaries(const std::string& dir) {
  std::vector<std::string> removed;
  DIR* folder = ::opendir(dir.c_str());
  if (folder == nullptr) return removed;
  while (const dirent* entry = ::readdir(folder)) {
    const pid_t pid = TemporaryWriterPid(entry->d_name);
    if (pid < 0 || pid == ::getpid()) continue;
    // ESRCH: no such process. EPERM means it runs (as another user).
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    const std::string path = absl::StrCat(dir, "/", entry->d_name);
    struct stat info;
    if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    if (::unlink(path.c_str()) == 0) {
      std::fprintf(stderr,
                   "scopeflow: removed %s (%lld bytes), the temporary file "
                   "of a save that process %d did not finish\n",
                   path.c_str(), static_cast<long long>(info.st_size),
                   static_cast<int>(pid));
      removed.push_back(path);
    }
  }
  ::closedir(folder);
  return removed;
}

std::string SafeFileName(absl::string_view name) {
  if (name.empty()) return "%";
  std::string safe;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool plain = absl::ascii_isalnum(c) || c == '_' || c == '-' ||
                       c == '@' || (c == '.' && i > 0);
    if (plain) {
      safe += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&safe, "%%%02X", c);
    }
  }
  constexpr size_t kMaxName = 200;
  constexpr size_t kKept = 183;
  if (safe.size() <= kMaxName) return safe;
  // FNV-1a: the same digits on every run and build.
  uint64_t hash = 14695981039346656037ull;
  for (char c : name) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  safe.resize(kKept);
  // Do not cut a %XX in two.
  const size_t percent = safe.rfind('%');
  if (percent != std::string::npos && percent + 3 > safe.size()) {
    safe.resize(percent);
  }
  return absl::StrFormat("%s~%016x", safe, hash);
}

void SetFileFaultForTesting(FileFaultForTesting fault) {
  file_fault.store(fault, std::memory_order_relaxed);
}

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Open(
    const std::string& path) {
  absl::StatusOr<std::string> destination = FollowLinks(path);
  if (!destination.ok()) return destination.status();
  std::vector<std::string> removed =
      RemoveStaleTemporaries(Folder(*destination));
  std::string temporary;
  absl::StatusOr<int> fd = CreateTemporary(*destination, temporary);
  if (!fd.ok()) return fd.status();
  return std::make_unique<AtomicFileWriter>(Key(), std::move(*destination),
                                            std::move(temporary), *fd,
                                            std::move(removed));
}

AtomicFileWriter::AtomicFileWriter(Key, std::string path, std::string temporary,
                                   int fd,
                                   std::vector<std::string> removed_stale)
    : path_(std::move(path)),
      temporary_(std::move(temporary)),
      fd_(fd),
      removed_stale_(std::move(removed_stale)) {}

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
  absl::Status status = KeepModeAndOwner(fd_, path_, temporary_);
  if (status.ok()) {
    const int fault = InjectedFault(FileStep::kSync);
    if (fault != 0 || ::fsync(fd_) != 0) {
      status =
          ErrnoError(fault != 0 ? fault : errno, "cannot flush", temporary_);
    }
  }
  if (::close(fd_) != 0 && status.ok()) {
    status = ErrnoError(errno, "cannot close", temporary_);
  }
  fd_ = -1;
  if (status.ok()) {
    const int fault = InjectedFault(FileStep::kRename);
    if (fault != 0 || std::rename(temporary_.c_str(), path_.c_str()) != 0) {
      status = ErrnoError(fault != 0 ? fault : errno,
                          "cannot rename the temporary file to", path_);
    }
  }
  if (!status.ok()) return status;  // The destructor removes the temporary.
  committed_ = true;
  // Make the rename itself durable: without it a crash can bring back the
  // old file, or lose a new one.
  const std::string folder = Folder(path_);
  FileDescriptor dir(
      ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const int fault = InjectedFault(FileStep::kSyncFolder);
  // EINVAL: a file system that cannot flush folders (nothing to wait for).
  if (fault != 0 || dir.get() < 0 ||
      (::fsync(dir.get()) != 0 && errno != EINVAL)) {
    return ErrnoError(
        fault != 0 ? fault : errno,
        absl::StrCat("wrote ", path_, " but cannot flush its folder"), folder);
  }
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
