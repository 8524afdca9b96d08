// Named tensors in numpy's .npz format: a zip archive of one NAME.npy per
// tensor, what np.savez writes and np.load reads, so that parameters move
// between scopeflow and other tools.
//
// Writing stores each member uncompressed (as np.savez does); reading
// accepts stored and deflated members (np.savez_compressed), with zip64
// sizes and offsets, and checks each member's CRC-32.
#ifndef SCOPEFLOW_FRAMEWORK_NPZ_H_
#define SCOPEFLOW_FRAMEWORK_NPZ_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/tensor.h"

namespace scopeflow {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// The archive's tensors in the order of its central directory, named
// without the ".npy" suffix. Errors name the archive and the member.
absl::StatusOr<NamedTensors> ParseNpz(absl::string_view bytes,
                                      const std::string& what);
absl::StatusOr<NamedTensors> ReadNpz(const std::string& path);

// The .npz bytes of `tensors` (device tensors are copied to the host).
// Members over 4 GiB, or archives over 4 GiB, are refused (zip64 is read,
// not written).
absl::StatusOr<std::string> SerializeNpz(const NamedTensors& tensors);
// Writes atomically (see WriteFileAtomically).
absl::Status WriteNpz(const std::string& path, const NamedTensors& tensors);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_NPZ_H_
