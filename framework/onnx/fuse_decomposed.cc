#include "framework/onnx/fuse_decomposed.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// The graph's values: which node makes each, which read it, and the
// constants (initializers, Constant nodes) whose values are known.
class Values {
 public:
  explicit Values(const onnx::GraphProto& graph) : graph_(graph) {
    for (const onnx::TensorProto& tensor : graph.initializer()) {
      AddConstant(tensor.name(), tensor);
      initializers_.insert(tensor.name());
    }
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& node = graph.node(i);
      for (const std::string& name : node.input()) readers_[name].push_back(i);
      for (const std::string& name : node.output()) producer_[name] = i;
      if (node.op_type() == "Constant" && node.output_size() == 1) {
        for (const onnx::AttributeProto& attr : node.attribute()) {
          if (attr.name() == "value" && attr.has_t()) {
            AddConstant(node.output(0), attr.t());
          }
        }
      }
    }
    for (const onnx::ValueInfoProto& value : graph.output()) {
      outputs_.insert(value.name());
    }
  }

  const onnx::NodeProto& node(int i) const { return graph_.node(i); }

  // The node making `name`, of type `type`, or -1.
  int Producer(const std::string& name, const char* type) const {
    auto it = producer_.find(name);
    if (it == producer_.end() || node(it->second).op_type() != type) return -1;
    return it->second;
  }

  // The one node reading `name` (once), of type `type`, where `name` is no
  // graph output; else -1.
  int OnlyReader(const std::string& name, const char* type) const {
    if (outputs_.contains(name)) return -1;
    auto it = readers_.find(name);
    if (it == readers_.end() || it->second.size() != 1) return -1;
    const int reader = it->second[0];
    return node(reader).op_type() == type ? reader : -1;
  }

  const std::vector<int>& Readers(const std::string& name) const {
    static const std::vector<int> kNone;
    auto it = readers_.find(name);
    return it == readers_.end() ? kNone : it->second;
  }
  bool IsOutput(const std::string& name) const {
    return outputs_.contains(name);
  }

  // A floating-point constant of one element.
  std::optional<double> Scalar(const std::string& name) const {
    auto it = constants_.find(name);
    if (it == constants_.end() || it->second.numel() != 1) return {};
    const Tensor& t = it->second;
    if (t.dtype() == kFloat32) return t.data<float>()[0];
    if (t.dtype() == kFloat64) return t.data<double>()[0];
    return {};
  }

  // Whether `name` is an initializer (or an Identity of one) of one dim
  // holding more than one element; its element count.
  std::optional<int64_t> Vector(const std::string& name) const {
    std::string source = name;
    for (int hops = 0; hops < 8; ++hops) {
      const int identity = Producer(source, "Identity");
      if (identity < 0) break;
      source = node(identity).input(0);
    }
    if (!initializers_.contains(source)) return {};
    const Tensor& t = constants_.at(source);
    if (t.dims().size() != 1 || t.numel() < 2) return {};
    return t.numel();
  }

 private:
  void AddConstant(const std::string& name, const onnx::TensorProto& proto) {
    absl::StatusOr<Tensor> value = TensorFromOnnx(proto);
    if (value.ok()) constants_[name] = *std::move(value);
  }

  const onnx::GraphProto& graph_;
  absl::flat_hash_map<std::string, std::vector<int>> readers_;
  absl::flat_hash_map<std::string, int> producer_;
  absl::flat_hash_map<std::string, Tensor> constants_;
  absl::flat_hash_set<std::string> initializers_;
  absl::flat_hash_set<std::string> outputs_;
};

bool Near(std::optional<double> value, double want) {
  return value.has_value() && std::fabs(*value - want) <= 1e-6 * want;
}

// For a binary node reading `operand`, the other operand, or "" where it
// reads `operand` on neither side or on both.
std::string Other(const onnx::NodeProto& node, const std::string& operand) {
  if (node.input_size() != 2 || node.input(0) == node.input(1)) return "";
  if (node.input(0) == operand) return node.input(1);
  if (node.input(1) == operand) return node.input(0);
  return "";
}

struct Chain {
  std::vector<int> nodes;  // the last is where the fused node goes
  onnx::NodeProto fused;
};

