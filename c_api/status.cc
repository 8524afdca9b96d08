// The C API's statuses, versions, dtypes and process-wide settings.
#include <string>

#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "c_api/dtype_names.h"
#include "c_api/version.h"
#include "platform/cuda_runtime.h"
#include "platform/host_memory.h"

namespace scopeflow {
namespace c_api {
namespace {

// Returned when a status cannot be allocated: static, so never freed.
sf_status* OutOfMemoryStatus() {
  static sf_status status{SF_RESOURCE_EXHAUSTED,
                          "out of memory (while reporting an error)"};
  return &status;
}

}  // namespace

sf_status* ToCStatus(const absl::Status& status) noexcept {
  if (status.ok()) return nullptr;
  try {
    return new sf_status{static_cast<sf_code>(status.code()),
                         std::string(status.message())};
  } catch (...) {
    return OutOfMemoryStatus();
  }
}

absl::Status CheckNotNull(const void* pointer, const char* function,
                          const char* what) {
  if (pointer != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(function, ": ", what, " is null"));
}

}  // namespace c_api
}  // namespace scopeflow

extern "C" {

int sf_api_version(void) { return SF_API_VERSION; }

const char* sf_version_string(void) { return scopeflow::kLibraryVersion; }

int sf_keep_freed_host_memory_for_reuse(void) {
  return scopeflow::KeepFreedHostMemoryForReuse() ? 1 : 0;
}

sf_code sf_status_code(const sf_status* status) {
  return status == nullptr ? SF_OK : status->code;
}

const char* sf_status_message(const sf_status* status) {
  return status == nullptr ? "" : status->message.c_str();
}

void sf_status_free(sf_status* status) {
  if (status != scopeflow::c_api::OutOfMemoryStatus()) delete status;
}

const char* sf_dtype_name(sf_dtype dtype) {
  return scopeflow::c_api::DtypeName(dtype);
}

size_t sf_dtype_size(sf_dtype dtype) {
  return scopeflow::c_api::DtypeSize(dtype);
}

const char* sf_engine_name(void) {
  return scopeflow::BuiltWithCuda() ? "cuda" : "cpu";
}

}  // extern "C"
