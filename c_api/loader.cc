// libscopeflow.so, the library programs link: a loader that picks an
// engine (a build of the whole C API, libscopeflow_cpu.so or
// libscopeflow_cuda.so) on the first call and forwards every call to it.
// The CPU engine needs no CUDA library, so a program runs where none is
// installed; the CUDA engine is tried first where the NVIDIA driver sees a
// device, and passed over when its CUDA libraries do not load.
//
// Exactly one engine is ever loaded in a process: two would register the
// same protobuf descriptors in the one libprotobuf, which aborts. An
// engine that dlopen refuses ran no code, so the next may be tried; one
// that loads is never unloaded.
//
// Thread safety: the engine is chosen once, under the C++ runtime's lock
// of a function-local static; afterwards the table of functions is
// read-only.
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "c_api/dtype_names.h"
#include "c_api/scopeflow_c_api.h"
#include "c_api/version.h"

namespace {

// A status the loader makes itself: why no engine is loaded. Static, so
// sf_status_free leaves it alone.
struct LoaderStatus {
  std::string message;
};

struct Engine {
#define SF_FORWARD(type, name, params, args, fallback) type(*name) params;
#define SF_FORWARD_VOID(name, params, args) void(*name) params;
#define SF_FORWARD_STATUS(name, params, args) sf_status*(*name)params;
#define SF_ENGINE_ONLY(type, name, params) type(*name) params;
#include "c_api/api_functions.inc"
};

// Whether the NVIDIA driver loads and sees a device: only then is the CUDA
// engine worth loading (it would load where the driver and the CUDA
// libraries are installed, then run on the CPU alone). Asks the driver
// itself, whose C ABI is stable: cuInit, then cuDeviceGetCount, both 0
// (CUDA_SUCCESS) on success; with no device cuInit fails. A driver that
// was initialised stays loaded: unloading it could leave its threads
// running code that is gone.
bool CudaDevicePresent() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  using InitFunction = int (*)(unsigned int flags);
  using DeviceCountFunction = int (*)(int* count);
  auto init = reinterpret_cast<InitFunction>(dlsym(driver, "cuInit"));
  auto device_count =
      reinterpret_cast<DeviceCountFunction>(dlsym(driver, "cuDeviceGetCount"));
  if (init == nullptr || device_count == nullptr) {
    dlclose(driver);
    return false;
  }
  int devices = 0;
  return init(0) == 0 && device_count(&devices) == 0 && devices > 0;
}

// The engine files to try, in order.
std::vector<std::string> Candidates() {
  std::vector<std::string> candidates;
  if (const char* list = std::getenv("SCOPEFLOW_ENGINE");
      list != nullptr && *list != '\0') {
    std::string rest = list;
    size_t colon;
    while ((colon = rest.find(':')) != std::string::npos) {
      if (colon > 0) candidates.push_back(rest.substr(0, colon));
      rest.erase(0, colon + 1);
    }
    if (!rest.empty()) candidates.push_back(rest);
    return candidates;
  }
  // Beside this library, in its scopeflow/ folder.
  Dl_info self;
  std::string dir = ".";
  if (dladdr(reinterpret_cast<void*>(&sf_api_version), &self) != 0 &&
      self.dli_fname != nullptr) {
    dir = self.dli_fname;
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  }
  if (CudaDevicePresent()) {
    candidates.push_back(dir + "/scopeflow/libscopeflow_cuda.so");
  }
  candidates.push_back(dir + "/scopeflow/libscopeflow_cpu.so");
  return candidates;
}

// Looks every function up in `handle`; false (with `missing` set) if one
// is absent.
bool Resolve(void* handle, Engine& engine, std::string& missing) {
  bool ok = true;
  auto lookup = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
        dlsym(handle, name));
    if (function == nullptr && ok) {
      ok = false;
      missing = name;
    }
  };
#define SF_FORWARD(type, name, params, args, fallback) \
  lookup(engine.name, #name);
#define SF_FORWARD_VOID(name, params, args) lookup(engine.name, #name);
#define SF_FORWARD_STATUS(name, params, args) lookup(engine.name, #name);
#define SF_ENGINE_ONLY(type, name, params) lookup(engine.name, #name);
#include "c_api/api_functions.inc"
  return ok;
}

struct Loaded {
  Engine engine{};
  bool ok = false;
  LoaderStatus failure;
};

Loaded Load() {
  Loaded loaded;
  std::string errors;
  auto note = [&errors](const std::string& error) {
    errors += (errors.empty() ? ": " : "; ") + error;
  };
  for (const std::string& path : Candidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      note(error != nullptr ? error : path);
      continue;
    }
    std::string missing;
    if (!Resolve(handle, loaded.engine, missing)) {
      // It ran its initialisers: no other engine may load after it.
      note(path + " lacks " + missing + " (an engine of an older release?)");
      break;
    }
    if (loaded.engine.sf_api_version() < SF_API_VERSION) {
      note(path + " has an older API version");
      break;
    }
    loaded.ok = true;
    return loaded;
  }
  loaded.failure.message = "libscopeflow: no engine could be loaded" + errors;
  return loaded;
}

// Nothing may throw out of an exported function: out of memory while
// loading leaves no engine (and a status without a message).
const Loaded& Current() {
  static const Loaded* const loaded = []() -> const Loaded* {
    try {
      return new Loaded(Load());
    } catch (...) {
      static const Loaded failed;
      return &failed;
    }
  }();
  return *loaded;
}

const Engine* CurrentEngine() {
  const Loaded& loaded = Current();
  return loaded.ok ? &loaded.engine : nullptr;
}

sf_status* Failure() {
  return reinterpret_cast<sf_status*>(
      const_cast<LoaderStatus*>(&Current().failure));
}

bool IsFailure(const sf_status* status) {
  return status != nullptr && !Current().ok && status == Failure();
}

}  // namespace

extern "C" {

int sf_api_version(void) { return SF_API_VERSION; }

const char* sf_version_string(void) { return scopeflow::kLibraryVersion; }

const char* sf_dtype_name(sf_dtype dtype) {
  return scopeflow::c_api::DtypeName(dtype);
}

size_t sf_dtype_size(sf_dtype dtype) {
  return scopeflow::c_api::DtypeSize(dtype);
}

sf_code sf_status_code(const sf_status* status) {
  if (IsFailure(status)) return SF_FAILED_PRECONDITION;
  const Engine* engine = CurrentEngine();
  return engine == nullptr ? SF_OK : engine->sf_status_code(status);
}

const char* sf_status_message(const sf_status* status) {
  if (IsFailure(status)) {
    return reinterpret_cast<const LoaderStatus*>(status)->message.c_str();
  }
  const Engine* engine = CurrentEngine();
  return engine == nullptr ? "" : engine->sf_status_message(status);
}

void sf_status_free(sf_status* status) {
  if (IsFailure(status)) return;
  if (const Engine* engine = CurrentEngine()) engine->sf_status_free(status);
}

#define SF_FORWARD(type, name, params, args, fallback)       \
  type name params {                                         \
    const Engine* engine = CurrentEngine();                  \
    return engine == nullptr ? fallback : engine->name args; \
  }
#define SF_FORWARD_VOID(name, params, args)                        \
  void name params {                                               \
    if (const Engine* engine = CurrentEngine()) engine->name args; \
  }
#define SF_FORWARD_STATUS(name, params, args)                 \
  sf_status* name params {                                    \
    const Engine* engine = CurrentEngine();                   \
    return engine == nullptr ? Failure() : engine->name args; \
  }
#include "c_api/api_functions.inc"

}  // extern "C"
