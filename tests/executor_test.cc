// The executor end to end: bad nets, startup and main nets, scopes, memory,
// concurrent runs.
#include "framework/executor.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/allocator.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"test\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

absl::Status PrepareStatus(const std::string& blocks) {
  return Executor().Prepare(Net(blocks), 0, CPUPlace()).status();
}

// A startup net filling w [3, 2] and b [2], and a main net out = x w + b.
constexpr char kStartup[] = R"pb(
  blocks {
    vars {
      name: "w"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 3, 2 ]
      persistable: true
    }
    vars {
      name: "b"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2 ]
      persistable: true
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "w" }
      attrs {
        name: "shape"
        i64s { values: [ 3, 2 ] }
      }
      attrs { name: "value" f: 0.5 }
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "b" }
      attrs {
        name: "shape"
        i64s { values: [ 2 ] }
      }
      attrs { name: "value" f: 1 }
    }
  })pb";

constexpr char kMain[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 3 ]
    }
    vars {
      name: "w"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 3, 2 ]
      persistable: true
    }
    vars {
      name: "b"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2 ]
      persistable: true
    }
    ops {
      type: "fc"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "W" vars: "w" }
      inputs { slot: "Bias" vars: "b" }
      outputs { slot: "Out" vars: "h" }
    }
    ops {
      type: "matmul"
      inputs { slot: "X" vars: "h" }
      inputs { slot: "Y" vars: "h" }
      outputs { slot: "Out" vars: "gram" }
      attrs { name: "transpose_y" b: true }
    }
  })pb";

TEST(ExecutorTest, StartupFillsParametersThenMainRunsInChildScopes) {
  Executor executor;
  Scope root;
  auto startup = executor.Prepare(Net(kStartup), 0, CPUPlace());
  ASSERT_TRUE(startup.ok()) << startup.status();
  ASSERT_TRUE(executor.Run(*startup, root, {}, {}).ok());
  EXPECT_THAT(root.LocalVarNames(), ElementsAre("b", "w"));

  auto main = executor.Prepare(Net(kMain), 0, CPUPlace());
  ASSERT_TRUE(main.ok()) << main.status();
  EXPECT_THAT(main->input_names(), ElementsAre("x"));
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 0, 0, 2});
  auto out = executor.Run(*main, root, {{"x", x}}, {"h", "gram"});
  ASSERT_TRUE(out.ok()) << out.status();
  // h = [[4 4] [2 2]]; gram = h h^T = [[32 16] [16 8]].
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4, 4, 2, 2));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(32, 16, 16, 8));
  // Temporaries died with the run; parameters stayed. Each prepared net
  // (startup and main) keeps its run scope for the next run, emptied.
  EXPECT_THAT(root.LocalVarNames(), ElementsAre("b", "w"));
  EXPECT_EQ(root.num_kids(), 2);
  ASSERT_TRUE(executor.Run(*main, root, {{"x", x}}, {"h"}).ok());
  EXPECT_EQ(root.num_kids(), 2);
  main = absl::InternalError("the prepared net is gone");
  EXPECT_EQ(root.num_kids(), 1);
  // The feed was bound without a copy and is untouched.
  EXPECT_EQ(x.data<float>()[0], 1.0f);
}

TEST(ExecutorTest, RunErrorsNameTheVariable) {
  Executor executor;
  auto main = executor.Prepare(Net(kMain), 0, CPUPlace());
  ASSERT_TRUE(main.ok());
  Scope empty;
  Tensor x = MakeTensor<float>({1, 3}, {1, 2, 3});
  EXPECT_THAT(executor.Run(*main, empty, {{"x", x}}, {"h"}).status().message(),
              HasSubstr("persistable variable \"w\" is not in the scope: run "
                        "the startup net"));
  Scope root;
  ASSERT_TRUE(
      executor
          .Run(*executor.Prepare(Net(kStartup), 0, CPUPlace()), root, {}, {})
          .ok());
  EXPECT_THAT(executor.Run(*main, root, {}, {"h"}).status().message(),
              HasSubstr("input \"x\" is not fed"));
  Tensor wrong = MakeTensor<float>({1, 4}, {1, 2, 3, 4});
  EXPECT_THAT(
      executor.Run(*main, root, {{"x", wrong}}, {"h"}).status().message(),
      HasSubstr("feed \"x\": expected float32 [-1, 3], got "
                "Tensor<float32, [1, 4], cpu>"));
  Tensor ints = MakeTensor<int32_t>({1, 3}, {1, 2, 3});
  EXPECT_THAT(
      executor.Run(*main, root, {{"x", ints}}, {"h"}).status().message(),
      HasSubstr("feed \"x\": expected float32"));
  EXPECT_THAT(executor.Run(*main, root, {{"h", x}}, {"h"}).status().message(),
              HasSubstr("feed \"h\" is not an input of the net (inputs: x)"));
  EXPECT_THAT(
      executor.Run(*main, root, {{"x", x}}, {"nope"}).status().message(),
      HasSubstr("fetch \"nope\": the net has no such variable"));
  Scope doubles;
  Tensor* w = *doubles.Var("w")->GetMutable<Tensor>();
  ASSERT_TRUE(w->Allocate(CPUPlace(), kFloat64, {3, 2}).ok());
  Tensor* b = *doubles.Var("b")->GetMutable<Tensor>();
  ASSERT_TRUE(b->Allocate(CPUPlace(), kFloat32, {2}).ok());
  EXPECT_THAT(
      executor.Run(*main, doubles, {{"x", x}}, {"h"}).status().message(),
      HasSubstr("persistable variable \"w\": the net declares float32 "
                "[3, 2], the scope holds Tensor<float64, [3, 2], cpu>"));
  // Failed runs give their scope back too: one kept per scope and net.
  EXPECT_LE(root.num_kids(), 2);
  EXPECT_LE(empty.num_kids(), 1);
}

