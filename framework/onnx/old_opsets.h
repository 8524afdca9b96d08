// Which nodes of a model older than opset 7 the importer converts.
//
// The converters implement each op per its definition at opsets 7 and
// later. A model of opset 1 to 6 uses the definition in effect at its
// opset; where that is the definition still in effect at opset 7 (the op
// has no version between the model's opset and 7), the node means what a
// converter implements and converts. Otherwise (Relu-1's consumed_inputs,
// Add-1's broadcast attribute, Reshape-1's shape attribute, ...) the node
// is refused, naming both versions. Stateless; thread-safe.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_OLD_OPSETS_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_OLD_OPSETS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace scopeflow {
namespace onnx_import {

// The oldest default-domain opset a model may import; from kMinOnnxOpset
// (framework/onnx/onnx_importer.h) on, every converter applies.
inline constexpr int64_t kOldestOnnxOpset = 1;

// OK when `op_type` at `opset` means what it means at opset 7 (always for
// opset >= 7); Unimplemented otherwise, saying which versions differ.
absl::Status CheckOldOpset(const std::string& op_type, int64_t opset);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_OLD_OPSETS_H_
