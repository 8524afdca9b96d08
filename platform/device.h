// Which places exist in this process, and copies between them.
#ifndef SCOPEFLOW_PLATFORM_DEVICE_H_
#define SCOPEFLOW_PLATFORM_DEVICE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "platform/place.h"

namespace scopeflow {

// OK when `place` can hold memory here; otherwise an error that names the
// place and why (no CUDA in this build, or how many devices there are).
absl::Status CheckPlaceAvailable(const Place& place);

// Copies `bytes` bytes from `src` on `src_place` to `dst` on `dst_place`.
// Returns once the destination can be read when it is host memory, and once
// the source may be reused; a copy to a device is ordered before the work
// the calling thread queues on that device afterwards (its stream).
absl::Status CopyBytes(const Place& dst_place, void* dst,
                       const Place& src_place, const void* src, size_t bytes);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_DEVICE_H_
