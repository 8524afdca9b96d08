// Importing ONNX models (onnx.ModelProto, proto/onnx.proto) as scopeflow
// nets.
//
// The graph becomes block 0 of a NetDef:
// - each graph input becomes a declared, fed variable with its dtype and
//   shape (-1 for symbolic or unknown dimensions);
// - each initializer, and each Constant node's value, becomes a
//   persistable variable (a parameter) when a converted op reads it at run
//   time; its tensor is returned in ImportedModel::params, to be saved with
//   SaveImportedParams (a SaveParams file) or placed in a scope directly;
// - each node becomes one or more scopeflow ops with the node's attributes
//   mapped and ONNX's defaults applied. Inputs that scopeflow ops take as
//   attributes (Reshape's shape, Slice's starts, the axes of Squeeze,
//   Unsqueeze, Split and the reductions in their newer opsets, Clip's
//   bounds, Pad's pads, ...) must be constants: initializers or Constant
//   node outputs, folded into the attributes.
//
// Every converted op is checked as the executor's Prepare would check it
// (slots, attributes, shape inference, a CPU kernel for the inferred
// dtype), so a model that imports is one scopeflow can run. When some nodes
// cannot be converted, the import fails with one error listing every such
// node (index, name, op type, opset and the reason), not just the first;
// nodes that fail only downstream of a listed one (reading a value it left
// unknown) are counted, not listed.
//
// Supported: the default ONNX domain at opsets 7 to 27 (the conversions
// follow each operator's definition at the model's opset: Upsample, Slice,
// Pad and Clip attributes, BatchNormalization's spatial, Softmax's 2-D
// coercion, ...). Tensors kept in external files (data_location EXTERNAL)
// are read by ReadOnnxModel, or by LoadOnnxExternalData for a model
// parsed otherwise.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_ONNX_IMPORTER_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_ONNX_IMPORTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "proto/framework.pb.h"
#include "proto/onnx.pb.h"

namespace scopeflow {

// The default-domain opsets the importer converts every op of per its
// definition there. Models of opsets 1 to 6 import node by node: ops
// unchanged since the model's opset convert (framework/onnx/old_opsets.h).
inline constexpr int64_t kMinOnnxOpset = 7;
inline constexpr int64_t kMaxOnnxOpset = 27;

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

struct ImportedModel {
  // One block; format_version set, named after the graph.
  NetDef net;
  // The variables to feed, in graph-input order (graph inputs that are
  // initializers or constant_inputs are parameters instead). A graph input
  // that no converted op reads (Dropout's ratio in inference mode, say) is
  // listed but is no input of the prepared net: feed those in
  // PreparedNet::input_names().
  std::vector<std::string> inputs;
  // The variables holding the graph outputs, in graph-output order.
  std::vector<std::string> outputs;
  // The persistable variables' tensors (on the CPU), in the order the net
  // declares them.
  std::vector<NamedTensor> params;
};

struct ImportOptions {
  // Graph inputs to treat as constants with these values instead of feeding
  // them, e.g. a shape or axes tensor that a test feeds as an input but
  // that scopeflow needs at import time. Each name must be a graph input.
  absl::flat_hash_map<std::string, Tensor> constant_inputs;
  // Import GELU and layer normalization written as chains of elementwise
  // nodes (as torch.onnx writes them) as gelu and layer_norm ops
  // (fuse_decomposed.h); false imports each node as written.
  bool fuse_decomposed = true;
  // Evaluate at import the ops whose inputs are all known then
  // (initializers, Constant outputs, dims that inference knows), keeping
  // their results as constants, then drop the pure ops whose results
  // nothing reads (constant_folding.h); false emits every node's ops. A
  // net to be trained with respect to the model's initializers wants
  // false: folded, the weights derived from them (a transposed or sliced
  // weight) become the parameters in their place.
  bool fold_constants = true;
  // Whether the recurrent ops that LSTM, GRU and RNN become keep each
  // step's scope (their StepScopes output), which differentiating the net
  // (AppendBackward) needs. Off, a run holds one step's temporaries at a
  // time and runs faster; on, it holds every step's until the run ends.
  bool keep_recurrent_step_scopes = false;
};

// One node (or, with node_index -1, a graph input or output) that could not
// be converted.
struct ImportProblem {
  int node_index = -1;
  std::string node_name;
  std::string op_type;
  int64_t opset = 0;
  // kUnimplemented: valid ONNX that scopeflow cannot express (a missing op,
  // attribute value or dtype); other codes: a malformed model.
  absl::StatusCode code = absl::StatusCode::kUnimplemented;
  std::string reason;
};

// What went wrong, for callers that act on it (the conformance runner).
struct ImportReport {
  // The problems the error lists.
  std::vector<ImportProblem> problems;
  // Nodes that a converter failed on (Unimplemented) while they read a
  // value an earlier problem left unknown (a failed node's output, or what
  // was computed from one): the failure is most likely a consequence, e.g.
  // the rank the converter needs is unknown, so the error counts them
  // without listing them. A malformed node (another code) or one that no
  // converter handles is listed in `problems` wherever it lies.
  std::vector<ImportProblem> downstream;
  // Graph inputs that some node needs as a constant (they could be given
  // through ImportOptions::constant_inputs), in graph-input order.
  std::vector<std::string> inputs_needed_as_constants;
};

// Converts `model`. On failure the error lists every problem, one per
// line; its code is Unimplemented when each problem is (the model is valid
// but needs what scopeflow lacks), InvalidArgument otherwise. `report`, if
// given, receives the problems one by one.
absl::StatusOr<ImportedModel> ImportOnnx(const onnx::ModelProto& model,
                                         const ImportOptions& options = {},
                                         ImportReport* report = nullptr);

// Parses a binary .onnx file and loads its external data (see
// LoadOnnxExternalData). Errors name the path.
absl::StatusOr<onnx::ModelProto> ReadOnnxModel(const std::string& path);

// Reads the data of every tensor of `model` stored in an external file
// (data_location EXTERNAL: initializers and tensor attributes, subgraphs
// included) into its raw_data, so that ImportOnnx can decode it. Each
// file's `location` is relative to the directory of `model_path`, where the
// model was read from; `offset` and `length` (optional) select bytes of it.
// A location that is absolute or leads outside that directory (through
// "..", or a symbolic link to elsewhere than beside the model file's real
// path) is refused (InvalidArgument), as is a range beyond the file's end;
// errors name the tensor and the file.
absl::Status LoadOnnxExternalData(onnx::ModelProto& model,
                                  const std::string& model_path);

// Parses a binary onnx.TensorProto file (a test case's input_N.pb) into a
// CPU tensor.
absl::StatusOr<Tensor> ReadOnnxTensor(const std::string& path);

// Parses a binary onnx.OptionalProto file (the input_N.pb of an optional
// tensor) into its CPU tensor, or nullopt for an empty optional;
// Unimplemented for an optional of another kind of value (a sequence).
absl::StatusOr<std::optional<Tensor>> ReadOnnxOptionalTensor(
    const std::string& path);

// Stores the model's parameters as local variables of `scope`, sharing
// their buffers, so that the net can run against it.
absl::Status AddParamsToScope(const ImportedModel& model, Scope& scope);

// Writes the model's parameters to a parameter file (framework/param_io.h).
absl::Status SaveImportedParams(const ImportedModel& model,
                                const std::string& path);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_ONNX_IMPORTER_H_
