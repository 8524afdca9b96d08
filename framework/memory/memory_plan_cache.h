// The memory plans of a prepared net, one per signature of the shapes its
// runs were fed (memory_plan.h): a net whose inputs have free dimensions
// gets an arena for each shape it is run with.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_MEMORY_PLAN_CACHE_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_MEMORY_PLAN_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace scopeflow {

struct MemoryPlan;

// Thread-safe. Keeps the plans of the `capacity` signatures used last;
// a plan a run still holds outlives its eviction (shared_ptr).
class MemoryPlanCache {
 public:
  // The dims of each fed input, in the net's order, each list ended by
  // its rank (so that [2, 3] [4] and [2] [3, 4] differ).
  using Signature = std::vector<int64_t>;

  explicit MemoryPlanCache(size_t capacity = 4) : capacity_(capacity) {}

  // The plan for `signature`, made by `make` where none is kept. Two first
  // runs of one signature at once may both make one; the first kept stays.
  std::shared_ptr<const MemoryPlan> Get(
      const Signature& signature,
      const std::function<std::shared_ptr<const MemoryPlan>()>& make);

  // Plans made so far (for tests: a repeated shape makes none).
  int64_t plans_made() const;

 private:
  const size_t capacity_;
  mutable absl::Mutex mutex_;
  // Most recently used first.
  std::list<std::pair<Signature, std::shared_ptr<const MemoryPlan>>> plans_
      ABSL_GUARDED_BY(mutex_);
  int64_t plans_made_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_MEMORY_PLAN_CACHE_H_
