// scopeflow info and scopeflow check.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "platform/status_macros.h"
#include "tools/commands.h"
#include "tools/params_command.h"

namespace scopeflow {
namespace {

std::string SlotsToString(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots) {
  std::string out;
  for (const OpSlot& slot : slots) {
    if (!out.empty()) out += ", ";
    out += slot.slot() + "=[" + absl::StrJoin(slot.vars(), ", ") + "]";
  }
  return out;
}

// "[batch, 3, 224, 224]": the declared dims, named ones by their names.
std::string DeclaredShapeString(const VarDef& var) {
  std::vector<std::string> dims;
  for (int d = 0; d < var.shape_size(); ++d) {
    const bool named =
        var.dim_names_size() == var.shape_size() && !var.dim_names(d).empty();
    dims.push_back(named ? var.dim_names(d) : absl::StrCat(var.shape(d)));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

}  // namespace

absl::Status InfoCommand(const std::string& net_path) {
  SF_ASSIGN_OR_RETURN(const bool params, IsParameterFile(net_path));
  if (params) return ParamsInfoCommand(net_path);
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(net_path));
  std::printf("net \"%s\" (format version %d): %d block(s)\n",
              net.name().c_str(), net.format_version(), net.blocks_size());
  for (int b = 0; b < net.blocks_size(); ++b) {
    const BlockDef& block = net.blocks(b);
    std::printf("block %d (parent %d): %d variable(s), %d op(s)\n", b,
                block.has_parent_idx() ? block.parent_idx() : -1,
                block.vars_size(), block.ops_size());
    for (const VarDef& var : block.vars()) {
      std::printf("  var %-20s %-8s %-12s%s\n", var.name().c_str(),
                  DataTypeName(var.dtype()).c_str(),
                  DeclaredShapeString(var).c_str(),
                  var.persistable() ? " persistable" : "");
    }
    for (int i = 0; i < block.ops_size(); ++i) {
      const OpDef& op = block.ops(i);
      std::printf("  op %d %s(%s) -> (%s)\n", i, op.type().c_str(),
                  SlotsToString(op.inputs()).c_str(),
                  SlotsToString(op.outputs()).c_str());
    }
  }
  return absl::OkStatus();
}

namespace {

// A Graphviz string literal (quotes and backslashes escaped).
std::string DotQuote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

namespace {

// Which block a name used in block `b` belongs to, as Prepare resolves it:
// `b` if declared there, else the nearest enclosing block that declares or
// writes it, else `b`.
class BlockNames {
 public:
  explicit BlockNames(const NetDef& net) : net_(net) {
    for (const BlockDef& block : net.blocks()) {
      declared_.emplace_back();
      defined_.emplace_back();
      for (const VarDef& var : block.vars()) {
        declared_.back().insert(var.name());
        defined_.back().insert(var.name());
      }
      for (const OpDef& op : block.ops()) {
        for (const OpSlot& slot : op.outputs()) {
          defined_.back().insert(slot.vars().begin(), slot.vars().end());
        }
      }
    }
  }

  int Owner(int b, const std::string& name) const {
    if (declared_[b].contains(name)) return b;
    for (int a = Parent(b); a >= 0; a = Parent(a)) {
      if (defined_[a].contains(name)) return Owner(a, name);
    }
    return b;
  }

  std::string Node(int b, const std::string& name) const {
    const int owner = Owner(b, name);
    return DotQuote(owner == 0 ? "var:" + name
                               : absl::StrCat("var:", owner, ":", name));
  }

 private:
  int Parent(int b) const {
    const BlockDef& block = net_.blocks(b);
    // Guard against malformed nets: a parent must come before its kids.
    if (b == 0 || !block.has_parent_idx() || block.parent_idx() >= b) {
      return -1;
    }
    return block.parent_idx();
  }

