// Converting the subgraphs of ONNX control-flow nodes (If's branches,
// Loop's and Scan's bodies) into blocks of the net. Internal to
// framework/onnx.
//
// A subgraph's nodes become the ops of a new block, converted by the same
// converters as the model's graph, through a nested GraphState that sees
// every value of the graphs enclosing it by name (ONNX's outer-scope
// references; the block reads them as enclosing variables, which its op
// lists among its inputs, see OuterReads). The subgraph's initializers and
// Constant nodes become parameters of block 0, which every block sees, and
// control flow nested in it adds blocks whose parent is its block.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_SUBGRAPH_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_SUBGRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/onnx/import_context.h"
#include "proto/framework.pb.h"
#include "proto/onnx.pb.h"

namespace scopeflow {
namespace onnx_import {

// How one input of a subgraph gets its value in the block.
struct SubgraphInput {
  // What the op gives it.
  VarInfo info;
  // Empty: the block declares the input in its vars and its op feeds it
  // (recurrent's step inputs and previous states). Otherwise the enclosing
  // variable the block copies it from as it starts (a while loop's
  // carried variables, which the body reads by their own names).
  std::string source;
};

// A converted subgraph. The net owns the block.
struct Subgraph {
  int32_t index = -1;
  BlockDef* block = nullptr;
  // Per graph output: the block's variable holding it, which an op of the
  // block writes (an output that is an input, a constant or an enclosing
  // value is copied into a fresh variable), and what inference knows of it.
  std::vector<std::string> outputs;
  std::vector<VarInfo> output_infos;
};

// The node's graph attribute `name` (marked read). InvalidArgument if it is
// absent or not a graph.
absl::StatusOr<const onnx::GraphProto*> GraphAttr(NodeContext& context,
                                                  absl::string_view name);

// Converts `graph`, node `context`'s attribute `attr`, into a new block
// whose parent is the block the node's ops go to; `inputs` gives each
// graph input (the caller checks their count). Errors name the attribute
// and the failing node of the subgraph, with the converter's status code;
// but where the block `may_not_run` (an If's branch), what a converter
// finds wrong with a node's inputs is Unimplemented, as it may hold only
// for inputs that take the other branch.
absl::StatusOr<Subgraph> ConvertSubgraph(
    NodeContext& context, absl::string_view attr,
    const onnx::GraphProto& graph, const std::vector<SubgraphInput>& inputs,
    bool may_not_run = false);

// Appends `op` to `block` as it is: the net's Prepare checks it.
void AppendOp(BlockDef& block, const OpBuilder& op);

// The enclosing variables `block`'s ops read (each once, in order of first
// read): names neither declared in its vars nor written by an earlier op
// of it, leaving out `except` (the op's outputs, which it may read too).
std::vector<std::string> OuterReads(const BlockDef& block,
                                    const std::vector<std::string>& except);

// Adds every value name of `graph` and its subgraphs to `names`.
void CollectValueNames(const onnx::GraphProto& graph,
                       absl::flat_hash_set<std::string>& names);

// What is known of a variable that holds either `a` or `b`: the dtype if
// both agree, and each dimension both agree on (-1 elsewhere; no dims if
// the ranks differ).
VarInfo JoinInfos(const VarInfo& a, const VarInfo& b);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_SUBGRAPH_H_
