// scopeflow import-onnx: converts an ONNX model into a scopeflow net and a
// parameter file. The command-line wiring lives in scopeflow_main.cc.
#ifndef SCOPEFLOW_TOOLS_IMPORT_ONNX_COMMAND_H_
#define SCOPEFLOW_TOOLS_IMPORT_ONNX_COMMAND_H_

#include <string>

#include "absl/status/status.h"

namespace scopeflow {

// Imports the ONNX model at `model` (framework/onnx/onnx_importer.h),
// writes the net to `out_net` (text format for names ending in ".pbtxt" or
// ".txt", binary otherwise) and its parameters to `out_params` (a
// SaveParams file), and prints what it wrote: the ops, the parameters and
// the inputs to feed. `out_params` may be empty only if the model has no
// parameters. `rewrite`: import GELU and layer norm written as chains of
// nodes as one op each, and fold the ops computing constants
// (ImportOptions::fuse_decomposed, fold_constants). On an unsupported model
// the error lists every node that cannot be converted.
absl::Status ImportOnnxCommand(const std::string& model,
                               const std::string& out_net,
                               const std::string& out_params,
                               bool rewrite = true);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_IMPORT_ONNX_COMMAND_H_
