// Many threads changing one tree of scopes at once. Run under
// --config=tsan, where a data race fails the test.
#include <atomic>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/scope.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr int kThreads = 8;
constexpr int kOperationsPerThread = 100000;
constexpr int kSharedVars = 16;
constexpr int kOwnNames = 32;

// What one thread does. Shared state: the root (its variables and its kids
// map), read and changed by every thread. Each thread erases and deletes
// only what it made, as the lifetime rule of Variable pointers asks.
class Worker {
 public:
  Worker(Scope& root, int index)
      : root_(root), index_(index), random_(1234 + index) {}

  void Run() {
    subtree_ = &root_.NewScope();
    for (int i = 0; i < kOperationsPerThread; ++i) Step();
    ASSERT_TRUE(root_.DeleteScope(subtree_).ok());
  }

  // Names this thread left in the root.
  const std::set<std::string>& own_root_names() const { return own_in_root_; }
  int failures() const { return failures_; }

 private:
  std::string OwnName(int k) const { return absl::StrCat("t", index_, "_", k); }

  void Expect(bool ok) {
    if (!ok) ++failures_;
  }

  void Step() {
    const int k = static_cast<int>(random_() % kOwnNames);
    switch (random_() % 10) {
      case 0: {  // Create in the shared root and write the variable.
        Variable* var = root_.Var(OwnName(k));
        int64_t* value = *var->GetMutable<int64_t>();
        *value = k;
        own_in_root_.insert(OwnName(k));
        break;
      }
      case 1: {  // Erase own names from the shared root.
        const int erased = root_.EraseVars({OwnName(k)});
        Expect(erased == static_cast<int>(own_in_root_.erase(OwnName(k))));
        break;
      }
      case 2: {  // Find own names from deep in the own subtree.
        Scope* from = deepest_ == nullptr ? subtree_ : deepest_;
        Variable* var = from->FindVar(OwnName(k));
        const bool expected = own_in_root_.count(OwnName(k)) > 0;
        Expect((var != nullptr) == expected);
        if (var != nullptr) Expect(**var->Get<int64_t>() == k);
        break;
      }
      case 3: {  // Find shared names, which nobody erases.
        Scope* from = deepest_ == nullptr ? subtree_ : deepest_;
        Expect(from->FindVar(absl::StrCat("shared_", k % kSharedVars)) !=
               nullptr);
        Expect(from->FindVar("never_created") == nullptr);
        break;
      }
      case 4: {  // New kid of the shared root, deleted again soon.
        Scope& kid = root_.NewScope();
        kid.Var("local")->GetMutable<int64_t>().IgnoreError();
        Expect(kid.FindVar(absl::StrCat("shared_", k % kSharedVars)) !=
               nullptr);
        Expect(root_.DeleteScope(&kid).ok());
        break;
      }
      case 5: {  // Grow the own subtree.
        Scope* parent = deepest_ == nullptr ? subtree_ : deepest_;
        deepest_ = &parent->NewScope();
        deepest_->Var(absl::StrCat("deep_", k));
        break;
      }
      case 6: {  // Drop the own subtree's kids.
        subtree_->DropKids();
        deepest_ = nullptr;
        break;
      }
      case 7: {  // Rename an own name in the shared root.
        const std::string from = OwnName(k);
        const std::string to = OwnName((k + 1) % kOwnNames);
        const absl::Status status = root_.Rename(from, to);
        const bool had_from = own_in_root_.count(from) > 0;
        const bool had_to = own_in_root_.count(to) > 0;
        Expect(status.ok() == (had_from && !had_to));
        if (status.ok()) {
          own_in_root_.erase(from);
          own_in_root_.insert(to);
          // The value moved with the variable; restore the name invariant.
          **root_.FindLocalVar(to)->GetMutable<int64_t>() = (k + 1) % kOwnNames;
        }
        break;
      }
      case 8: {  // List the shared root while others change it.
        Expect(root_.LocalVarNames().size() >= kSharedVars);
        break;
      }
      default: {  // Lookups that hit in the own subtree.
        Variable* var = subtree_->Var("mine");
        Expect(subtree_->FindVar("mine") == var);
        Expect(root_.num_kids() >= 1);
        break;
      }
    }
  }

  Scope& root_;
  const int index_;
  std::mt19937 random_;
  Scope* subtree_ = nullptr;
  Scope* deepest_ = nullptr;
  std::set<std::string> own_in_root_;
  int failures_ = 0;
};

TEST(ScopeStressTest, ManyThreadsOneTree) {
  Scope root;
  for (int i = 0; i < kSharedVars; ++i) {
    root.Var(absl::StrCat("shared_", i));
  }
  std::vector<Worker> workers;
  workers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) workers.emplace_back(root, t);
  std::vector<std::thread> threads;
  for (Worker& worker : workers) {
    threads.emplace_back([&worker] { worker.Run(); });
  }
  for (std::thread& thread : threads) thread.join();

  std::set<std::string> expected;
  for (int i = 0; i < kSharedVars; ++i) {
    expected.insert(absl::StrCat("shared_", i));
  }
  for (const Worker& worker : workers) {
    EXPECT_EQ(worker.failures(), 0);
    expected.insert(worker.own_root_names().begin(),
                    worker.own_root_names().end());
  }
  const std::vector<std::string> names = root.LocalVarNames();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), expected);
  EXPECT_EQ(root.num_kids(), 0);
}

}  // namespace
}  // namespace scopeflow
