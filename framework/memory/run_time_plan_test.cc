// Memory plans made at run time for the fed shapes: a net whose inputs
// have free dimensions (an imported model's batch) gets an arena per fed
// shape, reused for a repeated shape, bit-identical to runs without one;
// tensors whose shapes depend on values stay out of it.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/memory/memory_plan.h"
#include "framework/memory/memory_plan_cache.h"
#include "framework/memory/test_device.h"
#include "framework/net_io.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FloatProto;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::SetInt;
using onnx_testing::SetInts;
using onnx_testing::Values;

std::vector<float> Ramp(size_t n, float step, int period) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    values[i] = step * static_cast<float>(static_cast<int>(i % period) -
                                          period / 2);
  }
  return values;
}

// y = flatten(conv(relu(conv(x))) + relu(conv(x))) w: x [batch, 3, 16, 16]
// with a symbolic batch, flattened through a shape subgraph, as exporters
// write it; each activation is 8 KiB per sample, above the arena's
// smallest tensor.
onnx::ModelProto ConvModel() {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {-1, 3, 16, 16});
  AddInitializer(model, FloatProto("w1", {8, 3, 3, 3}, Ramp(216, 0.05f, 7)));
  AddInitializer(model, FloatProto("w2", {8, 8, 3, 3}, Ramp(576, 0.02f, 9)));
  AddInitializer(model, FloatProto("w3", {2048, 10}, Ramp(20480, 0.01f, 13)));
  SetInts(AddNode(model, "Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  AddNode(model, "Relu", {"c1"}, {"r"});
  SetInts(AddNode(model, "Conv", {"r", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  AddNode(model, "Add", {"c2", "r"}, {"s"});
  // f = reshape(s, [shape(s)[0], -1]), as torch exports x.view(n, -1).
  AddInitializer(model, Int64Proto("zero", {}, {0}));
  AddInitializer(model, Int64Proto("axes0", {1}, {0}));
  AddInitializer(model, Int64Proto("minus_one", {1}, {-1}));
  AddNode(model, "Shape", {"s"}, {"shape"});
  SetInt(AddNode(model, "Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  AddNode(model, "Unsqueeze", {"n", "axes0"}, {"n1"});
  SetInt(AddNode(model, "Concat", {"n1", "minus_one"}, {"flat_shape"}),
         "axis", 0);
  AddNode(model, "Reshape", {"s", "flat_shape"}, {"f"});
  AddNode(model, "MatMul", {"f", "w3"}, {"y"});
  AddOutput(model, "y");
  return model;
}

struct ImportedNet {
  ImportedModel model;
  std::unique_ptr<Scope> params;
};

ImportedNet Import() {
  absl::StatusOr<ImportedModel> model = ImportOnnx(ConvModel());
  EXPECT_TRUE(model.ok()) << model.status();
  ImportedNet net{*std::move(model), std::make_unique<Scope>()};
  EXPECT_TRUE(AddParamsToScope(net.model, *net.params).ok());
  return net;
}

// The run's infos where `input` holds `dims`: what a run fed so plans.
std::vector<VarInfo> FedInfos(const PreparedNet& prepared,
                              const std::string& input, Dims dims) {
  std::vector<VarInfo> infos = prepared.var_infos();
  infos[prepared.VarIndex(input)].dims = std::move(dims);
  return infos;
}

bool BitIdentical(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(RunTimePlanTest, AnImportedModelGetsAnArenaPerFedBatch) {
  const ImportedNet net = Import();
  const VarDef& x = net.model.net.blocks(0).vars(0);
  ASSERT_EQ(x.name(), "x");
  ASSERT_EQ(x.shape(0), -1);

  ExecutorOptions unplanned_options;
  unplanned_options.run.plan_memory = false;
  const Executor planned_executor;
  const Executor unplanned_executor(unplanned_options);
  absl::StatusOr<PreparedNet> planned = planned_executor.Prepare(net.model.net);
  absl::StatusOr<PreparedNet> unplanned =
      unplanned_executor.Prepare(net.model.net);
  ASSERT_TRUE(planned.ok()) << planned.status();
  ASSERT_TRUE(unplanned.ok()) << unplanned.status();
  // Prepare could not size the activations: nothing planned for them.
  EXPECT_TRUE(PlanMemory(*planned, {}, kSmallestArenaTensor).vars.empty());

  const std::string output = net.model.outputs[0];
  for (int64_t batch : {1, 3, 1, 3}) {
    SCOPED_TRACE(::testing::Message() << "batch " << batch);
    const Tensor input = MakeTensor<float>(
        {batch, 3, 16, 16}, Ramp(batch * 768, 0.1f, 17));
    absl::StatusOr<std::vector<Tensor>> with_arena =
        planned_executor.Run(*planned, *net.params, {{"x", input}}, {output});
    absl::StatusOr<std::vector<Tensor>> without =
        unplanned_executor.Run(*unplanned, *net.params, {{"x", input}},
                               {output});
    ASSERT_TRUE(with_arena.ok()) << with_arena.status();
    ASSERT_TRUE(without.ok()) << without.status();
    ASSERT_EQ((*with_arena)[0].dims(), (Dims{batch, 10}));
    EXPECT_TRUE(BitIdentical((*with_arena)[0], (*without)[0]));
  }
  // One plan per batch: the repeated ones were reused, and the runs
  // without an arena made none.
  EXPECT_EQ(planned->memory_plans().plans_made(), 2);
  EXPECT_EQ(unplanned->memory_plans().plans_made(), 0);
  for (int64_t batch : {1, 3}) {
    const std::shared_ptr<const MemoryPlan> plan = CachedMemoryPlan(
        *planned, FedInfos(*planned, "x", {batch, 3, 16, 16}));
    // The convolutions' and the add's outputs, 8 KiB per sample (and the
    // input in the layout the convolution wants); the fetched output and
    // the fed input are left out.
    EXPECT_GE(plan->vars.size(), 2u);
    EXPECT_GE(plan->arena.arena_bytes, static_cast<size_t>(batch) * 8192);
    EXPECT_EQ(plan->offset_of[planned->VarIndex(output)], -1);
    // The flattened activation's size came from the shape subgraph's
    // values, worked out from the fed shape.
    const int f = planned->VarIndex("f");
    ASSERT_GE(f, 0);
    EXPECT_GE(plan->offset_of[f], 0);
    EXPECT_EQ(plan->uses[plan->index_of[f]].bytes,
              static_cast<size_t>(batch) * 8192);
  }
  EXPECT_EQ(planned->memory_plans().plans_made(), 2);
}

// A budgeted run of the imported model is sized from the fed shapes too.
TEST(RunTimePlanTest, ABudgetedRunOfAnImportedModelIsSizedFromTheFeeds) {
  const ImportedNet net = Import();
  const std::string output = net.model.outputs[0];
  const Tensor input =
      MakeTensor<float>({2, 3, 16, 16}, Ramp(2 * 768, 0.1f, 17));
  const Executor unbudgeted;
  absl::StatusOr<PreparedNet> prepared = unbudgeted.Prepare(net.model.net);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  absl::StatusOr<std::vector<Tensor>> reference =
      unbudgeted.Run(*prepared, *net.params, {{"x", input}}, {output});
  ASSERT_TRUE(reference.ok()) << reference.status();
  // The matmul needs the most: f (16 KiB), w3 (80 KiB) and y.
  const size_t budget = 112 << 10;
  ExecutorOptions options;
  options.device_memory_budget = budget;
  auto device = std::make_shared<TestDevice>(budget);
  options.device_memory = device;
  const Executor budgeted(options);
  absl::StatusOr<std::vector<Tensor>> out =
      budgeted.Run(*prepared, *net.params, {{"x", input}}, {output});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(BitIdentical((*out)[0], (*reference)[0]));
  EXPECT_GT(device->stats().peak_bytes_in_use, 80 << 10);
  EXPECT_LE(device->stats().peak_bytes_in_use, static_cast<int64_t>(budget));
}

// a = 2x; b = relu(a); i = non_zero(a) (its size depends on a's values);
// f = cast(i); g = relu(b).
constexpr char kNonZero[] = R"pb(
  format_version: 1
  name: "values"
  blocks {
    vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ -1, 1024 ] }
    ops {
      type: "scale"
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "a" }
      attrs { name: "scale" f: 2 }
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "a" }
      outputs { slot: "Out" vars: "b" }
    }
    ops {
      type: "non_zero"
      inputs { slot: "X" vars: "a" }
      outputs { slot: "Out" vars: "i" }
    }
    ops {
      type: "cast"
      inputs { slot: "X" vars: "i" }
      outputs { slot: "Out" vars: "f" }
      attrs { name: "out_dtype" i: 1 }
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "b" }
      outputs { slot: "Out" vars: "g" }
    }
  })pb";

TEST(RunTimePlanTest, ShapesThatDependOnValuesStayOutOfTheArena) {
  absl::StatusOr<NetDef> net = ParseNetText(kNonZero);
  ASSERT_TRUE(net.ok()) << net.status();
  ExecutorOptions options = ExecutorOptions::AsWritten();
  const Executor executor(options);
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(*net);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const PreparedNet& p = *prepared;

  const std::vector<VarInfo> infos =
      InferFromShapes(p, FedInfos(p, "x", {4, 1024}));
  EXPECT_EQ(infos[p.VarIndex("b")].dims, (Dims{4, 1024}));
  EXPECT_FALSE(infos[p.VarIndex("i")].dims.size() == 2 &&
               infos[p.VarIndex("i")].dims[1] >= 0);
  const MemoryPlan plan = PlanMemoryFor(p, infos, {"f", "g"});
  for (const char* name : {"a", "b"}) {
    EXPECT_GE(plan.offset_of[p.VarIndex(name)], 0) << name;
  }
  for (const char* name : {"i", "f", "g", "x"}) {
    EXPECT_EQ(plan.offset_of[p.VarIndex(name)], -1) << name;
  }

  ExecutorOptions unplanned_options = options;
  unplanned_options.run.plan_memory = false;
  const Executor unplanned_executor(unplanned_options);
  Scope scope;
  for (int64_t batch : {2, 4}) {
    const Tensor x =
        MakeTensor<float>({batch, 1024}, Ramp(batch * 1024, 0.5f, 5));
    absl::StatusOr<std::vector<Tensor>> with_arena =
        executor.Run(p, scope, {{"x", x}}, {"f", "g"});
    absl::StatusOr<std::vector<Tensor>> without =
        unplanned_executor.Run(p, scope, {{"x", x}}, {"f", "g"});
    ASSERT_TRUE(with_arena.ok()) << with_arena.status();
    ASSERT_TRUE(without.ok()) << without.status();
    EXPECT_EQ((*with_arena)[0].dims()[0], 2);
    EXPECT_TRUE(BitIdentical((*with_arena)[0], (*without)[0]));
    EXPECT_TRUE(BitIdentical((*with_arena)[1], (*without)[1]));
  }
  EXPECT_EQ(p.memory_plans().plans_made(), 2);
}

TEST(MemoryPlanCacheTest, KeepsTheSignaturesUsedLast) {
  MemoryPlanCache cache(/*capacity=*/2);
  auto make = [] { return std::make_shared<const MemoryPlan>(); };
  const std::shared_ptr<const MemoryPlan> one = cache.Get({1, 1}, make);
  const std::shared_ptr<const MemoryPlan> two = cache.Get({2, 1}, make);
  EXPECT_NE(one, two);
  EXPECT_EQ(cache.Get({1, 1}, make), one);  // now used last
  EXPECT_EQ(cache.plans_made(), 2);
  cache.Get({3, 1}, make);  // drops {2, 1}
  EXPECT_EQ(cache.Get({1, 1}, make), one);
  EXPECT_EQ(cache.plans_made(), 3);
  EXPECT_NE(cache.Get({2, 1}, make), two);
  EXPECT_EQ(cache.plans_made(), 4);
}

}  // namespace
}  // namespace scopeflow
