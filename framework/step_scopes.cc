#include "framework/step_scopes.h"

namespace scopeflow {

void StepScopes::Reset(Scope& parent) {
  Clear();
  parent_ = &parent;
  parent_alive_ = parent.lifetime();
}

Scope& StepScopes::Add() {
  Scope& scope = parent_->NewScope();
  scopes_.push_back(&scope);
  return scope;
}

void StepScopes::Clear() {
  if (parent_ != nullptr && !parent_alive_.expired()) {
    for (Scope* scope : scopes_) parent_->DeleteScope(scope).IgnoreError();
  }
  scopes_.clear();
}

}  // namespace scopeflow
