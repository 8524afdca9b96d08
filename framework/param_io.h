// Parameter files: named tensors, streamed, checksummed, written
// atomically.
//
// Layout (all integers little-endian):
//   "SFPARAM1"
//   per tensor: u32 1, u32 header size, header (a TensorProto with name,
//               dtype and dims, no data), u64 data size, data,
//               u32 CRC-32 of header and data
//   end:        u32 0, u64 tensor count
// Tensors stream straight between file and memory, so a file (or one
// tensor) may exceed 2 GiB. A truncated file misses its end record; an
// altered byte fails a checksum.
#ifndef SCOPEFLOW_FRAMEWORK_PARAM_IO_H_
#define SCOPEFLOW_FRAMEWORK_PARAM_IO_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/scope.h"
#include "platform/place.h"

namespace scopeflow {

// Writes the tensors of `names` (found in `scope` or its parents) to
// `path`, atomically: on any error the old file is untouched.
absl::Status SaveParams(const Scope& scope,
                        const std::vector<std::string>& names,
                        const std::string& path);

// Reads every tensor of `path` onto `place` and stores them as local
// variables of `scope`; returns their names in file order. The whole file
// is read and verified before the scope changes, so a bad file changes
// nothing.
absl::StatusOr<std::vector<std::string>> LoadParams(const std::string& path,
                                                    Scope& scope,
                                                    const Place& place);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARAM_IO_H_
