#include "framework/run_scope_cache.h"

#include <utility>

#include "platform/status_macros.h"

namespace scopeflow {

RunScopeCache::~RunScopeCache() {
  MutexLock lock(&mutex_);
  for (const std::unique_ptr<RunScope>& run : idle_) {
    if (!run->parent_alive.expired()) {
      run->parent->DeleteScope(run->scope).IgnoreError();
    }
  }
}

absl::StatusOr<std::unique_ptr<RunScope>> RunScopeCache::Acquire(
    Scope& parent, const std::vector<std::string>& names,
    const std::vector<bool>& temporary) {
  {
    MutexLock lock(&mutex_);
    for (size_t i = 0; i < idle_.size();) {
      if (idle_[i]->parent_alive.expired()) {
        // Destroyed with its parent: only the bookkeeping is left.
        idle_[i] = std::move(idle_.back());
        idle_.pop_back();
        continue;
      }
      if (idle_[i]->parent_id == parent.id()) {
        std::unique_ptr<RunScope> run = std::move(idle_[i]);
        idle_[i] = std::move(idle_.back());
        idle_.pop_back();
        return run;
      }
      ++i;
    }
  }
  auto run = std::make_unique<RunScope>();
  run->parent = &parent;
  run->parent_id = parent.id();
  run->parent_alive = parent.lifetime();
  run->scope = &parent.NewScope();
  run->tensors.assign(names.size(), nullptr);
  for (size_t v = 0; v < names.size(); ++v) {
    if (!temporary[v]) continue;
    absl::StatusOr<Tensor*> tensor =
        run->scope->Var(names[v])->GetMutable<Tensor>();
    if (!tensor.ok()) {
      parent.DeleteScope(run->scope).IgnoreError();
      return tensor.status();
    }
    run->tensors[v] = *tensor;
  }
  return run;
}

void RunScopeCache::Release(std::unique_ptr<RunScope> run, bool keep_buffers) {
  for (Tensor* tensor : run->tensors) {
    if (tensor == nullptr || !tensor->initialized()) continue;
    // A buffer someone else still views (a fetched result the caller
    // holds) is let go here, by the thread that ran: the next run on this
    // scope may be on another thread, and a use count it read would not
    // order the caller's reads before its writes.
    if (!keep_buffers || !tensor->OwnsBufferAlone()) tensor->Clear();
  }
  {
    MutexLock lock(&mutex_);
    int same_parent = 0;
    for (const std::unique_ptr<RunScope>& idle : idle_) {
      if (idle->parent_id == run->parent_id) ++same_parent;
    }
    if (same_parent < max_idle_per_parent_) {
      idle_.push_back(std::move(run));
      return;
    }
  }
  // The parent is alive: the run that used this scope ran on it.
  run->parent->DeleteScope(run->scope).IgnoreError();
}

int RunScopeCache::idle_count() const {
  MutexLock lock(&mutex_);
  return static_cast<int>(idle_.size());
}

}  // namespace scopeflow
