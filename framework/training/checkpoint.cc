#include "framework/training/checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "framework/param_io.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr char kPrefix[] = "ckpt-";
constexpr char kSuffix[] = ".sfparams";
constexpr char kLockFile[] = "scopeflow.lock";

// "optimizer adam\nstate w@MOMENT1\nstate w@MOMENT2\n" as a uint8 tensor.
absl::StatusOr<Tensor> EncodeLayout(const OptimizerLayout& layout) {
  std::string text = absl::StrCat("optimizer ", layout.type, "\n");
  for (const std::string& name : layout.state) {
    absl::StrAppend(&text, "state ", name, "\n");
  }
  Tensor tensor;
  SF_RETURN_IF_ERROR(
      tensor.Allocate(CPUPlace(), kUInt8, {static_cast<int64_t>(text.size())}));
  std::memcpy(tensor.raw_data(), text.data(), text.size());
  return tensor;
}

absl::StatusOr<OptimizerLayout> DecodeLayout(const Tensor& tensor,
                                             const std::string& path) {
  SF_CHECK_CODE(
      tensor.dtype() == kUInt8 && tensor.rank() == 1 && tensor.place().is_cpu(),
      absl::StatusCode::kDataLoss,
      "checkpoint %s: \"%s\" holds %s, not uint8 text", path,
      kCheckpointInfoVar, tensor.DebugString());
  const absl::string_view text(static_cast<const char*>(tensor.raw_data()),
                               tensor.nbytes());
  OptimizerLayout layout;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "optimizer ")) {
      layout.type = std::string(line);
    } else if (absl::ConsumePrefix(&line, "state ")) {
      layout.state.emplace_back(line);
    } else {
      return absl::DataLossError(
          absl::StrFormat("checkpoint %s: \"%s\" has an unknown line \"%s\"",
                          path, kCheckpointInfoVar, absl::CHexEscape(line)));
    }
  }
  SF_CHECK_CODE(!layout.type.empty(), absl::StatusCode::kDataLoss,
                "checkpoint %s: \"%s\" names no optimizer", path,
                kCheckpointInfoVar);
  return layout;
}

// Up to a few names, for messages.
std::string SomeNames(const std::vector<std::string>& names) {
  constexpr size_t kShown = 4;
  std::vector<std::string> shown(
      names.begin(), names.begin() + std::min(names.size(), kShown));
  std::string text = absl::StrCat("\"", absl::StrJoin(shown, "\", \""), "\"");
  if (names.size() > kShown) {
    absl::StrAppend(&text, " and ", names.size() - kShown, " more");
  }
  return text;
}

