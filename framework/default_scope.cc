#include "framework/default_scope.h"

namespace scopeflow {
namespace {

// Null means GlobalScope().
thread_local Scope* current_default_scope = nullptr;

}  // namespace

Scope& GlobalScope() {
  static Scope global;
  return global;
}

Scope& DefaultScope() {
  return current_default_scope == nullptr ? GlobalScope()
                                          : *current_default_scope;
}

ScopeGuard::ScopeGuard(Scope& scope) : previous_(current_default_scope) {
  current_default_scope = &scope;
}

ScopeGuard::~ScopeGuard() { current_default_scope = previous_; }

}  // namespace scopeflow
