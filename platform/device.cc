#include "platform/device.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::Status CheckPlaceAvailable(const Place& place) {
  if (place.is_cpu()) return absl::OkStatus();
  SF_CHECK_CODE(BuiltWithCuda(), absl::StatusCode::kFailedPrecondition,
                "place %s is not available: this build of scopeflow has no "
                "CUDA support",
                place.ToString());
  const int count = CudaDeviceCount();
  SF_CHECK_CODE(place.device() < count, absl::StatusCode::kFailedPrecondition,
                "place %s is not available: %d CUDA device(s) present",
                place.ToString(), count);
  return absl::OkStatus();
}

absl::Status CopyBytes(const Place& dst_place, void* dst,
                       const Place& src_place, const void* src, size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  if (dst_place.is_cpu() && src_place.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  SF_RETURN_IF_ERROR(CheckPlaceAvailable(dst_place));
  SF_RETURN_IF_ERROR(CheckPlaceAvailable(src_place));
  // On the calling thread's stream of the device involved (the
  // destination's when both are devices), so the copy follows the kernels
  // this thread queued. A copy out of page-locked memory is waited for:
  // the caller may reuse the source as soon as this returns.
  const Place& device = dst_place.is_cuda() ? dst_place : src_place;
  const bool wait = src_place.is_cpu() && IsPageLockedHostMemory(src);
  return CudaCopy(device.device(), dst, src, bytes, wait);
}

}  // namespace scopeflow
