// What each op of a prepared net reads and writes, by variable index: the
// common ground of the arena plan and the offload plan.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_OP_USES_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_OP_USES_H_

#include <cstddef>
#include <vector>

#include "framework/op_context.h"
#include "framework/prepared_net.h"

namespace scopeflow {

struct OpUses {
  // Sorted, without repeats; a variable updated in place is in both.
  std::vector<int> reads;
  std::vector<int> writes;
};

// Indexed like prepared.ops(). A control-flow op counts as reading and
// writing, besides its slots, every variable of this net that its blocks
// (and the blocks inside those) reach by name: a conservative view of what
// its steps touch.
std::vector<OpUses> CollectOpUses(const PreparedNet& prepared);

// The bytes of a variable of fully known dtype and shape; 0 otherwise.
size_t BytesOf(const VarInfo& info);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_OP_USES_H_
