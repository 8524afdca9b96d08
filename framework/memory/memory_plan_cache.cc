#include "framework/memory/memory_plan_cache.h"

namespace scopeflow {

std::shared_ptr<const MemoryPlan> MemoryPlanCache::Get(
    const Signature& signature,
    const std::function<std::shared_ptr<const MemoryPlan>()>& make) {
  {
    absl::MutexLock lock(&mutex_);
    for (auto it = plans_.begin(); it != plans_.end(); ++it) {
      if (it->first != signature) continue;
      plans_.splice(plans_.begin(), plans_, it);
      return plans_.front().second;
    }
  }
  // Planning walks the whole net: not under the lock.
  std::shared_ptr<const MemoryPlan> plan = make();
  absl::MutexLock lock(&mutex_);
  ++plans_made_;
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    if (it->first == signature) return it->second;
  }
  plans_.emplace_front(signature, plan);
  if (plans_.size() > capacity_) plans_.pop_back();
  return plan;
}

int64_t MemoryPlanCache::plans_made() const {
  absl::MutexLock lock(&mutex_);
  return plans_made_;
}

}  // namespace scopeflow
