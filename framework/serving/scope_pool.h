// Child scopes of one parent, each lent to one run at a time and kept for
// the next, so that concurrent runs over shared parameters never create a
// scope once the pool has as many as ever ran at once.
#ifndef SCOPEFLOW_FRAMEWORK_SERVING_SCOPE_POOL_H_
#define SCOPEFLOW_FRAMEWORK_SERVING_SCOPE_POOL_H_

#include <vector>

#include "absl/base/thread_annotations.h"
#include "framework/scope.h"
#include "platform/mutex.h"

namespace scopeflow {

// Thread-safe. The parent must outlive the pool; the pool deletes its
// scopes from the parent when destroyed, by which time none may be lent.
class ScopePool {
 public:
  explicit ScopePool(Scope& parent) : parent_(parent) {}
  ~ScopePool();
  ScopePool(const ScopePool&) = delete;
  ScopePool& operator=(const ScopePool&) = delete;

  // An idle scope of the pool, or a new kid of the parent when all are lent.
  Scope& Acquire();
  // Gives back a scope Acquire lent.
  void Release(Scope& scope);

  // Scopes the pool has made (lent or idle).
  int size() const;

 private:
  Scope& parent_;
  mutable Mutex mutex_;
  std::vector<Scope*> idle_ ABSL_GUARDED_BY(mutex_);
  std::vector<Scope*> all_ ABSL_GUARDED_BY(mutex_);
};

// Lends a scope of `pool` for the lease's lifetime.
class ScopeLease {
 public:
  explicit ScopeLease(ScopePool& pool) : pool_(pool), scope_(pool.Acquire()) {}
  ~ScopeLease() { pool_.Release(scope_); }
  ScopeLease(const ScopeLease&) = delete;
  ScopeLease& operator=(const ScopeLease&) = delete;

  Scope& scope() const { return scope_; }

 private:
  ScopePool& pool_;
  Scope& scope_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_SERVING_SCOPE_POOL_H_
