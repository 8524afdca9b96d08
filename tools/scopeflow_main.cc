// The scopeflow command.
//   scopeflow info NET   reads a net file and prints its blocks, variables
//                        and ops.
#include <cstdio>
#include <string>

#include "absl/strings/str_join.h"
#include "framework/data_type.h"
#include "framework/net_io.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace {

constexpr char kUsage[] =
    "usage: scopeflow info NET\n"
    "  info NET   read NET (.pbtxt text or .pb binary) and print its blocks,\n"
    "             variables and ops\n";

std::string SlotsToString(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots) {
  std::string out;
  for (const OpSlot& slot : slots) {
    if (!out.empty()) out += ", ";
    out += slot.slot() + "=[" + absl::StrJoin(slot.vars(), ", ") + "]";
  }
  return out;
}

int Info(const std::string& path) {
  absl::StatusOr<NetDef> net = LoadNet(path);
  if (!net.ok()) {
    std::fprintf(stderr, "scopeflow: %s\n",
                 std::string(net.status().message()).c_str());
    return 1;
  }
  std::printf("net \"%s\" (format version %d): %d block(s)\n",
              net->name().c_str(), net->format_version(), net->blocks_size());
  for (int b = 0; b < net->blocks_size(); ++b) {
    const BlockDef& block = net->blocks(b);
    std::printf("block %d (parent %d): %d variable(s), %d op(s)\n", b,
                block.has_parent_idx() ? block.parent_idx() : -1,
                block.vars_size(), block.ops_size());
    for (const VarDef& var : block.vars()) {
      Dims dims(var.shape().begin(), var.shape().end());
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
  return 0;
}

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "info") {
    return scopeflow::Info(argv[2]);
  }
  std::fputs(scopeflow::kUsage, stderr);
  return 2;
}
