// scopeflow params (parameter files to and from numpy's .npz) and scopeflow
// info FILE.params (what a parameter file holds).
#ifndef SCOPEFLOW_TOOLS_PARAMS_COMMAND_H_
#define SCOPEFLOW_TOOLS_PARAMS_COMMAND_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace scopeflow {

// With `to_npz`, converts the parameter file `in` to the .npz `out`; with
// `from_npz`, the .npz `in` to the parameter file `out` (exactly one of
// them). The tensors keep their names, dtypes, shapes and order.
absl::Status ParamsCommand(bool to_npz, bool from_npz, const std::string& in,
                           const std::string& out);

// Whether `path` starts as a parameter file does (param_io.h).
absl::StatusOr<bool> IsParameterFile(const std::string& path);

// Prints each tensor of the parameter file: name, dtype, shape, elements
// and the CRC-32 of its data (zlib's, as Python's zlib.crc32 gives for
// the array's bytes), then the total.
absl::Status ParamsInfoCommand(const std::string& path);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_PARAMS_COMMAND_H_
