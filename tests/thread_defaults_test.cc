// Executor::Prepare and Run without a place or scope take the calling
// thread's defaults (platform/default_place.h, framework/default_scope.h):
// threads never see each other's, and a guard gives the previous default
// back however its block is left.
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "framework/default_scope.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/default_place.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NetDef Net(const std::string& text) {
  absl::StatusOr<NetDef> net = ParseNetText(text);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

// out = x + w, where w is a parameter the scope must hold.
NetDef AddParameterNet() {
  return Net(R"pb(
    format_version: 1
    name: "add_parameter"
    blocks {
      vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ 1 ] }
      vars {
        name: "w"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 1 ]
        persistable: true
      }
      ops {
        type: "add"
        inputs { slot: "X" vars: "x" }
        inputs { slot: "Y" vars: "w" }
        outputs { slot: "Out" vars: "out" }
      }
    })pb");
}

// Writes the parameter "made" = 7: a startup net, creating it in the scope
// it runs against.
NetDef StartupNet() {
  return Net(R"pb(
    format_version: 1
    name: "startup"
    blocks {
      vars {
        name: "made"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 1 ]
        persistable: true
      }
      ops {
        type: "fill_constant"
        outputs { slot: "Out" vars: "made" }
        attrs {
          name: "shape"
          i64s { values: [ 1 ] }
        }
        attrs { name: "value" f: 7 }
      }
    })pb");
}

void SetParameter(Scope& scope, float value) {
  *(*scope.Var("w")->GetMutable<Tensor>()) = MakeTensor<float>({1}, {value});
}

TEST(ThreadDefaultsTest, PrepareTakesTheThreadsDefaultPlace) {
  Executor executor;
  absl::StatusOr<PreparedNet> on_cpu = executor.Prepare(AddParameterNet());
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status();
  EXPECT_EQ(on_cpu->place(), CPUPlace());
  {
    PlaceGuard guard(CUDAPlace(3));
    absl::StatusOr<PreparedNet> on_gpu = executor.Prepare(AddParameterNet());
    // Prepared for cuda:3, or refused naming it where the build or the
    // machine has no such device.
    if (on_gpu.ok()) {
      EXPECT_EQ(on_gpu->place(), CUDAPlace(3));
    } else {
      EXPECT_THAT(on_gpu.status().message(),
                  HasSubstr("cuda:3 is not available"));
    }
  }
  absl::StatusOr<PreparedNet> after = executor.Prepare(AddParameterNet(), 0);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->place(), CPUPlace());
}

TEST(ThreadDefaultsTest, RunTakesTheThreadsDefaultScope) {
  Executor executor;
  absl::StatusOr<PreparedNet> startup = executor.Prepare(StartupNet());
  ASSERT_TRUE(startup.ok()) << startup.status();
  Scope mine;
  {
    ScopeGuard guard(mine);
    EXPECT_EQ(&DefaultScope(), &mine);
    ASSERT_TRUE(executor.Run(*startup, {}, {}).ok());
  }
  EXPECT_EQ(&DefaultScope(), &GlobalScope());
  EXPECT_THAT(mine.LocalVarNames(), ElementsAre("made"));
  EXPECT_EQ(GlobalScope().FindVar("made"), nullptr);

  // Without a guard, the global scope: a parameter missing there is named.
  absl::StatusOr<PreparedNet> add = executor.Prepare(AddParameterNet());
  ASSERT_TRUE(add.ok()) << add.status();
  absl::StatusOr<std::vector<Tensor>> missing =
      executor.Run(*add, {{"x", MakeTensor<float>({1}, {1})}}, {"out"});
  EXPECT_THAT(missing.status().message(),
              HasSubstr("persistable variable \"w\" is not in the scope"));
}

TEST(ThreadDefaultsTest, ThreadsNeverSeeEachOthersDefaults) {
  Executor executor;
  absl::StatusOr<PreparedNet> add = executor.Prepare(AddParameterNet());
  ASSERT_TRUE(add.ok()) << add.status();
  constexpr int kThreads = 8;
  constexpr int kRuns = 200;
  // Each thread's scope holds w = its index; each run must see its own.
  std::vector<Scope> scopes(kThreads);
  for (int t = 0; t < kThreads; ++t) SetParameter(scopes[t], 100.0f * t);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ScopeGuard scope_guard(scopes[t]);
      PlaceGuard place_guard(t % 2 == 0 ? CPUPlace() : CUDAPlace(t));
      for (int r = 0; r < kRuns; ++r) {
        if (&DefaultScope() != &scopes[t]) wrong.fetch_add(1);
        if (DefaultPlace() != (t % 2 == 0 ? CPUPlace() : CUDAPlace(t))) {
          wrong.fetch_add(1);
        }
        absl::StatusOr<std::vector<Tensor>> out = executor.Run(
            *add, {{"x", MakeTensor<float>({1}, {static_cast<float>(r)})}},
            {"out"});
        if (!out.ok() || (*out)[0].data<float>()[0] != 100.0f * t + r) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(&DefaultScope(), &GlobalScope());
  EXPECT_EQ(DefaultPlace(), CPUPlace());
}

TEST(ThreadDefaultsTest, GuardsRestoreThePreviousDefaultOnAnException) {
  Scope outer;
  Scope inner;
  ScopeGuard outer_guard(outer);
  PlaceGuard outer_place(CUDAPlace(1));
  try {
    ScopeGuard inner_guard(inner);
    PlaceGuard inner_place(CUDAPlace(2));
    EXPECT_EQ(&DefaultScope(), &inner);
    throw std::runtime_error("unwind");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(&DefaultScope(), &outer);
  EXPECT_EQ(DefaultPlace(), CUDAPlace(1));
}

// Runs the parameter net in `scope` and fails half-way through, as a
// function returning an error does.
absl::Status RunThenFail(const Executor& executor, const PreparedNet& net,
                         Scope& scope) {
  ScopeGuard guard(scope);
  PlaceGuard place(CUDAPlace(5));
  SF_RETURN_IF_ERROR(executor.Run(net, {}, {"out"}).status());
  return absl::OkStatus();
}

TEST(ThreadDefaultsTest, GuardsRestoreThePreviousDefaultOnAnEarlyReturn) {
  Executor executor;
  absl::StatusOr<PreparedNet> add = executor.Prepare(AddParameterNet());
  ASSERT_TRUE(add.ok()) << add.status();
  Scope scope;
  SetParameter(scope, 1);
  // Not fed: the run fails and the function returns early.
  absl::Status status = RunThenFail(executor, *add, scope);
  EXPECT_THAT(status.message(), HasSubstr("input \"x\" is not fed"));
  EXPECT_EQ(&DefaultScope(), &GlobalScope());
  EXPECT_EQ(DefaultPlace(), CPUPlace());
}

}  // namespace
}  // namespace scopeflow
