// Reading and writing nets (NetDef) in protobuf text and binary form.
#ifndef SCOPEFLOW_FRAMEWORK_NET_IO_H_
#define SCOPEFLOW_FRAMEWORK_NET_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// The NetDef.format_version this build reads and writes.
inline constexpr int kNetFormatVersion = 1;

// OK if `net` has format_version kNetFormatVersion; otherwise an error
// naming the version found and the one expected.
absl::Status CheckNetFormatVersion(const NetDef& net);

// Parses protobuf text format, then checks the version. Syntax errors name
// the line and column.
absl::StatusOr<NetDef> ParseNetText(absl::string_view text);

// Parses the binary wire format, then checks the version.
absl::StatusOr<NetDef> ParseNetBinary(absl::string_view bytes);

// Reads a net file: text format for names ending in ".pbtxt" or ".txt",
// binary otherwise. Errors name the path.
absl::StatusOr<NetDef> LoadNet(const std::string& path);

// Writes `net` (text or binary by the same rule as LoadNet) atomically.
absl::Status SaveNet(const NetDef& net, const std::string& path);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_NET_IO_H_
