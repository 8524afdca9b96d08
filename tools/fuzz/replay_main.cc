// Runs a libFuzzer target's LLVMFuzzerTestOneInput over the files it is
// given (folders are walked), once each, without libFuzzer: the corpus and
// the crash inputs found so far, replayed by Bazel's compiler under every
// test configuration (AddressSanitizer's included) on each test run, where
// tools/fuzz/run.sh's fuzzing needs clang and a build of its own. An input
// that crashes fails the test; the name of each input is printed before it
// runs, so the log says which.
//
// With --mutate_seconds=N it then fuzzes for N seconds: inputs made from
// those files by blind mutation (mutator.h), CI's bounded fuzzing run.
// --seed=S repeats a run's sequence (the seed is printed). Each input is
// written to a file before it runs, so after a crash, a sanitizer report,
// a hang or a kill that file holds the input at fault; a run that ends
// clean removes it. An input running over 10 s is a hang and aborts.
//
//   replay [--mutate_seconds=N] [--seed=S] PATH...
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tools/fuzz/mutator.h"

// Optional, as for libFuzzer: the npy target has none.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc,
                                                          char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// A file's size is checked before it is allocated, so no input may need
// more than this; a leak or an unchecked size trips it. The abort makes
// ASan print where (when the build has it; otherwise these are unused).
extern "C" const char* __asan_default_options() {
  return "hard_rss_limit_mb=2560:handle_abort=1";
}
extern "C" const char* __ubsan_default_options() {
  return "print_stacktrace=1";
}

namespace {

constexpr unsigned kSecondsPerInput = 10;

// For the signal handler: what to say when an input hangs.
char hang_message[512] = "replay: an input ran over 10 s\n";

void OnHang(int) {
  const ssize_t ignored =
      write(STDERR_FILENO, hang_message, std::strlen(hang_message));
  (void)ignored;
  std::abort();
}

bool StartsWith(const char* arg, const char* prefix) {
  return std::strncmp(arg, prefix, std::strlen(prefix)) == 0;
}

std::string ReadWhole(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)),
                     std::istreambuf_iterator<char>());
}

void RunOne(const std::string& bytes) {
  alarm(kSecondsPerInput);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                         bytes.size());
  alarm(0);
}

// Where the input being run is kept: the test's undeclared outputs under
// Bazel (bazel-testlogs/<target>/test.outputs/), else the temporary folder.
std::string InputFilePath() {
  for (const char* name : {"TEST_UNDECLARED_OUTPUTS_DIR", "TMPDIR"}) {
    const char* dir = std::getenv(name);
    if (dir != nullptr && *dir != '\0') return std::string(dir) + "/fuzz_input";
  }
  return "/tmp/fuzz_input." + std::to_string(getpid());
}

int Mutate(std::vector<std::string> seeds, double seconds, uint64_t seed) {
  const std::string path = InputFilePath();
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                      0644);
  if (fd < 0) {
    std::perror(path.c_str());
    return 2;
  }
  std::snprintf(hang_message, sizeof(hang_message),
                "replay: an input ran over %u s; it is in %s\n",
                kSecondsPerInput, path.c_str());
  scopeflow::fuzz::Mutator mutator(std::move(seeds), seed, 4096);
  std::fprintf(stderr,
               "mutate: %.0f s from seed %llu (--seed=%llu repeats it); each "
               "input is written to %s before it runs\n",
               seconds, static_cast<unsigned long long>(seed),
               static_cast<unsigned long long>(seed), path.c_str());
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string input = mutator.Next();
    if (pwrite(fd, input.data(), input.size(), 0) !=
            static_cast<ssize_t>(input.size()) ||
        ftruncate(fd, static_cast<off_t>(input.size())) != 0) {
      std::perror(path.c_str());
      return 2;
    }
    RunOne(input);
    ++runs;
  }
  close(fd);
  unlink(path.c_str());
  const double elapsed = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  std::printf("mutate: %llu inputs in %.1f s (%.0f/s), none crashed\n",
              static_cast<unsigned long long>(runs), elapsed,
              runs / (elapsed > 0 ? elapsed : 1));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  signal(SIGALRM, OnHang);
  double mutate_seconds = 0;
  uint64_t seed = std::random_device()();
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (StartsWith(argv[i], "--mutate_seconds=")) {
      mutate_seconds = std::atof(argv[i] + std::strlen("--mutate_seconds="));
      continue;
    }
    if (StartsWith(argv[i], "--seed=")) {
      seed = std::strtoull(argv[i] + std::strlen("--seed="), nullptr, 10);
      continue;
    }
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(path)) {
      inputs.push_back(path);
    } else {
      std::fprintf(stderr, "replay: no file or folder %s\n", argv[i]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs given\n");
    return 2;
  }
  std::vector<std::string> seeds;
  for (const std::filesystem::path& input : inputs) {
    std::fprintf(stderr, "replay: %s\n", input.c_str());
    std::snprintf(hang_message, sizeof(hang_message),
                  "replay: %s ran over %u s\n", input.c_str(),
                  kSecondsPerInput);
    seeds.push_back(ReadWhole(input));
    RunOne(seeds.back());
  }
  std::printf("replay: %zu inputs, none crashed\n", inputs.size());
  if (mutate_seconds <= 0) return 0;
  return Mutate(std::move(seeds), mutate_seconds, seed);
}
