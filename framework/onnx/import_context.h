// The converters' side of the ONNX importer: what one node's converter
// sees of the graph (NodeContext) and how it emits scopeflow ops
// (OpBuilder). Internal to framework/onnx.
//
// A converter reads the node's inputs, constant inputs and attributes
// through the NodeContext and emits ops. Each emitted op is checked at once
// as the executor's Prepare would (slots, attributes with their defaults
// and checks, shape inference, a CPU kernel for the inferred dtype), so
// that later ops of the node, and later nodes, see the inferred dtype and
// shape of every variable. Nothing reaches the net unless the whole node
// converts: the importer commits a node's ops, parameters and variables
// only when its converter succeeds and it has read every attribute the
// node carries (an attribute no converter read would be silently ignored).
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_IMPORT_CONTEXT_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_IMPORT_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/onnx/constant_folding.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "proto/framework.pb.h"
#include "proto/onnx.pb.h"

namespace scopeflow {
namespace onnx_import {

// An OpDef under construction:
//   OpBuilder("matmul").In("X", a).In("Y", b).Out("Out", c)
//       .Attr("transpose_y", true)
// Attribute values take the AttrDef field of their C++ type: int32_t -> i,
// int64_t -> i64, float, bool, std::string, and vectors of int32_t, int64_t
// and float.
class OpBuilder {
 public:
  explicit OpBuilder(std::string type);

  OpBuilder& In(const std::string& slot, const std::string& var);
  OpBuilder& In(const std::string& slot, const std::vector<std::string>& vars);
  OpBuilder& Out(const std::string& slot, const std::string& var);
  OpBuilder& Out(const std::string& slot, const std::vector<std::string>& vars);

  OpBuilder& Attr(const std::string& name, int32_t value);
  OpBuilder& Attr(const std::string& name, int64_t value);
  OpBuilder& Attr(const std::string& name, float value);
  OpBuilder& Attr(const std::string& name, bool value);
  OpBuilder& Attr(const std::string& name, const std::string& value);
  // A string literal would otherwise convert to bool, not std::string.
  OpBuilder& Attr(const std::string& name, const char* value) {
    return Attr(name, std::string(value));
  }
  OpBuilder& Attr(const std::string& name, const std::vector<int32_t>& value);
  OpBuilder& Attr(const std::string& name, const std::vector<int64_t>& value);
  OpBuilder& Attr(const std::string& name, const std::vector<float>& value);
  OpBuilder& Attr(const std::string& name,
                  const std::vector<std::string>& value);
  // An attribute naming a block of the net (a control-flow op's body).
  OpBuilder& BlockAttr(const std::string& name, int32_t block_index);

  const OpDef& def() const { return def_; }

 private:
  AttrDef* AddAttr(const std::string& name);

  OpDef def_;
};

// A sequence value the import tracks. ONNX sequences have no scopeflow
// equivalent, but torch's list appended to in a scripted loop exports as
// an empty sequence a Loop appends one tensor to per iteration: a scan
// output (framework/onnx/convert_sequence.cc).
struct SequenceValue {
  DataType dtype = DATA_TYPE_UNSPECIFIED;
  // The variable stacking its elements along a new axis 0, or "" while the
  // sequence is empty.
  std::string stacked;
};

// What the whole import knows so far. The importer owns it; NodeContext
// reads it and commits one node's results into it.
struct GraphState {
  explicit GraphState(const ImportOptions& options) : options(options) {}

