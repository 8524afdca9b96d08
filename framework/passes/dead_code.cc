#include "framework/passes/dead_code.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "framework/passes/block_uses.h"

namespace scopeflow {

absl::StatusOr<bool> DeadCodePass::Run(PassBlock& block,
                                       const PassContext& context) const {
  const BlockDef& in = block.block;
  const absl::flat_hash_set<std::string> read_as_written =
      VarsRead(context.as_written);
  // Live readers per variable: every reader until it is found dead.
  absl::flat_hash_map<std::string, int> readers;
  for (const OpDef& op : in.ops()) {
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) ++readers[var];
    }
  }
  std::vector<bool> alive(in.ops_size(), true);
  bool changed = false;
  // Backwards, so that an op's readers, which follow it, are settled first;
  // a reader before it (of an earlier value of the variable) keeps it.
  for (int i = in.ops_size() - 1; i >= 0; --i) {
    const OpDef& op = in.ops(i);
    if (op.outputs_size() == 0 || !IsPureOp(op)) continue;
    bool dead = true;
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        dead = dead && IsTemporary(context.prepared, var) &&
               read_as_written.contains(var) && readers[var] == 0;
      }
    }
    if (!dead) continue;
    alive[i] = false;
    changed = true;
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) --readers[var];
    }
  }
  if (!changed) return false;
  ReplaceWithLiveOps(block, {in.ops().begin(), in.ops().end()}, alive);
  return true;
}

}  // namespace scopeflow
