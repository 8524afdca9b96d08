// The ONNX checker's single-static-assignment rule: every value name is
// defined once (a graph input, an initializer or a node output), so a
// model means one thing rather than whichever writer an importer happens
// to keep.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_SINGLE_ASSIGNMENT_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_SINGLE_ASSIGNMENT_H_

#include "absl/status/status.h"
#include "proto/onnx.pb.h"

namespace scopeflow {
namespace onnx_import {

// InvalidArgument naming the value and both of its writers unless `graph`
// and its subgraphs are in SSA form: graph inputs distinct, initializers
// distinct (one may also be listed as an input, as IR version < 4 does),
// and no node output (ignoring the empty names of omitted optional
// outputs) repeating a name defined before it in the graph or, for a
// subgraph, in an enclosing graph.
absl::Status CheckSingleAssignment(const onnx::GraphProto& graph);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_SINGLE_ASSIGNMENT_H_
