// The child scopes of a prepared net's runs, kept for reuse: creating a
// scope and one variable per temporary costs more than running a small op,
// so a run takes an idle scope of the same parent with its variables
// already created and resolved, and gives it back emptied.
#ifndef SCOPEFLOW_FRAMEWORK_RUN_SCOPE_CACHE_H_
#define SCOPEFLOW_FRAMEWORK_RUN_SCOPE_CACHE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "platform/mutex.h"

namespace scopeflow {

// One run's scope: a kid of `parent` holding the net's temporaries.
struct RunScope {
  Scope* parent = nullptr;
  uint64_t parent_id = 0;
  std::weak_ptr<const void> parent_alive;
  Scope* scope = nullptr;
  // Per variable of the net: its tensor in `scope`, or null for the
  // persistable ones (they live in the parent, resolved each run).
  std::vector<Tensor*> tensors;
  // The persistable variables' tensors in the parent, when the executor
  // resolves them once per run scope (empty until then).
  std::vector<Tensor*> persistables;
};

// Thread-safe. Idle scopes whose parent was destroyed are dropped (they
// died with it); a scope is never handed to two runs at once.
class RunScopeCache {
 public:
  explicit RunScopeCache(int max_idle_per_parent = 4)
      : max_idle_per_parent_(max_idle_per_parent) {}
  // Deletes the idle scopes whose parents still exist. A parent must not
  // be destroyed by another thread while its net's cache is destroyed.
  ~RunScopeCache();
  RunScopeCache(const RunScopeCache&) = delete;
  RunScopeCache& operator=(const RunScopeCache&) = delete;

  // A scope under `parent` for a run of a net whose variables are `names`
  // (`temporary[v]`: variable v lives in the run scope).
  absl::StatusOr<std::unique_ptr<RunScope>> Acquire(
      Scope& parent, const std::vector<std::string>& names,
      const std::vector<bool>& temporary);
  // Frees every tensor of the run scope (temporaries die with their run),
  // or with `keep_buffers` only those whose buffer is also viewed elsewhere
  // (so a kept buffer is the scope's alone), and keeps the scope for the
  // next run, or deletes it when enough of its parent's are idle.
  void Release(std::unique_ptr<RunScope> run, bool keep_buffers = false);

  int idle_count() const;

 private:
  const int max_idle_per_parent_;
  mutable Mutex mutex_;
  std::vector<std::unique_ptr<RunScope>> idle_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_RUN_SCOPE_CACHE_H_