TEST(ExecutorTest, PrepareReportsEveryProblem) {
  absl::Status status = PrepareStatus(R"pb(
    blocks {
      vars {
        name: "x"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 2, 3 ]
      }
      ops {
        type: "no_such_op"
        outputs { slot: "Out" vars: "a" }
      }
      ops {
        type: "matmul"
        inputs { slot: "X" vars: "x" }
        inputs { slot: "Y" vars: "undefined" }
        outputs { slot: "Out" vars: "b" }
      }
      ops {
        type: "fill_constant"
        outputs { slot: "Result" vars: "c" }
        attrs {
          name: "shape"
          i64s { values: [ 1 ] }
        }
        attrs { name: "colour" s: "red" }
      }
      ops {
        type: "fc"
        inputs { slot: "X" vars: "x" vars: "x" }
        inputs { slot: "W" vars: "x" }
        outputs { slot: "Out" vars: "d" }
        attrs { name: "in_num_col_dims" i: 0 }
      }
    })pb");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("net \"test\" block 0 has 7 problem(s)"));
  EXPECT_THAT(
      message,
      HasSubstr("op 2 (fill_constant): missing required output \"Out\""));
  EXPECT_THAT(message, HasSubstr("op 0 (no_such_op): unknown op type"));
  EXPECT_THAT(message, HasSubstr("op 1 (matmul): input \"Y\" reads variable "
                                 "\"undefined\" before any op writes it"));
  EXPECT_THAT(message, HasSubstr("op 2 (fill_constant): unknown output slot "
                                 "\"Result\" (outputs: Out)"));
  EXPECT_THAT(message,
              HasSubstr("op 2 (fill_constant): unknown attribute "
                        "\"colour\" (attributes: shape, value, dtype)"));
  EXPECT_THAT(message,
              HasSubstr("op 3 (fc): input \"X\" takes one variable, got 2"));
  EXPECT_THAT(message, HasSubstr("op 3 (fc): attribute \"in_num_col_dims\" "
                                 "must be positive, got 0"));
}

TEST(ExecutorTest, PrepareChecksInferredAgainstDeclared) {
  absl::Status status = PrepareStatus(R"pb(
    blocks {
      vars {
        name: "x"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 2, 3 ]
      }
      vars {
        name: "y"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 3, 3 ]
      }
      ops {
        type: "matmul"
        inputs { slot: "X" vars: "x" }
        inputs { slot: "Y" vars: "x" }
        outputs { slot: "Out" vars: "y" }
        attrs { name: "transpose_y" b: true }
      }
    })pb");
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (matmul): output \"Out\" (variable \"y\") is "
                        "inferred as float32 [2, 2] but declared as float32 "
                        "[3, 3]"));
  EXPECT_THAT(PrepareStatus(R"pb(
                blocks {
                  vars {
                    name: "x"
                    shape: [ 2 ]
                  }
                  ops {
                    type: "assign"
                    inputs { slot: "X" vars: "x" }
                    outputs { slot: "Out" vars: "y" }
                  }
                })pb")
                  .message(),
              HasSubstr("an input of the net that declares no dtype"));
}

// An op with a wrong inference: Out gets attribute "dims", unchecked.
absl::Status InferDimsFromAttr(InferContext& context) {
  const auto& dims = context.attrs().Get<std::vector<int64_t>>("dims");
  context.SetOutput("Out", 0, kFloat32, Dims(dims.begin(), dims.end()));
  return absl::OkStatus();
}