// A Mul reading `value` and the constant `factor`; its index or -1.
int MulByConstant(const Values& values, const std::string& value,
                  double factor) {
  const int mul = values.OnlyReader(value, "Mul");
  if (mul < 0 || !Near(values.Scalar(Other(values.node(mul), value)), factor)) {
    return -1;
  }
  return mul;
}

std::optional<Chain> MatchGelu(const Values& values, int erf) {
  const onnx::NodeProto& erf_node = values.node(erf);
  if (erf_node.input_size() != 1 || erf_node.output_size() != 1) return {};
  const std::string& scaled = erf_node.input(0);
  if (values.OnlyReader(scaled, "Erf") != erf) return {};
  std::string x;
  int scale = values.Producer(scaled, "Div");
  if (scale >= 0) {
    const onnx::NodeProto& div = values.node(scale);
    if (div.input_size() != 2 || !Near(values.Scalar(div.input(1)), M_SQRT2)) {
      return {};
    }
    x = div.input(0);
  } else {
    scale = values.Producer(scaled, "Mul");
    if (scale < 0) return {};
    const onnx::NodeProto& mul = values.node(scale);
    if (mul.input_size() != 2) return {};
    const int c = Near(values.Scalar(mul.input(1)), M_SQRT1_2) ? 1
                  : Near(values.Scalar(mul.input(0)), M_SQRT1_2) ? 0
                                                                 : -1;
    if (c < 0) return {};
    x = mul.input(1 - c);
  }
  const int plus_one = values.OnlyReader(erf_node.output(0), "Add");
  if (plus_one < 0 ||
      !Near(values.Scalar(Other(values.node(plus_one), erf_node.output(0))),
            1.0)) {
    return {};
  }
  const std::string& gate = values.node(plus_one).output(0);
  const int product = values.OnlyReader(gate, "Mul");
  if (product < 0) return {};
  const std::string factor = Other(values.node(product), gate);
  Chain chain;
  chain.nodes = {scale, erf, plus_one};
  int last = -1;
  if (factor == x) {
    // Mul(Mul(x, a), 1/2).
    last = MulByConstant(values, values.node(product).output(0), 0.5);
    if (last < 0) return {};
    chain.nodes.push_back(product);
  } else {
    // Mul(Mul(x, 1/2), a).
    const int half = values.Producer(factor, "Mul");
    if (half < 0 || Other(values.node(half), x).empty() ||
        !Near(values.Scalar(Other(values.node(half), x)), 0.5) ||
        values.OnlyReader(factor, "Mul") != product) {
      return {};
    }
    chain.nodes.push_back(half);
    last = product;
  }
  chain.nodes.push_back(last);
  const onnx::NodeProto& last_node = values.node(last);
  if (last_node.output_size() != 1) return {};
  chain.fused.set_op_type("Gelu");
  chain.fused.set_name(last_node.name());
  chain.fused.add_input(x);
  chain.fused.add_output(last_node.output(0));
  return chain;
}

// Whether a ReduceMean node averages over the last axis only, keeping it.
bool MeansLastAxis(const onnx::NodeProto& node) {
  if (node.input_size() != 1) return false;  // axes as an input: opset 18
  bool last_axis = false;
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == "axes") {
      last_axis = attr.ints_size() == 1 && attr.ints(0) == -1;
    } else if (attr.name() == "keepdims") {
      if (attr.i() != 1) return false;
    } else {
      return false;
    }
  }
  return last_axis;
}

