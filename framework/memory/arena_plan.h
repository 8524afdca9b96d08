// Offsets of tensors in one arena, from when each is live: tensors whose
// lifetimes do not overlap may share bytes.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_ARENA_PLAN_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_ARENA_PLAN_H_

#include <cstddef>
#include <vector>

#include "absl/types/span.h"

namespace scopeflow {

// One tensor to place: live from op `first` to op `last`, both included
// (an op reads its inputs while it writes its outputs, so an input dying at
// an op and an output born at it are live together).
struct TensorUse {
  size_t bytes = 0;
  int first = 0;
  int last = 0;
};

inline bool LifetimesOverlap(const TensorUse& a, const TensorUse& b) {
  return a.first <= b.last && b.first <= a.last;
}

struct ArenaPlan {
  // Indexed like the uses planned: where each tensor starts in the arena,
  // a multiple of the alignment.
  std::vector<size_t> offsets;
  // The arena's size: the end of the highest tensor placed.
  size_t arena_bytes = 0;
  // What allocating each tensor on its own would hold if none were freed.
  size_t sum_bytes = 0;
  // The most bytes live at once (at one op): no arena can be smaller.
  size_t live_peak_bytes = 0;
};

// Greedy by size, best fit (TFLite's ArenaPlanner, ONNX Runtime's memory
// patterns): the largest tensor first, each put in the smallest gap left
// between the tensors already placed that it overlaps in time, or above
// them all. Sizes are rounded up to `alignment` (a power of two).
ArenaPlan PlanArena(absl::Span<const TensorUse> uses, size_t alignment);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_ARENA_PLAN_H_
