// StepScopes: the child scopes a control-flow op made for its iterations or
// time steps, kept in a variable (of kind VAR_KIND_SCOPE_LIST) so that its
// gradient op can later run backward through them, as in the Paddle scope
// design: the op stays stateless, the state lives in the scope.
#ifndef SCOPEFLOW_FRAMEWORK_STEP_SCOPES_H_
#define SCOPEFLOW_FRAMEWORK_STEP_SCOPES_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "framework/scope.h"

namespace scopeflow {

// Owns its scopes in effect: they are kids of `parent`, and Clear (or
// destroying the StepScopes, e.g. with the variable holding it) deletes
// them from it. If the parent is destroyed first they are already gone.
class StepScopes {
 public:
  StepScopes() = default;
  StepScopes(const StepScopes&) = delete;
  StepScopes& operator=(const StepScopes&) = delete;
  ~StepScopes() { Clear(); }

  // Deletes the scopes held and starts a new list under `parent`.
  void Reset(Scope& parent);
  // A new kid of the parent, appended to the list.
  Scope& Add();
  int size() const { return static_cast<int>(scopes_.size()); }
  Scope& at(int i) const { return *scopes_[i].scope; }
  // Deletes every scope held.
  void Clear();

 private:
  Scope* parent_ = nullptr;
  std::weak_ptr<const void> parent_alive_;
  struct Kid {
    Scope* scope;
    // Expired once the scope is gone, e.g. destroyed with the parent
    // before the variable holding this list.
    std::weak_ptr<const void> alive;
  };
  std::vector<Kid> scopes_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_STEP_SCOPES_H_