std::optional<Chain> MatchLayerNorm(const Values& values, int mean) {
  const onnx::NodeProto& mean_node = values.node(mean);
  if (!MeansLastAxis(mean_node) || mean_node.output_size() != 1) return {};
  const std::string& x = mean_node.input(0);
  const int sub = values.OnlyReader(mean_node.output(0), "Sub");
  if (sub < 0 || values.node(sub).input(0) != x ||
      values.node(sub).input(1) != mean_node.output(0)) {
    return {};
  }
  const std::string& centered = values.node(sub).output(0);
  const std::vector<int>& readers = values.Readers(centered);
  if (values.IsOutput(centered) || readers.size() != 2) return {};
  int pow = readers[0], div = readers[1];
  if (values.node(pow).op_type() != "Pow") std::swap(pow, div);
  const onnx::NodeProto& pow_node = values.node(pow);
  const onnx::NodeProto& div_node = values.node(div);
  if (pow_node.op_type() != "Pow" || div_node.op_type() != "Div" ||
      pow_node.input(0) != centered || !Near(values.Scalar(pow_node.input(1)), 2.0) ||
      div_node.input(0) != centered) {
    return {};
  }
  const int variance = values.OnlyReader(pow_node.output(0), "ReduceMean");
  if (variance < 0 || !MeansLastAxis(values.node(variance))) return {};
  const std::string& var_out = values.node(variance).output(0);
  const int add_eps = values.OnlyReader(var_out, "Add");
  if (add_eps < 0) return {};
  const std::optional<double> epsilon =
      values.Scalar(Other(values.node(add_eps), var_out));
  if (!epsilon.has_value() || !(*epsilon >= 0)) return {};
  const int sqrt = values.OnlyReader(values.node(add_eps).output(0), "Sqrt");
  if (sqrt < 0 ||
      values.OnlyReader(values.node(sqrt).output(0), "Div") != div ||
      div_node.input(1) != values.node(sqrt).output(0)) {
    return {};
  }
  const std::string& normalized = div_node.output(0);
  const int scale = values.OnlyReader(normalized, "Mul");
  if (scale < 0) return {};
  const std::string gamma = Other(values.node(scale), normalized);
  const int shift = values.OnlyReader(values.node(scale).output(0), "Add");
  if (shift < 0) return {};
  const std::string beta =
      Other(values.node(shift), values.node(scale).output(0));
  const std::optional<int64_t> gamma_size = values.Vector(gamma);
  if (!gamma_size.has_value() || values.Vector(beta) != gamma_size) return {};
  Chain chain;
  chain.nodes = {mean, sub, pow, variance, add_eps, sqrt, div, scale, shift};
  const onnx::NodeProto& last = values.node(shift);
  chain.fused.set_op_type("LayerNormalization");
  chain.fused.set_name(last.name());
  chain.fused.add_input(x);
  chain.fused.add_input(gamma);
  chain.fused.add_input(beta);
  chain.fused.add_output(last.output(0));
  onnx::AttributeProto* axis = chain.fused.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-1);
  onnx::AttributeProto* eps = chain.fused.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(static_cast<float>(*epsilon));
  return chain;
}

}  // namespace

FusedNodes FuseDecomposedNodes(const onnx::GraphProto& graph) {
  const Values values(graph);
  const int n = graph.node_size();
  // Per node: -1 kept, -2 removed, else the index of the chain placed here.
  std::vector<int> fate(n, -1);
  std::vector<Chain> chains;
  FusedNodes fused;
  for (int i = 0; i < n; ++i) {
    const std::string& type = graph.node(i).op_type();
    if (!graph.node(i).domain().empty() && graph.node(i).domain() != "ai.onnx") {
      continue;
    }
    std::optional<Chain> chain;
    if (type == "Erf") chain = MatchGelu(values, i);
    if (type == "ReduceMean") chain = MatchLayerNorm(values, i);
    if (!chain.has_value()) continue;
    bool taken = false;
    for (int node : chain->nodes) taken |= fate[node] != -1;
    if (taken) continue;
    for (int node : chain->nodes) fate[node] = -2;
    // The inputs of the chain come before its first node; its output is
    // the last node's, so the fused node goes where the last one was.
    int last = chain->nodes[0];
    for (int node : chain->nodes) last = std::max(last, node);
    fate[last] = static_cast<int>(chains.size());
    (type == "Erf" ? fused.gelus : fused.layer_norms) += 1;
    chains.push_back(*std::move(chain));
  }
  for (int i = 0; i < n; ++i) {
    if (fate[i] == -2) continue;
    fused.nodes.push_back(fate[i] == -1 ? graph.node(i)
                                        : chains[fate[i]].fused);
    fused.source.push_back(i);
  }
  return fused;
}

}  // namespace onnx_import
}  // namespace scopeflow
