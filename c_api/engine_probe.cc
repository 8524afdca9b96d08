// Loads the C API's loader (libscopeflow.so) from a path, as a program
// linked against an installed prefix loads it, runs the softmax of
// testdata/softmax.pbtxt through it, and prints the engine that ran it and
// the CUDA libraries mapped into the process ("none" where the CPU engine
// ran). Exits 1 if a step fails. Usage: engine_probe LOADER NET
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "c_api/scopeflow_c_api.h"

namespace {

void* loader = nullptr;

// The loader's function `name`, typed as the header declares it.
template <typename Function>
Function Get(const char* name) {
  void* symbol = dlsym(loader, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "the loader lacks %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<Function>(symbol);
}
#define SF(name) Get<decltype(&name)>(#name)

// The CUDA runtime and math libraries mapped into this process.
std::set<std::string> CudaLibraries() {
  static const std::regex kCuda(
      "/lib(cudart|cublas|cublasLt|cudnn[a-z_]*|curand|cufft|cusparse|"
      "nvrtc|nvJitLink)\\.so[^/]*$");
  std::set<std::string> found;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (std::regex_search(path, kCuda)) found.insert(path);
  }
  return found;
}

int Fail(sf_status* status) {
  std::fprintf(stderr, "failed: %s\n", SF(sf_status_message)(status));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s LOADER NET\n", argv[0]);
    return 2;
  }
  loader = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (loader == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  std::printf("engine %s\n", SF(sf_engine_name)());

  sf_predictor* predictor = nullptr;
  if (sf_status* status =
          SF(sf_predictor_load)(argv[2], nullptr, nullptr, &predictor)) {
    return Fail(status);
  }
  float x[3] = {0, 1, 2};
  const int64_t dims[] = {1, 3};
  sf_tensor* input = nullptr;
  if (sf_status* status =
          SF(sf_tensor_wrap)(x, sizeof x, SF_FLOAT32, dims, 2, &input)) {
    return Fail(status);
  }
  const char* name = "x";
  sf_tensor* output = nullptr;
  if (sf_status* status =
          SF(sf_predictor_run)(predictor, &name, &input, 1, &output, 1)) {
    return Fail(status);
  }
  const auto* y = static_cast<const float*>(SF(sf_tensor_const_data)(output));
  const double total = 1 + std::exp(1.0) + std::exp(2.0);
  bool right = true;
  for (int i = 0; i < 3; ++i) {
    right = right && std::fabs(y[i] - std::exp(i) / total) < 1e-6;
  }
  std::printf("softmax %s\n", right ? "right" : "wrong");
  SF(sf_tensor_free)(output);
  SF(sf_tensor_free)(input);
  SF(sf_predictor_free)(predictor);

  const std::set<std::string> cuda = CudaLibraries();
  std::printf("cuda libraries:");
  if (cuda.empty()) std::printf(" none");
  for (const std::string& path : cuda) std::printf(" %s", path.c_str());
  std::printf("\n");
  return right ? 0 : 1;
}