// Checks the tensors read from `path` against what the resuming trainer
// expects, and drops from `loaded` the optimizer state a reset leaves out;
// returns the names dropped.
absl::StatusOr<std::vector<std::string>> Reconcile(
    const std::string& path, const std::optional<OptimizerLayout>& recorded,
    const RestoreOptions& options,
    std::vector<std::pair<std::string, Tensor>>& loaded) {
  const OptimizerLayout* now =
      options.optimizer.has_value() ? &*options.optimizer : nullptr;
  if (now != nullptr && recorded.has_value() &&
      !options.reset_optimizer_state) {
    SF_CHECK_CODE(
        recorded->type == now->type, absl::StatusCode::kFailedPrecondition,
        "checkpoint %s holds the state of optimizer \"%s\" (%d "
        "variable(s)); this run uses \"%s\" (%d): resuming would drop the "
        "one and start the other from nothing. Resume with the same "
        "optimizer, or pass --reset_optimizer_state to keep the parameters "
        "and the step and start \"%s\" afresh",
        path, recorded->type, recorded->state.size(), now->type,
        now->state.size(), now->type);
    SF_CHECK_CODE(
        recorded->state == now->state, absl::StatusCode::kFailedPrecondition,
        "checkpoint %s holds optimizer \"%s\" state for %s; this "
        "run's is %s (another net, or other optimizer options); "
        "pass --reset_optimizer_state to start it afresh",
        path, now->type, SomeNames(recorded->state), SomeNames(now->state));
  }
  absl::flat_hash_set<std::string> skip;
  if (options.reset_optimizer_state) {
    if (recorded.has_value())
      skip.insert(recorded->state.begin(), recorded->state.end());
    if (now != nullptr) skip.insert(now->state.begin(), now->state.end());
  }
  absl::flat_hash_set<std::string> expected;
  if (options.expected_names.has_value()) {
    expected.insert(options.expected_names->begin(),
                    options.expected_names->end());
  }
  // A reset of a checkpoint that records no optimizer: whatever this run
  // does not have is taken for the old optimizer's state.
  const bool skip_unknown = options.reset_optimizer_state &&
                            !recorded.has_value() &&
                            options.expected_names.has_value();
  std::vector<std::string> skipped;
  std::vector<std::string> unknown;
  std::vector<std::pair<std::string, Tensor>> kept;
  for (auto& entry : loaded) {
    const bool known =
        !options.expected_names.has_value() || expected.contains(entry.first);
    if (skip.contains(entry.first) || (skip_unknown && !known)) {
      skipped.push_back(entry.first);
    } else if (!known) {
      unknown.push_back(entry.first);
    } else {
      kept.push_back(std::move(entry));
    }
  }
  SF_CHECK_CODE(unknown.empty(), absl::StatusCode::kFailedPrecondition,
                "checkpoint %s holds %s, which this run's training net does "
                "not have: written by another net%s",
                path, SomeNames(unknown),
                recorded.has_value() ? ""
                                     : " or another optimizer (then pass "
                                       "--reset_optimizer_state)");
  if (options.expected_names.has_value()) {
    absl::flat_hash_set<std::string> present;
    for (const auto& entry : kept) present.insert(entry.first);
    std::vector<std::string> missing;
    for (const std::string& name : *options.expected_names) {
      if (!present.contains(name) && !skip.contains(name)) {
        missing.push_back(name);
      }
    }
    SF_CHECK_CODE(missing.empty(), absl::StatusCode::kFailedPrecondition,
                  "checkpoint %s lacks %s of this run's training state: "
                  "written by another net%s",
                  path, SomeNames(missing),
                  recorded.has_value() ? ""
                                       : " or another optimizer (then pass "
                                         "--reset_optimizer_state)");
  }
  loaded = std::move(kept);
  return skipped;
}

}  // namespace

std::string CheckpointPath(const std::string& dir, int64_t step) {
  return absl::StrFormat("%s/%s%012d%s", dir, kPrefix, step, kSuffix);
}

absl::StatusOr<std::vector<CheckpointFile>> ListCheckpoints(
    const std::string& dir) {
  std::vector<CheckpointFile> files;
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string filename = entry.path().filename().string();
    absl::string_view name = filename;
    if (!absl::ConsumePrefix(&name, kPrefix) ||
        !absl::ConsumeSuffix(&name, kSuffix)) {
      continue;
    }
    int64_t step = 0;
    if (!absl::SimpleAtoi(name, &step)) continue;
    files.push_back({entry.path().string(), step});
  }
  SF_CHECK(!error, "cannot list checkpoint directory %s: %s", dir,
           error.message());
  std::sort(files.begin(), files.end(),
            [](const CheckpointFile& a, const CheckpointFile& b) {
              return a.step < b.step;
            });
  return files;
}

