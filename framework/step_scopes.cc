#include "framework/step_scopes.h"

namespace scopeflow {

void StepScopes::Reset(Scope& parent) {
  Clear();
  parent_ = &parent;
  parent_alive_ = parent.lifetime();
}

Scope& StepScopes::Add() {
  Scope& scope = parent_->NewScope();
  scopes_.push_back({&scope, scope.lifetime()});
  return scope;
}

void StepScopes::Clear() {
  if (parent_ != nullptr && !parent_alive_.expired()) {
    for (const Kid& kid : scopes_) {
      if (!kid.alive.expired()) parent_->DeleteScope(kid.scope).IgnoreError();
    }
  }
  scopes_.clear();
}

}  // namespace scopeflow
