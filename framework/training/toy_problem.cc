#include "framework/training/toy_problem.h"

#include <random>

#include "absl/status/statusor.h"
#include "framework/net_io.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr char kToyStartup[] = R"pb(
  format_version: 1
  name: "toy_startup"
  blocks {
    vars {
      name: "w1"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 4, 8 ]
      persistable: true
    }
    vars {
      name: "b1"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 8 ]
      persistable: true
    }
    vars {
      name: "w2"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 8, 3 ]
      persistable: true
    }
    vars {
      name: "b2"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 3 ]
      persistable: true
    }
    ops {
      type: "gaussian_random"
      outputs { slot: "Out" vars: "w1" }
      attrs {
        name: "shape"
        i64s { values: [ 4, 8 ] }
      }
      attrs { name: "std" f: 0.5 }
      attrs { name: "seed" i: 1 }
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "b1" }
      attrs {
        name: "shape"
        i64s { values: [ 8 ] }
      }
      attrs { name: "value" f: 0 }
    }
    ops {
      type: "gaussian_random"
      outputs { slot: "Out" vars: "w2" }
      attrs {
        name: "shape"
        i64s { values: [ 8, 3 ] }
      }
      attrs { name: "std" f: 0.5 }
      attrs { name: "seed" i: 2 }
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "b2" }
      attrs {
        name: "shape"
        i64s { values: [ 3 ] }
      }
      attrs { name: "value" f: 0 }
    }
  }
)pb";

constexpr char kToyMain[] = R"pb(
  format_version: 1
  name: "toy"
  blocks {
    vars {
      name: "image"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 4 ]
    }
    vars {
      name: "label"
      dtype: DATA_TYPE_INT64
      shape: [ -1, 1 ]
    }
    vars {
      name: "w1"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 4, 8 ]
      persistable: true
    }
    vars {
      name: "b1"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 8 ]
      persistable: true
    }
    vars {
      name: "w2"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 8, 3 ]
      persistable: true
    }
    vars {
      name: "b2"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 3 ]
      persistable: true
    }
    ops {
      type: "fc"
      inputs { slot: "X" vars: "image" }
      inputs { slot: "W" vars: "w1" }
      inputs { slot: "Bias" vars: "b1" }
      outputs { slot: "Out" vars: "h" }
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "h" }
      outputs { slot: "Out" vars: "hr" }
    }
    ops {
      type: "fc"
      inputs { slot: "X" vars: "hr" }
      inputs { slot: "W" vars: "w2" }
      inputs { slot: "Bias" vars: "b2" }
      outputs { slot: "Out" vars: "logits" }
    }
    ops {
      type: "softmax_with_cross_entropy"
      inputs { slot: "Logits" vars: "logits" }
      inputs { slot: "Label" vars: "label" }
      outputs { slot: "Softmax" vars: "prob" }
      outputs { slot: "Loss" vars: "losses" }
    }
    ops {
      type: "mean"
      inputs { slot: "X" vars: "losses" }
      outputs { slot: "Out" vars: "loss" }
    }
    ops {
      type: "accuracy"
      inputs { slot: "Out" vars: "prob" }
      inputs { slot: "Label" vars: "label" }
      outputs { slot: "Accuracy" vars: "accuracy" }
    }
  }
)pb";

NetDef Parsed(const char* text) {
  absl::StatusOr<NetDef> net = ParseNetText(text);
  EXPECT_TRUE(net.ok()) << net.status();
  return net.ok() ? *net : NetDef();
}

}  // namespace

NetDef ToyStartupNet() { return Parsed(kToyStartup); }

NetDef ToyMainNet() { return Parsed(kToyMain); }

Dataset Clusters(int64_t n) {
  Dataset data;
  EXPECT_TRUE(data.features.Allocate(CPUPlace(), kFloat32, {n, 4}).ok());
  EXPECT_TRUE(data.labels.Allocate(CPUPlace(), kInt64, {n, 1}).ok());
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % 3;
    for (int64_t j = 0; j < 4; ++j) {
      data.features.data<float>()[i * 4 + j] =
          (j == label ? 2.0f : 0.0f) + noise(rng);
    }
    data.labels.data<int64_t>()[i] = label;
  }
  data.num_classes = 3;
  return data;
}

}  // namespace scopeflow