absl::Status SaveCheckpoint(const Scope& scope,
                            const std::vector<std::string>& names,
                            const std::string& dir, int64_t step, int keep,
                            const OptimizerLayout* optimizer) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  SF_CHECK(!error, "cannot create checkpoint directory %s: %s", dir,
           error.message());
  std::vector<TensorToSave> tensors;
  for (const std::string& name : names) {
    const Variable* var = scope.FindVar(name);
    SF_CHECK_CODE(var != nullptr, absl::StatusCode::kNotFound,
                  "cannot save checkpoint variable \"%s\": no such variable "
                  "in the scope",
                  name);
    absl::StatusOr<const Tensor*> tensor = var->Get<Tensor>();
    SF_CHECK_CODE(tensor.ok() && (*tensor)->initialized(),
                  absl::StatusCode::kFailedPrecondition,
                  "cannot save checkpoint variable \"%s\": it holds no "
                  "tensor",
                  name);
    tensors.push_back({name, *tensor});
  }
  Tensor info;
  if (optimizer != nullptr) {
    SF_ASSIGN_OR_RETURN(info, EncodeLayout(*optimizer));
    tensors.push_back({kCheckpointInfoVar, &info});
  }
  SF_RETURN_IF_ERROR(SaveTensors(tensors, CheckpointPath(dir, step)));
  SF_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(dir));
  for (size_t i = 0; i + std::max(keep, 1) < files.size(); ++i) {
    std::filesystem::remove(files[i].path, error);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<CheckpointFile>> RestoreLatestCheckpoint(
    const std::string& dir, Scope& scope, const Place& place,
    const RestoreOptions& options) {
  SF_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(dir));
  if (files.empty()) return std::nullopt;
  CheckpointFile latest = files.back();
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> loaded =
      ReadParams(latest.path, place);
  if (!loaded.ok()) {
    std::string earlier =
        files.size() > 1 ? absl::StrFormat(
                               "; the previous checkpoint %s was not touched: "
                               "move the damaged file away to resume from it",
                               files[files.size() - 2].path)
                         : "";
    return absl::Status(
        loaded.status().code(),
        absl::StrFormat("cannot resume from checkpoint %s: %s%s", latest.path,
                        loaded.status().message(), earlier));
  }
  for (auto it = loaded->begin(); it != loaded->end(); ++it) {
    if (it->first != kCheckpointInfoVar) continue;
    SF_ASSIGN_OR_RETURN(const Tensor host, it->second.CopyTo(CPUPlace()));
    SF_ASSIGN_OR_RETURN(latest.optimizer, DecodeLayout(host, latest.path));
    loaded->erase(it);
    break;
  }
  SF_ASSIGN_OR_RETURN(latest.skipped, Reconcile(latest.path, latest.optimizer,
                                                options, *loaded));
  // Verified: now change the scope.
  for (auto& [name, tensor] : *loaded) {
    SF_ASSIGN_OR_RETURN(Tensor * slot, scope.Var(name)->GetMutable<Tensor>());
    *slot = std::move(tensor);
  }
  return latest;
}

absl::StatusOr<std::unique_ptr<CheckpointDirLock>> CheckpointDirLock::Acquire(
    const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  SF_CHECK(!error, "cannot create checkpoint directory %s: %s", dir,
           error.message());
  const std::string path = absl::StrCat(dir, "/", kLockFile);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  SF_CHECK_CODE(fd >= 0, absl::StatusCode::kPermissionDenied,
                "cannot open the lock file %s: %s", path, std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int flock_error = errno;
    char holder[32] = {};
    const ssize_t got = ::pread(fd, holder, sizeof(holder) - 1, 0);
    ::close(fd);
    SF_CHECK_CODE(flock_error != EWOULDBLOCK,
                  absl::StatusCode::kFailedPrecondition,
                  "checkpoint folder %s is in use by another trainer "
                  "(process %s holds %s): two trainers writing one folder "
                  "overwrite each other's steps. Use another "
                  "--checkpoint_dir, or stop the other run",
                  dir,
                  got > 0 ? std::string(absl::StripAsciiWhitespace(
                                absl::string_view(holder, got)))
                          : std::string("unknown"),
                  path);
    return absl::UnknownError(absl::StrFormat("cannot lock %s: %s", path,
                                              std::strerror(flock_error)));
  }
  // Who holds it, for the message a second trainer prints; failing to
  // write it only leaves that message without the pid.
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) == 0) {
    (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  }
  return std::unique_ptr<CheckpointDirLock>(new CheckpointDirLock(fd));
}

CheckpointDirLock::~CheckpointDirLock() { ::close(fd_); }

}  // namespace scopeflow
