// Which scopeflow ops each ONNX op the importer converts becomes, for the
// op reference (scopeflow ops, docs/OPS.md). The converters emit ops as
// they convert, with choices that depend on the node (a pool's rank, the
// opset), so the table is written down beside them and onnx_op_map_test
// keeps it in step: its ONNX ops are exactly those with a converter, and
// its scopeflow ops are registered.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_ONNX_OP_MAP_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_ONNX_OP_MAP_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace scopeflow {
namespace onnx_import {

// (ONNX op type, the scopeflow op types it imports as), sorted by ONNX op
// type. Helper ops a conversion adds around the main ones (reshapes of
// operands, casts) are left out; an empty list means the node becomes no
// op (a constant folded into a parameter).
const std::vector<std::pair<std::string, std::vector<std::string>>>&
OnnxImportTable();

// The ONNX op types the table lists, and those the importer has a
// converter for (which must be the same), sorted.
std::vector<std::string> ConvertibleOnnxOps();
std::vector<std::string> OnnxOpsWithConverter();

// The ONNX op types that import as scopeflow op `type`, sorted.
std::vector<std::string> OnnxOpsImportedAs(absl::string_view type);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_ONNX_OP_MAP_H_
