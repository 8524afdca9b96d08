#include "framework/onnx/single_assignment.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// Name -> what defined it ("graph input", "node 3 (Relu \"r\")"), for one
// graph; a subgraph sees its enclosing graphs through `outer`.
struct Definitions {
  const Definitions* outer = nullptr;
  std::string graph;
  absl::flat_hash_map<std::string, std::string> names;

  const std::string* Find(const std::string& name) const {
    for (const Definitions* d = this; d != nullptr; d = d->outer) {
      auto found = d->names.find(name);
      if (found != d->names.end()) return &found->second;
    }
    return nullptr;
  }
};

std::string GraphName(const onnx::GraphProto& graph) {
  return graph.name().empty() ? std::string("(unnamed)") : graph.name();
}

absl::Status Check(const onnx::GraphProto& graph, const Definitions* outer) {
  Definitions defined;
  defined.outer = outer;
  defined.graph = GraphName(graph);
  const auto twice = [&](const std::string& name, const std::string& first,
                         const std::string& second) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ONNX graph \"%s\" is not in single static assignment form: \"%s\" "
        "is written by %s and by %s (the ONNX checker rejects this)",
        defined.graph, name, first, second));
  };
  for (const onnx::ValueInfoProto& input : graph.input()) {
    const auto [first, added] =
        defined.names.emplace(input.name(), "a graph input");
    if (!added) return twice(input.name(), first->second, "a graph input");
  }
  absl::flat_hash_map<std::string, int> initializers;
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const std::string& name = graph.initializer(i).name();
    const auto [first, added] = initializers.emplace(name, i);
    if (!added) {
      return twice(name, absl::StrCat("initializer ", first->second),
                   absl::StrCat("initializer ", i));
    }
    defined.names.emplace(name, absl::StrCat("initializer ", i));
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto& node = graph.node(n);
    const std::string writer =
        node.name().empty() ? absl::StrFormat("node %d (%s)", n, node.op_type())
                            : absl::StrFormat("node %d (%s \"%s\")", n,
                                              node.op_type(), node.name());
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) SF_RETURN_IF_ERROR(Check(attr.g(), &defined));
      for (const onnx::GraphProto& g : attr.graphs()) {
        SF_RETURN_IF_ERROR(Check(g, &defined));
      }
    }
    for (const std::string& output : node.output()) {
      if (output.empty()) continue;  // An omitted optional output.
      if (const std::string* first = defined.Find(output)) {
        return twice(output, *first, writer);
      }
      defined.names.emplace(output, writer);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSingleAssignment(const onnx::GraphProto& graph) {
  return Check(graph, nullptr);
}

}  // namespace onnx_import
}  // namespace scopeflow