  const ImportOptions& options;
  // The model's default-domain opset.
  int64_t opset = 0;
  // Variables that exist at run time (fed inputs, op outputs, parameters)
  // and what inference knows of them.
  absl::flat_hash_map<std::string, VarInfo> infos;
  // Variables written by a node that failed to convert: their dtype and
  // shape are unknown, and ops reading them are not checked further (the
  // failure is reported once, at the node that caused it).
  absl::flat_hash_set<std::string> tainted;
  // Values known at import time: initializers, Constant node outputs and
  // ImportOptions::constant_inputs. A constant becomes a parameter (in
  // `infos` too) once an op reads it at run time.
  absl::flat_hash_map<std::string, Tensor> constants;
  // Initializers that could not be decoded, with why; reported by the nodes
  // that use them.
  absl::flat_hash_map<std::string, absl::Status> bad_constants;
  // Graph inputs that are fed.
  absl::flat_hash_set<std::string> fed_inputs;
  // Every name in use: the model's value names and the temporaries made.
  absl::flat_hash_set<std::string> used_names;
  // Types the model declares for values (value_info, graph outputs),
  // used where inference knows less.
  absl::flat_hash_map<std::string, VarInfo> declared;
  // The net, and its block 0, built up node by node. Control-flow ops'
  // bodies are appended to the net as further blocks.
  NetDef* net = nullptr;
  BlockDef* block = nullptr;
  std::vector<NamedTensor> params;
  // What is known of run-time dims vectors (constant_folding.h).
  DimsValues dims_values;
  // Fed graph inputs that a node needed as a constant, in the order found.
  std::vector<std::string> inputs_needed_as_constants;
  // Sequence values (by ONNX name), which no variable holds.
  absl::flat_hash_map<std::string, SequenceValue> sequences;
  // For a control-flow node's subgraph (framework/onnx/subgraph.h): the
  // state of the graph it is nested in, which outlives this one; null for
  // the model's graph. Parameters are declared in the outermost state's
  // block 0, which every block sees.
  GraphState* outer = nullptr;
  // The index of `block` in the net.
  int32_t block_index = 0;
};

// The VarInfo of a tensor: its dtype and dims, fully known.
VarInfo InfoOf(const Tensor& tensor);

// The VarInfo an ONNX type declares: dtype (UNSPECIFIED if it has none
// scopeflow knows) and dims (-1 for symbolic ones; no dims if the type has
// no shape).
VarInfo InfoFromOnnxType(const onnx::TypeProto& type);

// Copies the names an ONNX type gives its symbolic dimensions (dim_param)
// into `var`'s dim_names, "" for the others; none where no dimension has
// a name.
void SetDimNames(const onnx::TypeProto& type, VarDef& var);

// Declares `name` as a persistable variable holding `value` in block 0 and
// adds `value` to the parameters (of the outermost state; every state from
// `state` outwards learns its VarInfo).
void DeclareParam(GraphState& state, const std::string& name,
                  const Tensor& value);

// One node's converter's view of the graph. See the file comment.
class NodeContext {
 public:
  NodeContext(GraphState& state, const onnx::NodeProto& node);

  NodeContext(const NodeContext&) = delete;
  NodeContext& operator=(const NodeContext&) = delete;

  const onnx::NodeProto& node() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  int64_t opset() const { return state_.opset; }
  const ImportOptions& options() const { return state_.options; }

  // --- Inputs. An input is absent if beyond the node's list or empty.
  int InputCount() const { return node_.input_size(); }
  bool HasInput(int i) const;
  // The ONNX value name of input i ("" if absent).
  const std::string& InputName(int i) const;
  // The variable an op reads input i from at run time; a constant becomes
  // a parameter. InvalidArgument if the input is absent.
  absl::StatusOr<std::string> Input(int i);
  // What inference knows of input i (for constants: exactly).
  VarInfo InputInfo(int i) const;
  bool IsConstant(int i) const;
  // Input i's value at import time. Unimplemented if it is computed at run
  // time or fed, saying that it must be a constant because `why` (e.g.
  // "scopeflow reshape takes the shape as an attribute").
  absl::StatusOr<const Tensor*> ConstantInput(int i, absl::string_view why);
  // OK if each of `inputs` that is present is a constant; otherwise one
  // Unimplemented error naming every one that is not (and why it must be),
  // so that a node needing several constants reports them all at once.
  absl::Status RequireConstants(const std::vector<int>& inputs,
                                absl::string_view why);
  // A constant INT32 or INT64 input's elements.
  absl::StatusOr<std::vector<int64_t>> ConstantInts(int i,
                                                    absl::string_view why);
  // A constant one-element input's value.
  absl::StatusOr<double> ConstantScalar(int i, absl::string_view why);

  // --- Outputs. An output is absent if beyond the node's list or empty.
  int OutputCount() const { return node_.output_size(); }
  bool HasOutput(int i) const;
  const std::string& Output(int i) const;
  // Makes output i a constant (a Constant node): no op is emitted.
  void SetConstantOutput(int i, Tensor value);
  // A fresh variable (named after `hint`) holding `value`: a constant the
  // conversion makes, such as a fill value, which becomes a parameter for
  // the ops that read it.
  std::string AddConstant(absl::string_view hint, Tensor value);

  // The sequence value `name` holds, or null if it is none the import
  // tracks.
  const SequenceValue* Sequence(const std::string& name) const;
  // Makes output i a tracked sequence: no op writes it.
  void SetSequenceOutput(int i, SequenceValue value);

  // --- Attributes. Each accessor marks the attribute as handled; the
  // importer rejects a node that carries an attribute no accessor read.
  // Absent attributes give `default_value`; without one they are an
  // InvalidArgument error, as is an attribute of another type.
  bool HasAttr(absl::string_view name) const;
  absl::StatusOr<int64_t> IntAttr(absl::string_view name,
                                  std::optional<int64_t> default_value = {});
  absl::StatusOr<float> FloatAttr(absl::string_view name,
                                  std::optional<float> default_value = {});
  absl::StatusOr<std::string> StringAttr(
      absl::string_view name, std::optional<std::string> default_value = {});
  absl::StatusOr<std::vector<int64_t>> IntsAttr(
      absl::string_view name,
      std::optional<std::vector<int64_t>> default_value = {});
  absl::StatusOr<std::vector<float>> FloatsAttr(
      absl::string_view name,
      std::optional<std::vector<float>> default_value = {});
  // The attribute itself, or null if absent.
  const onnx::AttributeProto* Attr(absl::string_view name);
  // Marks an attribute handled that the conversion does not need (e.g.
  // BatchNormalization's momentum, used in training only).
  void IgnoreAttr(absl::string_view name);
  // Attributes the node carries that nothing read, sorted.
  std::vector<std::string> UnreadAttrs() const;

