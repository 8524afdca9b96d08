// libFuzzer target for parameter files (framework/param_io.h).
//
// `--params`, `serve` and `--resume` read parameter files and checkpoints
// that may be truncated, damaged, joined or crafted; every byte string must
// end in tensors or an error status: never a crash, a hang, undefined
// behaviour or an allocation larger than the file (a tensor's bytes must
// be in the file before it is allocated). What loads must save and load
// back to the same tensors. The bytes are read from a memfd, so nothing
// touches the disk.
// Build and run: FUZZ_TARGET=params tools/fuzz/run.sh (see README.md).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "framework/param_io.h"
#include "framework/tensor.h"
#include "google/protobuf/stubs/logging.h"
#include "platform/place.h"

namespace {

// A file holding `bytes`, readable at /proc/self/fd/N; -1 on failure.
int MemoryFile(const uint8_t* data, size_t size) {
  const int fd = memfd_create("params", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t written = 0;
  while (written < size) {
    const ssize_t got = write(fd, data + written, size - written);
    if (got <= 0) {
      close(fd);
      return -1;
    }
    written += static_cast<size_t>(got);
  }
  return fd;
}

using Loaded = std::vector<std::pair<std::string, scopeflow::Tensor>>;

absl::StatusOr<Loaded> ReadBytes(const uint8_t* data, size_t size) {
  const int fd = MemoryFile(data, size);
  if (fd < 0) {
    std::perror("memfd");
    std::abort();
  }
  absl::StatusOr<Loaded> loaded = scopeflow::ReadParams(
      absl::StrCat("/proc/self/fd/", fd), scopeflow::CPUPlace());
  close(fd);
  return loaded;
}

void DiscardLog(google::protobuf::LogLevel, const char*, int,
                const std::string&) {}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A tensor header's name that is not UTF-8 is logged by the parser; the
  // returned status is what is under test, not the log.
  google::protobuf::SetLogHandler(&DiscardLog);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::StatusOr<Loaded> loaded = ReadBytes(data, size);
  if (!loaded.ok()) return 0;
  // Round trip through a real save.
  std::vector<scopeflow::TensorToSave> tensors;
  for (const auto& [name, tensor] : *loaded) tensors.push_back({name, &tensor});
  char path[] = "/tmp/params_fuzzer.XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) std::abort();
  close(fd);
  const absl::Status saved = scopeflow::SaveTensors(tensors, path);
  std::string bytes;
  if (std::FILE* file = std::fopen(path, "rb")) {
    char chunk[4096];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
      bytes.append(chunk, got);
    }
    std::fclose(file);
  }
  unlink(path);
  if (!saved.ok()) {
    std::fprintf(stderr, "loaded tensors do not save: %s\n",
                 std::string(saved.message()).c_str());
    std::abort();
  }
  const absl::StatusOr<Loaded> again =
      ReadBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  bool same = again.ok() && again->size() == loaded->size();
  for (size_t i = 0; same && i < loaded->size(); ++i) {
    const scopeflow::Tensor& a = (*loaded)[i].second;
    const scopeflow::Tensor& b = (*again)[i].second;
    same = (*loaded)[i].first == (*again)[i].first && a.dims() == b.dims() &&
           a.dtype() == b.dtype() &&
           (a.nbytes() == 0 ||
            std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
  }
  if (!same) {
    std::fprintf(stderr, "saved tensors do not load back whole\n");
    std::abort();
  }
  return 0;
}