  const NetDef& net_;
  std::vector<absl::flat_hash_set<std::string>> declared_;
  std::vector<absl::flat_hash_set<std::string>> defined_;
};

std::string OpNode(int b, int i) {
  return DotQuote(b == 0 ? absl::StrCat("op:", i)
                         : absl::StrCat("op:", b, ":", i));
}

}  // namespace

// Block 0 at the top level; every other block as a cluster, its local
// variables inside it, a dashed edge from a control-flow op to its block.
absl::Status DotCommand(const std::string& net_path) {
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(net_path));
  SF_CHECK(net.blocks_size() > 0, "net \"%s\" has no blocks", net.name());
  const BlockNames names(net);
  std::printf("digraph %s {\n  rankdir=TB;\n  compound=true;\n",
              DotQuote(net.name()).c_str());
  for (int b = 0; b < net.blocks_size(); ++b) {
    const BlockDef& block = net.blocks(b);
    const std::string pad = b == 0 ? "  " : "    ";
    if (b > 0) {
      std::printf("  subgraph %s {\n    label=%s;\n    style=dashed;\n",
                  DotQuote(absl::StrCat("cluster_", b)).c_str(),
                  DotQuote(absl::StrCat("block ", b)).c_str());
    }
    for (const VarDef& var : block.vars()) {
      std::printf(
          "%s%s [shape=ellipse%s, label=%s];\n", pad.c_str(),
          names.Node(b, var.name()).c_str(),
          var.persistable() ? ", style=filled, fillcolor=lightgrey" : "",
          DotQuote(var.name()).c_str());
    }
    for (int i = 0; i < block.ops_size(); ++i) {
      const OpDef& op = block.ops(i);
      const std::string node = OpNode(b, i);
      std::printf("%s%s [shape=box, label=%s];\n", pad.c_str(), node.c_str(),
                  DotQuote(absl::StrCat(i, ": ", op.type())).c_str());
      for (const OpSlot& slot : op.inputs()) {
        for (const std::string& var : slot.vars()) {
          std::printf("%s%s -> %s [label=%s];\n", pad.c_str(),
                      names.Node(b, var).c_str(), node.c_str(),
                      DotQuote(slot.slot()).c_str());
        }
      }
      for (const OpSlot& slot : op.outputs()) {
        for (const std::string& var : slot.vars()) {
          std::printf("%s%s -> %s [label=%s];\n", pad.c_str(), node.c_str(),
                      names.Node(b, var).c_str(),
                      DotQuote(slot.slot()).c_str());
        }
      }
    }
    if (b > 0) std::printf("  }\n");
  }
  for (int b = 0; b < net.blocks_size(); ++b) {
    const BlockDef& block = net.blocks(b);
    for (int i = 0; i < block.ops_size(); ++i) {
      for (const AttrDef& attr : block.ops(i).attrs()) {
        if (attr.value_case() != AttrDef::kBlockIdx) continue;
        const int sub = attr.block_idx();
        if (sub <= 0 || sub >= net.blocks_size() ||
            net.blocks(sub).ops_size() == 0) {
          continue;
        }
        std::printf("  %s -> %s [style=dashed, lhead=%s, label=%s];\n",
                    OpNode(b, i).c_str(), OpNode(sub, 0).c_str(),
                    DotQuote(absl::StrCat("cluster_", sub)).c_str(),
                    DotQuote(attr.name()).c_str());
      }
    }
  }
  std::printf("}\n");
  return absl::OkStatus();
}

namespace {

// Each variable of a prepared block with its inferred dtype and shape, then
// the blocks of its control-flow ops, indented under them.
void PrintPrepared(const PreparedNet& prepared, int indent) {
  const std::string pad(indent, ' ');
  for (size_t v = 0; v < prepared.var_names().size(); ++v) {
    const VarInfo& info = prepared.var_infos()[v];
    std::printf(
        "%s  %-24s %-8s %s%s\n", pad.c_str(), prepared.var_names()[v].c_str(),
        DataTypeName(info.dtype).c_str(),
        info.has_dims ? DimsToString(info.dims).c_str() : "[?]",
        prepared.is_external(static_cast<int>(v)) ? " (enclosing)" : "");
  }
  for (const PreparedOp& op : prepared.ops()) {
    for (const auto& [attr, block] : op.blocks) {
      std::printf("%s  block %d (attribute \"%s\" of op %d, %s): %zu op(s)\n",
                  pad.c_str(), block->block_index(), attr.c_str(), op.index,
                  op.spec->type().c_str(), block->ops().size());
      if (!block->input_names().empty()) {
        std::printf("%s    inputs: %s\n", pad.c_str(),
                    absl::StrJoin(block->input_names(), ", ").c_str());
      }
      PrintPrepared(*block, indent + 2);
    }
  }
}

}  // namespace

absl::Status CheckCommand(const std::string& net_path,
                          const std::string& place_text) {
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(net_path));
  SF_ASSIGN_OR_RETURN(Place place, ParsePlace(place_text));
  // The net's own ops and variables, not the executor's rewrite of them.
  SF_ASSIGN_OR_RETURN(
      PreparedNet prepared,
      Executor(ExecutorOptions::AsWritten()).Prepare(net, 0, place));
  std::printf("net \"%s\" is valid on %s: %zu op(s), %zu variable(s)\n",
              net.name().c_str(), place.ToString().c_str(),
              prepared.ops().size(), prepared.var_names().size());
  std::printf("inputs: %s\n",
              absl::StrJoin(prepared.input_names(), ", ").c_str());
  PrintPrepared(prepared, 0);
  return absl::OkStatus();
}

}  // namespace scopeflow