  // --- Emitting.
  // A fresh variable name for an intermediate result, derived from the
  // node's first output and `hint`.
  std::string Temp(absl::string_view hint);
  // Checks the op (see the file comment) and adds it to the node's ops.
  // Unimplemented if scopeflow's op rejects it (its inference or attribute
  // checks, or no CPU kernel for the dtype); Internal for a malformed op
  // (unknown op type, slot or attribute: a converter bug).
  absl::Status Emit(const OpBuilder& op);
  // Adds `block` as a body of one of this node's control-flow ops (its
  // parent is block 0) and returns the index it will have in the net; the
  // block is added at Commit. Its ops are checked when the net is prepared,
  // not here.
  int32_t AddBlock(BlockDef block);
  // Adds an empty block to the net at once (its parent is the block this
  // node's ops go to) and returns its index, for a body that is filled in
  // while nested nodes add blocks of their own (ONNX subgraphs). The net
  // owns it; a failed import discards the whole net.
  int32_t ReserveBlock();
  // Overrides what inference knows of one of this node's results (a
  // control-flow op's outputs, which its op's inference leaves unknown).
  void SetInfo(const std::string& var, VarInfo info);
  // SetInfo, and declares the variable so in its block's vars, for what
  // Prepare cannot infer either (the stacked outputs of loops, which only
  // the body's Prepare knows).
  void Declare(const std::string& var, VarInfo info);
  // The import's state, for converting a subgraph nested in this node.
  GraphState& graph_state() { return state_; }
  // What inference knows of a variable (inputs, temporaries, outputs).
  VarInfo Info(const std::string& var) const;

  // --- Results, for the importer once the converter succeeded.
  // Checks that every output is produced, then adds the node's ops,
  // parameters and variables to the graph.
  absl::Status Commit();
  // Marks the node's outputs as unknown after a failure.
  void Taint();

 private:
  // Whether an op reading `var` would find it: a run-time variable, a
  // constant or one of this node's results.
  bool Known(const std::string& var) const;
  bool Tainted(const std::string& var) const;
  // Folds the node's ops whose inputs are all constants (constant_folding.h)
  // into constants, and drops the parameters only they read.
  absl::Status FoldConstantOps();
  const onnx::AttributeProto* FindAttr(absl::string_view name) const;
  absl::StatusOr<const onnx::AttributeProto*> TypedAttr(
      absl::string_view name, onnx::AttributeProto::AttributeType type);

  GraphState& state_;
  const onnx::NodeProto& node_;
  // What InputName returns for an absent input.
  const std::string empty_;
  absl::flat_hash_set<std::string> read_attrs_;
  // This node's results, committed by Commit.
  std::vector<OpDef> ops_;
  absl::flat_hash_map<std::string, VarInfo> infos_;
  absl::flat_hash_set<std::string> tainted_;
  std::vector<std::string> new_params_;
  absl::flat_hash_map<std::string, Tensor> new_constants_;
  std::vector<BlockDef> new_blocks_;
  std::vector<VarDef> new_vars_;
  absl::flat_hash_map<std::string, SequenceValue> new_sequences_;
};

// Converts one node through `context` (which commits nothing unless this
// succeeds): checks its domain and inputs, runs its converter, rejects
// attributes nothing read, and commits.
absl::Status ConvertNode(const onnx::NodeProto& node, NodeContext& context);

// Helpers for converters.

// An Unimplemented error: valid ONNX that scopeflow cannot express.
absl::Status Unsupported(absl::string_view reason);

// `value` as an int32 attribute value; Unimplemented naming `what` if it
// does not fit.
absl::StatusOr<int32_t> ToInt32(int64_t value, absl::string_view what);
absl::StatusOr<std::vector<int32_t>> ToInt32s(
    const std::vector<int64_t>& values, absl::string_view what);

// `values` clamped into int32's range: for slice bounds, where ONNX writes
// INT64_MAX for "to the end" and any bound beyond a dimension acts as the
// dimension's end.
std::vector<int32_t> ClampToInt32(const std::vector<int64_t>& values);

// "[1, 2, 3]".
std::string IntsToString(const std::vector<int64_t>& values);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_IMPORT_CONTEXT_H_
