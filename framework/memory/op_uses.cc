#include "framework/memory/op_uses.h"

#include <algorithm>
#include <string>

#include "framework/data_type.h"
#include "framework/var_info_checks.h"

namespace scopeflow {
namespace {

void SortUnique(std::vector<int>& vars) {
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
}

// Adds the variables of `prepared` that `block` and the blocks inside it
// read or write by name.
void AddBlockNames(const PreparedNet& prepared, const PreparedNet& block,
                   OpUses& uses) {
  for (const std::string& name : block.outer_reads()) {
    const int v = prepared.VarIndex(name);
    if (v >= 0) uses.reads.push_back(v);
  }
  for (const std::string& name : block.outer_writes()) {
    const int v = prepared.VarIndex(name);
    if (v >= 0) uses.writes.push_back(v);
  }
  for (const PreparedOp& op : block.ops()) {
    for (const auto& [attr, inner] : op.blocks) {
      if (inner != nullptr) AddBlockNames(prepared, *inner, uses);
    }
  }
}

}  // namespace

std::vector<OpUses> CollectOpUses(const PreparedNet& prepared) {
  std::vector<OpUses> all(prepared.ops().size());
  for (size_t i = 0; i < prepared.ops().size(); ++i) {
    const PreparedOp& op = prepared.ops()[i];
    OpUses& uses = all[i];
    for (const auto& slot : op.inputs) {
      uses.reads.insert(uses.reads.end(), slot.begin(), slot.end());
    }
    for (const auto& slot : op.outputs) {
      uses.writes.insert(uses.writes.end(), slot.begin(), slot.end());
    }
    for (const auto& [attr, block] : op.blocks) {
      if (block != nullptr) AddBlockNames(prepared, *block, uses);
    }
    SortUnique(uses.reads);
    SortUnique(uses.writes);
  }
  return all;
}

size_t BytesOf(const VarInfo& info) {
  if (!FullyKnown(info)) return 0;
  size_t bytes = SizeOf(info.dtype);
  for (int64_t d : info.dims) bytes *= static_cast<size_t>(d);
  return bytes;
}

}  // namespace scopeflow
