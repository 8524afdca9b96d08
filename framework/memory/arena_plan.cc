#include "framework/memory/arena_plan.h"

#include <algorithm>
#include <numeric>

namespace scopeflow {
namespace {

size_t RoundUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) & ~(alignment - 1);
}

// The most bytes live at any one op.
size_t LivePeak(absl::Span<const TensorUse> uses) {
  // +bytes at first, -bytes after last; a sweep over the sorted events.
  std::vector<std::pair<int, long long>> events;
  events.reserve(2 * uses.size());
  for (const TensorUse& use : uses) {
    events.push_back({use.first, static_cast<long long>(use.bytes)});
    events.push_back({use.last + 1, -static_cast<long long>(use.bytes)});
  }
  // At equal positions the frees (negative) come first.
  std::sort(events.begin(), events.end());
  long long live = 0;
  long long peak = 0;
  for (const auto& [position, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return static_cast<size_t>(peak);
}

}  // namespace

ArenaPlan PlanArena(absl::Span<const TensorUse> uses, size_t alignment) {
  ArenaPlan plan;
  const size_t n = uses.size();
  plan.offsets.assign(n, 0);
  for (const TensorUse& use : uses) plan.sum_bytes += use.bytes;
  plan.live_peak_bytes = LivePeak(uses);

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by birth, then index, so plans are reproducible.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (uses[a].bytes != uses[b].bytes) return uses[a].bytes > uses[b].bytes;
    return uses[a].first < uses[b].first;
  });

  // The tensors placed so far, sorted by offset.
  std::vector<size_t> placed;
  placed.reserve(n);
  std::vector<size_t> overlapping;
  for (size_t i : order) {
    const size_t size = RoundUp(uses[i].bytes, alignment);
    overlapping.clear();
    for (size_t j : placed) {
      if (LifetimesOverlap(uses[i], uses[j])) overlapping.push_back(j);
    }
    // Walk the overlapping tensors by offset, looking at the gap before
    // each: the smallest that fits wins.
    size_t best_offset = 0;
    size_t best_gap = static_cast<size_t>(-1);
    size_t gap_start = 0;
    for (size_t j : overlapping) {
      const size_t start = plan.offsets[j];
      if (start > gap_start) {
        const size_t gap = start - gap_start;
        if (gap >= size && gap < best_gap) {
          best_gap = gap;
          best_offset = gap_start;
        }
      }
      gap_start =
          std::max(gap_start, start + RoundUp(uses[j].bytes, alignment));
    }
    if (best_gap == static_cast<size_t>(-1)) best_offset = gap_start;
    plan.offsets[i] = best_offset;
    plan.arena_bytes = std::max(plan.arena_bytes, best_offset + size);
    placed.insert(std::upper_bound(placed.begin(), placed.end(), i,
                                   [&](size_t a, size_t b) {
                                     return plan.offsets[a] < plan.offsets[b];
                                   }),
                  i);
  }
  return plan;
}

}  // namespace scopeflow
