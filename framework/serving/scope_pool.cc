#include "framework/serving/scope_pool.h"

namespace scopeflow {

ScopePool::~ScopePool() {
  MutexLock lock(&mutex_);
  for (Scope* scope : all_) parent_.DeleteScope(scope).IgnoreError();
}

Scope& ScopePool::Acquire() {
  {
    MutexLock lock(&mutex_);
    if (!idle_.empty()) {
      Scope* scope = idle_.back();
      idle_.pop_back();
      return *scope;
    }
  }
  // Made outside the lock: NewScope takes the parent's own lock.
  Scope& scope = parent_.NewScope();
  MutexLock lock(&mutex_);
  all_.push_back(&scope);
  // Room for every scope, so that Release never allocates.
  idle_.reserve(all_.size());
  return scope;
}

void ScopePool::Release(Scope& scope) {
  MutexLock lock(&mutex_);
  idle_.push_back(&scope);
}

int ScopePool::size() const {
  MutexLock lock(&mutex_);
  return static_cast<int>(all_.size());
}

}  // namespace scopeflow
