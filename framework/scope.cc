#include "framework/scope.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_format.h"

namespace scopeflow {
namespace {

uint64_t NextScopeId() {
  static std::atomic<uint64_t> next_id{1};
  return next_id.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

Scope::Scope() : Scope(KidKey(), nullptr) {}

Scope::Scope(KidKey, Scope* parent) : parent_(parent), id_(NextScopeId()) {}

Scope::~Scope() {
  // Kids first: they may hold views of this scope's tensors.
  kids_.clear();
  vars_.clear();
}

Variable* Scope::Var(absl::string_view name) {
  const HashedName hashed{name, NameHash()(name)};
  if (Variable* var = FindLocal(hashed)) return var;
  MutexLock lock(&mutex_);
  std::unique_ptr<Variable>& slot = vars_[name];
  if (slot == nullptr) slot = std::make_unique<Variable>();
  return slot.get();
}

Variable* Scope::FindLocal(const HashedName& name) const {
  ReaderMutexLock lock(&mutex_);
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.get();
}

const Scope* Scope::FindHolder(absl::string_view name, Variable** var) const {
  const HashedName hashed{name, NameHash()(name)};
  for (const Scope* scope = this; scope != nullptr; scope = scope->parent_) {
    if ((*var = scope->FindLocal(hashed)) != nullptr) return scope;
  }
  return nullptr;
}

Variable* Scope::FindVar(absl::string_view name) const {
  Variable* var = nullptr;
  FindHolder(name, &var);
  return var;
}

Variable* Scope::FindLocalVar(absl::string_view name) const {
  return FindLocal(HashedName{name, NameHash()(name)});
}

const Scope* Scope::FindScope(absl::string_view name) const {
  Variable* var = nullptr;
  return FindHolder(name, &var);
}

Scope& Scope::NewScope() {
  auto kid = std::make_unique<Scope>(KidKey(), this);
  Scope& result = *kid;
  MutexLock lock(&mutex_);
  kids_.emplace(kid.get(), std::move(kid));
  return result;
}

absl::Status Scope::DeleteScope(const Scope* kid) {
  std::unique_ptr<Scope> doomed;
  {
    MutexLock lock(&mutex_);
    auto it = kids_.find(kid);
    if (it == kids_.end()) {
      return absl::NotFoundError(
          absl::StrFormat("DeleteScope: scope #%d is not a kid of scope #%d",
                          kid == nullptr ? 0 : kid->id(), id_));
    }
    doomed = std::move(it->second);
    kids_.erase(it);
  }
  // Destroyed outside the lock, so lookups here are not held up meanwhile.
  doomed.reset();
  return absl::OkStatus();
}

void Scope::DropKids() {
  absl::flat_hash_map<const Scope*, std::unique_ptr<Scope>> doomed;
  {
    MutexLock lock(&mutex_);
    doomed.swap(kids_);
  }
}

int Scope::EraseVars(absl::Span<const std::string> names) {
  std::vector<std::unique_ptr<Variable>> doomed;
  {
    MutexLock lock(&mutex_);
    for (const std::string& name : names) {
      auto it = vars_.find(name);
      if (it == vars_.end()) continue;
      doomed.push_back(std::move(it->second));
      vars_.erase(it);
    }
  }
  return static_cast<int>(doomed.size());
}

absl::Status Scope::Rename(absl::string_view old_name,
                           absl::string_view new_name) {
  MutexLock lock(&mutex_);
  auto it = vars_.find(old_name);
  if (it == vars_.end()) {
    return absl::NotFoundError(absl::StrFormat(
        "Rename: no variable \"%s\" in scope #%d", old_name, id_));
  }
  if (old_name == new_name) return absl::OkStatus();
  if (vars_.contains(new_name)) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "Rename: cannot rename \"%s\" to \"%s\" in scope #%d: \"%s\" exists",
        old_name, new_name, id_, new_name));
  }
  std::unique_ptr<Variable> var = std::move(it->second);
  vars_.erase(it);
  vars_.emplace(new_name, std::move(var));
  return absl::OkStatus();
}

std::vector<std::string> Scope::LocalVarNames() const {
  std::vector<std::string> names;
  {
    ReaderMutexLock lock(&mutex_);
    names.reserve(vars_.size());
    for (const auto& entry : vars_) names.push_back(entry.first);
  }
  std::sort(names.begin(), names.end());
  return names;
}

int Scope::num_kids() const {
  ReaderMutexLock lock(&mutex_);
  return static_cast<int>(kids_.size());
}

}  // namespace scopeflow
