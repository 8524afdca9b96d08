// What the passes that remove and merge ops need to know of a block: who
// reads and writes each variable, which ops are pure, and the rewriting of
// a block with ops removed.
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_BLOCK_USES_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_BLOCK_USES_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "framework/passes/pass.h"
#include "proto/framework.pb.h"

namespace scopeflow {

struct VarUses {
  // The ops reading the variable, an op once per slot position it reads.
  std::vector<int> readers;
  // The ops writing it, in block order.
  std::vector<int> writers;
};

// Per variable name, the ops of `block` reading and writing it.
absl::flat_hash_map<std::string, VarUses> UsesOf(const BlockDef& block);

// The variables some op of `block` reads.
absl::flat_hash_set<std::string> VarsRead(const BlockDef& block);

// Whether `op`'s outputs follow from its inputs and attributes alone
// (OpSpec::pure) and it runs no block: an op a pass may remove when
// nothing reads its outputs, or merge with another reading the same.
bool IsPureOp(const OpDef& op);

// Whether variable `name` of the prepared block lives for one run: no
// parameter, no enclosing block's variable, no list of scopes.
bool IsTemporary(const PreparedNet& prepared, const std::string& name);

// The variable bound to `slot` where it holds exactly one, else null.
const std::string* OnlyVar(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots,
    absl::string_view slot);

// Replaces `block` by `ops` (op i of `block`, possibly rewritten) less
// those not `alive`, dropping the declarations of the variables that only
// removed ops wrote or read.
void ReplaceWithLiveOps(PassBlock& block, std::vector<OpDef> ops,
                        const std::vector<bool>& alive);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_BLOCK_USES_H_