SF_REGISTER_OP(test_dims_from_attr)
    .Output("Out")
    .Attr("dims", AttrType::kInt64s)
    .Infer(InferDimsFromAttr);

// Declared and inferred shapes are checked before inference computes with
// them: a dim below -1, or more elements than int64 counts (nets come from
// users' files; dims and attributes may hold anything).
TEST(ExecutorTest, PrepareRejectsShapesBeyondInt64) {
  absl::Status status = PrepareStatus(R"pb(
    blocks {
      vars {
        name: "negative"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 2, -2 ]
      }
      vars {
        name: "huge"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 922337203685477580, 64 ]
      }
      vars {
        name: "empty"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 0, 4611686018427387904, 4 ]
      }
      vars {
        name: "largest"
        dtype: DATA_TYPE_FLOAT32
        shape: [ 0, 9223372036854775807, -1 ]
      }
      ops {
        type: "reshape"
        inputs { slot: "X" vars: "huge" }
        outputs { slot: "Out" vars: "flat" }
        attrs {
          name: "shape"
          i64s { values: [ -1 ] }
        }
      }
      ops {
        type: "fill_constant"
        outputs { slot: "Out" vars: "filled" }
        attrs {
          name: "shape"
          i64s { values: [ 4611686018427387904, 2 ] }
        }
      }
      ops {
        type: "test_dims_from_attr"
        outputs { slot: "Out" vars: "bad_dim" }
        attrs {
          name: "dims"
          i64s { values: [ 3, -5 ] }
        }
      }
      ops {
        type: "relu"
        inputs { slot: "X" vars: "filled" }
        outputs { slot: "Out" vars: "after" }
      }
      ops {
        type: "relu"
        inputs { slot: "X" vars: "largest" }
        outputs { slot: "Out" vars: "fine" }
      }
    })pb");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("block 0 has 5 problem(s)"));
  EXPECT_THAT(message,
              HasSubstr("variable \"negative\" is declared with shape [2, "
                        "-2]: dimension -2 is below -1 (expected a size, or "
                        "-1 for unknown)"));
  EXPECT_THAT(message, HasSubstr("variable \"huge\" is declared with shape "
                                 "[922337203685477580, 64]: its element count "
                                 "overflows int64"));
  // The product of the nonzero dims counts, so that inference may multiply
  // any of them.
  EXPECT_THAT(message,
              HasSubstr("variable \"empty\" is declared with shape [0, "
                        "4611686018427387904, 4]: its element count "
                        "overflows int64"));
  // An op reading a rejected declaration sees an unknown rank, and the ops
  // after a rejected output see an unknown rank too: no other problem.
  EXPECT_THAT(message,
              HasSubstr("op 1 (fill_constant): output \"Out\" (variable "
                        "\"filled\") is inferred with shape "
                        "[4611686018427387904, 2]: its element count "
                        "overflows int64"));
  EXPECT_THAT(message,
              HasSubstr("op 2 (test_dims_from_attr): output \"Out\" "
                        "(variable \"bad_dim\") is inferred with shape [3, "
                        "-5]: dimension -5 is below -1"));
}

TEST(ExecutorTest, InPlaceWritesAreRefused) {
  EXPECT_THAT(PrepareStatus(R"pb(
                blocks {
                  vars {
                    name: "x"
                    dtype: DATA_TYPE_FLOAT32
                    shape: [ 2, 2 ]
                  }
                  ops {
                    type: "matmul"
                    inputs { slot: "X" vars: "x" }
                    inputs { slot: "Y" vars: "x" }
                    outputs { slot: "Out" vars: "x" }
                  }
                })pb")
                  .message(),
              HasSubstr("op 0 (matmul): output \"Out\" writes variable \"x\", "
                        "which input \"X\" reads"));
}

TEST(ExecutorTest, BadNetFilesAndBlocks) {
  NetDef net = Net(kMain);
  EXPECT_THAT(Executor().Prepare(net, 3, CPUPlace()).status().message(),
              HasSubstr("net \"test\" has no block 3 (it has 1)"));
  net.set_format_version(9);
  EXPECT_THAT(Executor().Prepare(net, 0, CPUPlace()).status().message(),
              HasSubstr("format_version 9"));
  EXPECT_THAT(
      Executor().Prepare(Net(kMain), 0, CUDAPlace(99)).status().message(),
      HasSubstr("cuda:99 is not available"));
}

