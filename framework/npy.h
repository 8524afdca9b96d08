// Tensors in numpy's .npy format (version 1.0 to 3.0), the files numpy
// users already have for inputs and outputs.
#ifndef SCOPEFLOW_FRAMEWORK_NPY_H_
#define SCOPEFLOW_FRAMEWORK_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/tensor.h"

namespace scopeflow {

// Parses .npy bytes: little-endian float32/64/16, int32/64, uint8 and bool
// arrays in C order. Errors name what is wrong (bad magic, Fortran order,
// unsupported dtype, data shorter than the shape).
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes);
absl::StatusOr<Tensor> ReadNpy(const std::string& path);

// The .npy bytes of `tensor` (copied to the host first if needed).
absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor);
// Writes atomically (see WriteFileAtomically).
absl::Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_NPY_H_
