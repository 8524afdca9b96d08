#include "framework/onnx/subgraph.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/fuse_decomposed.h"
#include "framework/onnx/onnx_tensor.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// Whether an op of `block` writes `name`.
bool Written(const BlockDef& block, const std::string& name) {
  for (const OpDef& op : block.ops()) {
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        if (var == name) return true;
      }
    }
  }
  return false;
}

// The subgraph's state: everything the enclosing graph knows, plus the
// subgraph's own initializers and declarations.
absl::Status InitState(GraphState& outer, const onnx::GraphProto& graph,
                       GraphState& sub) {
  sub.opset = outer.opset;
  sub.net = outer.net;
  sub.outer = &outer;
  sub.infos = outer.infos;
  sub.tainted = outer.tainted;
  sub.constants = outer.constants;
  sub.bad_constants = outer.bad_constants;
  sub.fed_inputs = outer.fed_inputs;
  sub.used_names = outer.used_names;
  sub.declared = outer.declared;
  sub.sequences = outer.sequences;
  CollectValueNames(graph, sub.used_names);
  for (const onnx::ValueInfoProto& value : graph.value_info()) {
    sub.declared[value.name()] = InfoFromOnnxType(value.type());
  }
  for (const onnx::ValueInfoProto& value : graph.output()) {
    sub.declared[value.name()] = InfoFromOnnxType(value.type());
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    SF_CHECK(!tensor.name().empty(), "an initializer has no name");
    absl::StatusOr<Tensor> value = TensorFromOnnx(tensor);
    if (value.ok()) {
      sub.constants[tensor.name()] = *std::move(value);
    } else {
      sub.bad_constants[tensor.name()] = value.status();
    }
  }
  // ONNX forbids a subgraph to redefine a value of an enclosing graph; the
  // block would write the enclosing variable, not a local one.
  auto check_new = [&](const std::string& name) -> absl::Status {
    SF_CHECK(name.empty() || !outer.infos.contains(name) ||
                 outer.constants.contains(name),
             "value \"%s\" is defined both in the subgraph and in an "
             "enclosing graph (ONNX names a value once)",
             name);
    return absl::OkStatus();
  };
  for (const onnx::ValueInfoProto& value : graph.input()) {
    SF_RETURN_IF_ERROR(check_new(value.name()));
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& name : node.output()) {
      SF_RETURN_IF_ERROR(check_new(name));
    }
  }
  return absl::OkStatus();
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace

absl::StatusOr<const onnx::GraphProto*> GraphAttr(NodeContext& context,
                                                  absl::string_view name) {
  const onnx::AttributeProto* attr = context.Attr(name);
  SF_CHECK(attr != nullptr, "missing required attribute \"%s\" (a graph)",
           name);
  SF_CHECK(attr->has_g() && (attr->type() == onnx::AttributeProto::GRAPH ||
                             attr->type() == onnx::AttributeProto::UNDEFINED),
           "attribute \"%s\" is not a graph", name);
  return &attr->g();
}

