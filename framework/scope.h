// Scope: named Variables in a tree of scopes with parent lookup.
#ifndef SCOPEFLOW_FRAMEWORK_SCOPE_H_
#define SCOPEFLOW_FRAMEWORK_SCOPE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/variable.h"
#include "platform/mutex.h"

namespace scopeflow {

// A scope holds named Variables and owns its kids, as in the Paddle scope
// design: a lookup that misses locally walks to the parent, so a request's
// scope sees the model's weights in the root without copying them, and a
// local name shadows the parent's.
//
// Ownership: a scope owns its variables and its kids. Destroying a scope
// (or DeleteScope / DropKids on its parent) destroys its kids first, then
// its variables.
//
// Lifetime of Variable pointers: the Variable* returned by Var or FindVar
// stays valid, at the same address, until that variable is erased
// (EraseVars) or the scope holding it is destroyed. Rename keeps the
// variable and its address under the new name. Code that may erase or
// destroy what another thread still uses must order the two itself; the
// executor does so by erasing only the variables of its own run scope.
//
// Thread safety: every method may be called from any number of threads at
// once on one tree of scopes. Lookups take a shared lock per scope visited;
// changes take the scope's exclusive lock. The Variables themselves are not
// synchronised (see Variable).
class Scope {
 public:
  // A root scope (no parent).
  Scope();
  ~Scope();

  // Kids are made by NewScope only: the key is private to Scope.
  class KidKey {
   private:
    friend class Scope;
    KidKey() = default;
  };
  Scope(KidKey, Scope* parent);

  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // The local variable `name`, created empty if absent here. Never looks at
  // the parents.
  Variable* Var(absl::string_view name);

  // `name` in this scope or the nearest ancestor that has it; null if none.
  Variable* FindVar(absl::string_view name) const;

  // `name` in this scope only; null if absent.
  Variable* FindLocalVar(absl::string_view name) const;

  // The scope (this or an ancestor) whose variable FindVar(name) returns;
  // null if none.
  const Scope* FindScope(absl::string_view name) const;

  // A new kid, owned by this scope.
  Scope& NewScope();

  // Destroys `kid` and everything in it. NotFound if `kid` is not a kid of
  // this scope (nothing is destroyed then).
  absl::Status DeleteScope(const Scope* kid);

  // Destroys every kid.
  void DropKids();

  // Destroys the local variables named; names absent here are skipped.
  // Returns how many were destroyed.
  int EraseVars(absl::Span<const std::string> names);

  // Gives local variable `old_name` the name `new_name`. NotFound if
  // `old_name` is not local; AlreadyExists if `new_name` is (renaming a
  // variable to its own name is a no-op).
  absl::Status Rename(absl::string_view old_name, absl::string_view new_name);

  // The local variable names, sorted.
  std::vector<std::string> LocalVarNames() const;

  int num_kids() const;

  // Null for a root.
  const Scope* parent() const { return parent_; }
  Scope* parent() { return parent_; }

  // An identity no other scope of this process ever has, even after this
  // one is destroyed: caches keyed on a scope use it, not the address.
  uint64_t id() const { return id_; }
  // Expires when this scope is destroyed, so that a cache holding one of its
  // kids can tell whether the kid still exists.
  std::weak_ptr<const void> lifetime() const { return lifetime_; }

 private:
  // A name and its hash, computed once for a lookup that visits several
  // scopes.
  struct HashedName {
    absl::string_view name;
    size_t hash;
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(absl::string_view name) const {
      return absl::Hash<absl::string_view>()(name);
    }
    size_t operator()(const HashedName& name) const { return name.hash; }
  };
  struct NameEq {
    using is_transparent = void;
    bool operator()(absl::string_view a, absl::string_view b) const {
      return a == b;
    }
    bool operator()(absl::string_view a, const HashedName& b) const {
      return a == b.name;
    }
  };
  using VarMap = absl::flat_hash_map<std::string, std::unique_ptr<Variable>,
                                     NameHash, NameEq>;

  Variable* FindLocal(const HashedName& name) const;
  const Scope* FindHolder(absl::string_view name, Variable** var) const;

  Scope* const parent_;
  const uint64_t id_;
  const std::shared_ptr<const char> lifetime_ = std::make_shared<char>(0);
  mutable Mutex mutex_;
  VarMap vars_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<const Scope*, std::unique_ptr<Scope>> kids_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_SCOPE_H_
