// scopeflow info and scopeflow check.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "platform/status_macros.h"
#include "tools/commands.h"

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

}  // namespace

absl::Status InfoCommand(const std::string& net_path) {
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(net_path));
  std::printf("net \"%s\" (format version %d): %d block(s)\n",
              net.name().c_str(), net.format_version(), net.blocks_size());
  for (int b = 0; b < net.blocks_size(); ++b) {
    const BlockDef& block = net.blocks(b);
    std::printf("block %d (parent %d): %d variable(s), %d op(s)\n", b,
                block.has_parent_idx() ? block.parent_idx() : -1,
                block.vars_size(), block.ops_size());
    for (const VarDef& var : block.vars()) {
      const Dims dims(var.shape().begin(), var.shape().end());
      std::printf("  var %-20s %-8s %-12s%s\n", var.name().c_str(),
                  DataTypeName(var.dtype()).c_str(), DimsToString(dims).c_str(),
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

absl::Status DotCommand(const std::string& net_path) {
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(net_path));
  SF_CHECK(net.blocks_size() > 0, "net \"%s\" has no blocks", net.name());
  const BlockDef& block = net.blocks(0);
  std::printf("digraph %s {\n  rankdir=TB;\n", DotQuote(net.name()).c_str());
  for (const VarDef& var : block.vars()) {
    std::printf("  %s [shape=ellipse%s];\n",
                DotQuote("var:" + var.name()).c_str(),
                var.persistable() ? ", style=filled, fillcolor=lightgrey" : "");
  }
  for (int i = 0; i < block.ops_size(); ++i) {
    const OpDef& op = block.ops(i);
    const std::string node = DotQuote(absl::StrCat("op:", i));
    std::printf("  %s [shape=box, label=%s];\n", node.c_str(),
                DotQuote(absl::StrCat(i, ": ", op.type())).c_str());
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) {
        std::printf("  %s -> %s [label=%s];\n", DotQuote("var:" + var).c_str(),
                    node.c_str(), DotQuote(slot.slot()).c_str());
      }
    }
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        std::printf("  %s -> %s [label=%s];\n", node.c_str(),
                    DotQuote("var:" + var).c_str(),
                    DotQuote(slot.slot()).c_str());
      }
    }
  }
  std::printf("}\n");
  return absl::OkStatus();
}

absl::Status CheckCommand(const std::string& net_path,
                          const std::string& place_text) {
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(net_path));
  SF_ASSIGN_OR_RETURN(Place place, ParsePlace(place_text));
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, Executor().Prepare(net, 0, place));
  std::printf("net \"%s\" is valid on %s: %zu op(s), %zu variable(s)\n",
              net.name().c_str(), place.ToString().c_str(),
              prepared.ops().size(), prepared.var_names().size());
  std::printf("inputs: %s\n",
              absl::StrJoin(prepared.input_names(), ", ").c_str());
  for (size_t v = 0; v < prepared.var_names().size(); ++v) {
    const VarInfo& info = prepared.var_infos()[v];
    std::printf("  %-24s %-8s %s\n", prepared.var_names()[v].c_str(),
                DataTypeName(info.dtype).c_str(),
                info.has_dims ? DimsToString(info.dims).c_str() : "[?]");
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