absl::StatusOr<Subgraph> ConvertSubgraph(
    NodeContext& context, absl::string_view attr,
    const onnx::GraphProto& graph, const std::vector<SubgraphInput>& inputs,
    bool may_not_run) {
  GraphState& outer = context.graph_state();
  SF_CHECK(graph.input_size() == static_cast<int>(inputs.size()),
           "attribute \"%s\": the subgraph has %d inputs, expected %d", attr,
           graph.input_size(), inputs.size());
  GraphState sub(outer.options);
  absl::Status init = InitState(outer, graph, sub);
  if (!init.ok()) return Prefixed(absl::StrCat("attribute \"", attr, "\""), init);
  Subgraph result;
  result.index = context.ReserveBlock();
  result.block = outer.net->mutable_blocks(result.index);
  sub.block = result.block;
  sub.block_index = result.index;

  for (int i = 0; i < graph.input_size(); ++i) {
    const onnx::ValueInfoProto& value = graph.input(i);
    VarInfo info = inputs[i].info;
    if (info.dtype == DATA_TYPE_UNSPECIFIED) {
      info = InfoFromOnnxType(value.type());
    }
    if (inputs[i].source.empty()) {
      VarDef* var = result.block->add_vars();
      var->set_name(value.name());
      var->set_kind(VAR_KIND_DENSE_TENSOR);
      var->set_dtype(info.dtype);
      for (int64_t d : info.dims) var->add_shape(d);
    } else {
      AppendOp(*result.block, OpBuilder("assign")
                                  .In("X", inputs[i].source)
                                  .Out("Out", value.name()));
    }
    sub.infos[value.name()] = info;
  }

  FusedNodes nodes;
  if (outer.options.fuse_decomposed) {
    nodes = FuseDecomposedNodes(graph);
  } else {
    nodes.nodes.assign(graph.node().begin(), graph.node().end());
    for (int i = 0; i < graph.node_size(); ++i) nodes.source.push_back(i);
  }
  for (size_t n = 0; n < nodes.nodes.size(); ++n) {
    const onnx::NodeProto& node = nodes.nodes[n];
    const std::string name =
        node.name().empty() ? "" : absl::StrFormat(" \"%s\"", node.name());
    const std::string where = absl::StrFormat(
        "attribute \"%s\": node %d%s (%s)", attr, nodes.source[n], name,
        node.op_type());
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string& input = node.input(i);
      SF_CHECK(input.empty() || sub.infos.contains(input) ||
                   sub.constants.contains(input) ||
                   sub.bad_constants.contains(input) ||
                   sub.tainted.contains(input) ||
                   sub.sequences.contains(input),
               "%s: input %d (\"%s\") is no input or initializer of the "
               "subgraph, nor the output of an earlier node, nor a value of "
               "an enclosing graph",
               where, i, input);
    }
    NodeContext node_context(sub, node);
    absl::Status status = ConvertNode(node, node_context);
    if (!status.ok()) {
      if (may_not_run && status.code() == absl::StatusCode::kInvalidArgument) {
        // What a converter finds wrong with a node (a shape it cannot
        // split, say) may hold only where the branch never runs.
        status = Unsupported(absl::StrCat(
            status.message(),
            " (scopeflow converts both branches of an If, also one that "
            "never runs for the model's inputs)"));
      }
      return Prefixed(where, status);
    }
  }
  // The temporaries the subgraph made are taken in the enclosing graph too.
  outer.used_names.insert(sub.used_names.begin(), sub.used_names.end());
  for (const std::string& name : sub.inputs_needed_as_constants) {
    outer.inputs_needed_as_constants.push_back(name);
  }

  for (int i = 0; i < graph.output_size(); ++i) {
    const std::string& name = graph.output(i).name();
    auto bad = sub.bad_constants.find(name);
    if (bad != sub.bad_constants.end()) {
      return Prefixed(absl::StrFormat("attribute \"%s\": output %d (\"%s\")",
                                      attr, i, name),
                      bad->second);
    }
    if (sub.tainted.contains(name)) {
      return Unsupported(absl::StrFormat(
          "attribute \"%s\": output %d (\"%s\") depends on values that "
          "an earlier problem left unknown",
          attr, i, name));
    }
    if (!sub.infos.contains(name)) {
      auto constant = sub.constants.find(name);
      SF_CHECK(constant != sub.constants.end(),
               "attribute \"%s\": output %d (\"%s\") is produced by no node, "
               "initializer or input of the subgraph, nor a value of an "
               "enclosing graph",
               attr, i, name);
      DeclareParam(sub, name, constant->second);
    }
    VarInfo info = sub.infos.at(name);
    std::string var = name;
    if (!Written(*result.block, name)) {
      var = context.Temp(absl::StrCat(attr, "_out", i));
      AppendOp(*result.block, OpBuilder("assign").In("X", name).Out("Out", var));
    }
    result.outputs.push_back(var);
    result.output_infos.push_back(info);
  }
  return result;
}

void AppendOp(BlockDef& block, const OpBuilder& op) {
  *block.add_ops() = op.def();
}

std::vector<std::string> OuterReads(const BlockDef& block,
                                    const std::vector<std::string>& except) {
  absl::flat_hash_set<std::string> local(except.begin(), except.end());
  for (const VarDef& var : block.vars()) local.insert(var.name());
  std::vector<std::string> reads;
  absl::flat_hash_set<std::string> seen;
  for (const OpDef& op : block.ops()) {
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) {
        if (!local.contains(var) && seen.insert(var).second) {
          reads.push_back(var);
        }
      }
    }
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) local.insert(var);
    }
  }
  return reads;
}

void CollectValueNames(const onnx::GraphProto& graph,
                       absl::flat_hash_set<std::string>& names) {
  for (const onnx::ValueInfoProto& value : graph.input()) {
    names.insert(value.name());
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    names.insert(tensor.name());
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& name : node.input()) names.insert(name);
    for (const std::string& name : node.output()) names.insert(name);
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) CollectValueNames(attr.g(), names);
      for (const onnx::GraphProto& g : attr.graphs()) {
        CollectValueNames(g, names);
      }
    }
  }
}

VarInfo JoinInfos(const VarInfo& a, const VarInfo& b) {
  VarInfo joined;
  joined.dtype = a.dtype == b.dtype ? a.dtype : DATA_TYPE_UNSPECIFIED;
  if (!a.has_dims || !b.has_dims || a.dims.size() != b.dims.size()) {
    return joined;
  }
  joined.has_dims = true;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    joined.dims.push_back(a.dims[d] == b.dims[d] ? a.dims[d] : -1);
  }
  return joined;
}

}  // namespace onnx_import
}  // namespace scopeflow
