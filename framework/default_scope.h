// The calling thread's default scope, set with an RAII guard.
#ifndef SCOPEFLOW_FRAMEWORK_DEFAULT_SCOPE_H_
#define SCOPEFLOW_FRAMEWORK_DEFAULT_SCOPE_H_

#include "framework/scope.h"

namespace scopeflow {

// The process-wide root scope, made on first use.
Scope& GlobalScope();

// The calling thread's default scope: GlobalScope() unless a ScopeGuard on
// this thread says otherwise. Each thread has its own; no thread sees
// another's. Executor::Run without a scope runs against it.
Scope& DefaultScope();

// Makes `scope` the calling thread's default scope for the guard's lifetime
// and restores the previous default when it is destroyed, also while an
// exception or an early error return unwinds the stack. Guards nest and are
// destroyed in reverse order on the thread that made them. The guard does
// not own `scope`, which must outlive it.
class ScopeGuard {
 public:
  explicit ScopeGuard(Scope& scope);
  ~ScopeGuard();

  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  Scope* previous_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_DEFAULT_SCOPE_H_