// A chain of `n` matmuls of [64, 64] matrices: each intermediate is 16 KiB.
NetDef Chain(int n) {
  std::string text =
      "blocks { vars { name: 'x' dtype: DATA_TYPE_FLOAT32 shape: [64, 64] }";
  for (int i = 0; i < n; ++i) {
    const std::string in = i == 0 ? "x" : absl::StrCat("t", i - 1);
    absl::StrAppend(&text, " ops { type: 'matmul' inputs { slot: 'X' vars: '",
                    in, "' } inputs { slot: 'Y' vars: 'x' } outputs { slot: ",
                    "'Out' vars: 't", i, "' } }");
  }
  return Net(text + " }");
}

// The peak bytes in use on the CPU while `executor` runs `net`, above the
// bytes in use before.
int64_t PeakGrowth(const Executor& executor, const NetDef& net) {
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  Tensor x = MakeTensor<float>({64, 64}, std::vector<float>(64 * 64, 0.01f));
  Scope scope;
  Allocator* cpu = *GetAllocator(CPUPlace());
  const int64_t before = cpu->stats().bytes_in_use;
  cpu->ResetPeakBytesInUse();
  auto out = executor.Run(*prepared, scope, {{"x", x}}, {"t99"});
  EXPECT_TRUE(out.ok()) << out.status();
  return cpu->stats().peak_bytes_in_use - before;
}

TEST(ExecutorTest, FreesTemporariesAfterTheirLastUse) {
  constexpr int64_t kTensorBytes = 64 * 64 * 4;
  const NetDef net = Chain(100);
  const int64_t freeing = PeakGrowth(Executor(), net);
  ExecutorOptions keep;
  keep.run.free_dead_tensors = false;
  const int64_t keeping = PeakGrowth(Executor(keep), net);
  // Freeing: an op's input and output, plus a little for the run itself.
  EXPECT_LE(freeing, 3 * kTensorBytes);
  // Keeping: every one of the 100 intermediates.
  EXPECT_GE(keeping, 100 * kTensorBytes);
}

ExecutorOptions ServingOptions() {
  ExecutorOptions options;
  options.run.keep_buffers_between_runs = true;
  options.run.resolve_persistables_once = true;
  return options;
}

