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
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// Writes the tensors of `names` (found in `scope` or its parents) to
// `path`, atomically: on any error the old file is untouched.
absl::Status SaveParams(const Scope& scope,
                        const std::vector<std::string>& names,
                        const std::string& path);

// A tensor to save and the name it is saved under; not owned.
struct TensorToSave {
  std::string name;
  const Tensor* tensor = nullptr;
};

// Writes `tensors` to `path`, atomically; each name at most once.
absl::Status SaveTensors(const std::vector<TensorToSave>& tensors,
                         const std::string& path);

// Every tensor of `path` on `place`, in file order, after the whole file is
// verified: the checksums, no name twice, nothing after the end record. A
// tensor too large for memory is RESOURCE_EXHAUSTED with the bytes asked
// for; any other fault of the file is DATA_LOSS.
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> ReadParams(
    const std::string& path, const Place& place);

// Reads every tensor of `path` onto `place` and stores them as local
// variables of `scope`; returns their names in file order. The whole file
// is read and verified before the scope changes, so a bad file changes
// nothing.
absl::StatusOr<std::vector<std::string>> LoadParams(const std::string& path,
                                                    Scope& scope,
                                                    const Place& place);

// OK when every name of `loaded` (what LoadParams read from `path`) is a
// variable of one of `nets` (declared, or read or written by an op of any
// block); otherwise InvalidArgument naming the others: a parameter file of
// another model, or of a renamed variable, would load and go unused.
absl::Status CheckParamsUsed(const std::vector<std::string>& loaded,
                             const std::vector<const NetDef*>& nets,
                             const std::string& path);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARAM_IO_H_