TEST(ExecutorTest, KeptBuffersMakeARepeatedRunAllocateNothing) {
  const Executor executor(ServingOptions());
  auto prepared = executor.Prepare(Chain(10), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  // Filled with 1/64, every t_i (a product with x) is 1/64 too.
  const Tensor x =
      MakeTensor<float>({64, 64}, std::vector<float>(64 * 64, 1.0f / 64));
  Scope scope;
  Allocator* cpu = *GetAllocator(CPUPlace());
  for (int run = 0; run < 3; ++run) {
    const int64_t before = cpu->stats().num_allocations;
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, scope, {{"x", x}}, {"t9"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FLOAT_EQ(Values<float>((*out)[0])[0], 1.0f / 64);
    const int64_t allocated = cpu->stats().num_allocations - before;
    // The first run allocates every temporary; later ones only the fetched
    // t9, whose buffer the caller held during the run that follows.
    if (run == 0) {
      EXPECT_GE(allocated, 10);
    } else {
      EXPECT_LE(allocated, 1);
    }
  }
  // The caller's input is not held after the run.
  EXPECT_TRUE(x.OwnsBufferAlone());
  // Other values through the kept buffers: t0 = 4/64, then doubling.
  const Tensor y =
      MakeTensor<float>({64, 64}, std::vector<float>(64 * 64, 2.0f / 64));
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, {{"x", y}}, {"t9"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ(Values<float>((*out)[0])[5], 4.0f / 64 * 512);
}

// A chain of `n` adds of x on [4, 4] tensors: t_i = x * (i + 2).
NetDef SmallAddChain(int n) {
  std::string text =
      "blocks { vars { name: 'x' dtype: DATA_TYPE_FLOAT32 shape: [4, 4] }";
  for (int i = 0; i < n; ++i) {
    const std::string in = i == 0 ? "x" : absl::StrCat("t", i - 1);
    absl::StrAppend(&text, " ops { type: 'add' inputs { slot: 'X' vars: '", in,
                    "' } inputs { slot: 'Y' vars: 'x' } outputs { slot: ",
                    "'Out' vars: 't", i, "' } }");
  }
  // reshape's output views t3's buffer. t3 dies right after it; the adds
  // that follow must not be handed that buffer while the view lives.
  absl::StrAppend(&text,
                  " ops { type: 'reshape' inputs { slot: 'X' vars: 't3' } "
                  "outputs { slot: 'Out' vars: 'view' } attrs { name: "
                  "'shape' ints { values: [16] } } }");
  for (int i = n; i < n + 4; ++i) {
    absl::StrAppend(&text, " ops { type: 'add' inputs { slot: 'X' vars: 't",
                    i - 1, "' } inputs { slot: 'Y' vars: 'x' } outputs { ",
                    "slot: 'Out' vars: 't", i, "' } }");
  }
  absl::StrAppend(&text,
                  " ops { type: 'reshape' inputs { slot: 'X' vars: 'view' } "
                  "outputs { slot: 'Out' vars: 'view_again' } attrs { name: "
                  "'shape' ints { values: [4, 4] } } }");
  return Net(text + " }");
}

TEST(ExecutorTest, DeadSmallTemporariesLendTheirBuffersToLaterOutputs) {
  const Executor executor;
  constexpr int kAdds = 20;
  auto prepared = executor.Prepare(SmallAddChain(kAdds), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const Tensor x = MakeTensor<float>({4, 4}, std::vector<float>(16, 0.5f));
  Scope scope;
  Allocator* cpu = *GetAllocator(CPUPlace());
  const int64_t before = cpu->stats().num_allocations;
  const int64_t live_before = cpu->stats().live_allocations;
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, {{"x", x}},
                   {absl::StrCat("t", kAdds + 3), "view_again", "t2"});
  ASSERT_TRUE(out.ok()) << out.status();
  // Each value is what the chain computes: no output was written into a
  // buffer still read, fetched or viewed.
  EXPECT_THAT(Values<float>((*out)[0]),
              ::testing::Each(0.5f * (kAdds + 3 + 2)));
  EXPECT_THAT(Values<float>((*out)[1]), ::testing::Each(0.5f * 5));
  EXPECT_THAT(Values<float>((*out)[2]), ::testing::Each(0.5f * 4));
  // 24 adds, but the buffers of dead temporaries went round: a handful of
  // allocations, not one per op.
  EXPECT_LE(cpu->stats().num_allocations - before, 6);
  // What the run kept was freed at its end; only the fetches remain.
  out->clear();
  EXPECT_EQ(cpu->stats().live_allocations, live_before);
}

TEST(ExecutorTest, ParametersResolvedOnceStillReadTheirCurrentValues) {
  const Executor executor(ServingOptions());
  Scope root;
  ASSERT_TRUE(
      executor
          .Run(*executor.Prepare(Net(kStartup), 0, CPUPlace()), root, {}, {})
          .ok());
  auto main = executor.Prepare(Net(kMain), 0, CPUPlace());
  ASSERT_TRUE(main.ok()) << main.status();
  const Tensor x = MakeTensor<float>({1, 3}, {1, 2, 3});
  auto first = executor.Run(*main, root, {{"x", x}}, {"h"});
  ASSERT_TRUE(first.ok()) << first.status();
  // h = x w + b with w all 0.5 and b all 1.
  EXPECT_FLOAT_EQ(Values<float>((*first)[0])[0], 4.0f);
  // Updating a parameter's values in place (as an optimizer does) is seen
  // by the next run through the resolved tensor.
  Tensor* w = *root.FindVar("w")->GetMutable<Tensor>();
  for (int64_t i = 0; i < w->numel(); ++i) w->data<float>()[i] = 1.0f;
  auto second = executor.Run(*main, root, {{"x", x}}, {"h"});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FLOAT_EQ(Values<float>((*second)[0])[0], 7.0f);
}

TEST(ExecutorTest, ConcurrentRunsEqualTheSingleThreadedResult) {
  Executor executor;
  Scope root;
  ASSERT_TRUE(
      executor
          .Run(*executor.Prepare(Net(kStartup), 0, CPUPlace()), root, {}, {})
          .ok());
  auto main = executor.Prepare(Net(kMain), 0, CPUPlace());
  ASSERT_TRUE(main.ok());
  auto input = [](int t) {
    return MakeTensor<float>({2, 3}, {1.0f * t, 2, 3, 0, 1, 2.0f * t});
  };
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < 4; ++t) {
    auto out = executor.Run(*main, root, {{"x", input(t)}}, {"gram"});
    ASSERT_TRUE(out.ok());
    expected.push_back(Values<float>((*out)[0]));
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        auto out = executor.Run(*main, root, {{"x", input(t)}}, {"gram"});
        if (!out.ok() || Values<float>((*out)[0]) != expected[t]) {
          ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ElementsAre(0, 0, 0, 0));
  // At most as many run scopes as ran at once are kept.
  EXPECT_LE(root.num_kids(), 4);
}

}  // namespace
}  // namespace scopeflow
