#include "framework/onnx/onnx_importer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/net_io.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/fuse_decomposed.h"
#include "framework/onnx/import_context.h"
#include "framework/onnx/old_opsets.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/onnx/single_assignment.h"
#include "framework/onnx/subgraph.h"
#include "framework/param_io.h"
#include "platform/file.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using onnx_import::Converters;
using onnx_import::DataTypeFromOnnx;
using onnx_import::DeclareParam;
using onnx_import::GraphState;
using onnx_import::InfoFromOnnxType;
using onnx_import::NoConverterReason;
using onnx_import::NodeContext;
using onnx_import::TensorFromOnnx;

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string Describe(const ImportProblem& problem) {
  if (problem.node_index < 0) {
    return absl::StrFormat("%s \"%s\": %s", problem.op_type, problem.node_name,
                           problem.reason);
  }
  const std::string name = problem.node_name.empty()
                               ? std::string()
                               : absl::StrFormat(" \"%s\"", problem.node_name);
  return absl::StrFormat("node %d%s (%s, opset %d): %s", problem.node_index,
                         name, problem.op_type, problem.opset, problem.reason);
}

// OK unless the converted output contradicts the model's declaration of
// it: another dtype, rank or known dimension. That would be a converter bug
// (or a model declaring wrongly), better caught here than by a caller.
absl::Status CheckDeclaredOutput(const VarInfo& converted,
                                 const VarInfo& declared) {
  bool agrees = converted.dtype == DATA_TYPE_UNSPECIFIED ||
                declared.dtype == DATA_TYPE_UNSPECIFIED ||
                converted.dtype == declared.dtype;
  if (converted.has_dims && declared.has_dims) {
    agrees = agrees && converted.dims.size() == declared.dims.size();
    for (size_t d = 0; agrees && d < converted.dims.size(); ++d) {
      agrees = converted.dims[d] < 0 || declared.dims[d] < 0 ||
               converted.dims[d] == declared.dims[d];
    }
  }
  if (agrees) return absl::OkStatus();
  auto describe = [](const VarInfo& info) {
    return absl::StrCat(DataTypeName(info.dtype), " ",
                        info.has_dims ? DimsToString(info.dims) : "[?]");
  };
  return absl::InternalError(
      absl::StrFormat("the conversion makes it %s, but the model declares %s",
                      describe(converted), describe(declared)));
}

// The error of a failed import: every problem, one per line; Internal if
// some problem is a converter bug, InvalidArgument if some is a malformed
// model, Unimplemented if each is something scopeflow lacks.
absl::Status ImportError(const std::string& graph_name, int64_t opset,
                         int node_count,
                         const std::vector<ImportProblem>& problems,
                         int downstream = 0) {
  absl::StatusCode code = absl::StatusCode::kUnimplemented;
  int failed_nodes = 0;
  for (const ImportProblem& problem : problems) {
    if (problem.node_index >= 0) ++failed_nodes;
    if (problem.code == absl::StatusCode::kInternal) {
      code = absl::StatusCode::kInternal;
    } else if (problem.code != absl::StatusCode::kUnimplemented &&
               code == absl::StatusCode::kUnimplemented) {
      code = absl::StatusCode::kInvalidArgument;
    }
  }
  std::string message = absl::StrFormat(
      "cannot import ONNX graph \"%s\" (opset %d): %d of %d node(s) cannot "
      "be converted%s:",
      graph_name, opset, failed_nodes, node_count,
      absl::StrCat(
          failed_nodes < static_cast<int>(problems.size())
              ? absl::StrFormat(", %d other problem(s)",
                                problems.size() - failed_nodes)
              : "",
          downstream > 0
              ? absl::StrFormat(
                    " (and %d node(s) downstream that read values these "
                    "leave unknown, not listed)",
                    downstream)
              : ""));
  for (const ImportProblem& problem : problems) {
    absl::StrAppend(&message, "\n  ", Describe(problem));
  }
  return absl::Status(code, message);
}

}  // namespace

absl::StatusOr<ImportedModel> ImportOnnx(const onnx::ModelProto& model,
                                         const ImportOptions& options,
                                         ImportReport* report) {
  ImportReport local_report;
  ImportReport& out_report = report != nullptr ? *report : local_report;
  out_report = ImportReport();
  SF_CHECK(model.has_graph(), "the ONNX model has no graph");
  const onnx::GraphProto& graph = model.graph();
  std::optional<int64_t> opset;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (IsDefaultDomain(id.domain())) opset = id.version();
  }
  const std::string graph_name =
      graph.name().empty() ? std::string("onnx_model") : graph.name();
  if (!opset.has_value() && model.opset_import_size() > 0) {
    // Valid ONNX whose nodes all come from other domains (ai.onnx.ml,
    // ai.onnx.preview.training), none of which scopeflow converts.
    std::vector<std::string> domains;
    for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
      domains.push_back(absl::StrFormat("%s %d", id.domain(), id.version()));
    }
    ImportProblem problem;
    problem.op_type = "model";
    problem.node_name = graph_name;
    problem.reason = absl::StrFormat(
        "the model imports only the domain(s) %s and no version of the "
        "default ONNX domain; scopeflow converts the default domain only",
        absl::StrJoin(domains, ", "));
    out_report.problems.push_back(problem);
    return ImportError(graph_name, 0, graph.node_size(), out_report.problems);
  }
  SF_CHECK(opset.has_value(),
           "the ONNX model imports no version of the default domain "
           "(opset_import)");
  // Models older than kMinOnnxOpset import node by node: those of ops
  // unchanged since their opset convert (framework/onnx/old_opsets.h).
  if (*opset < onnx_import::kOldestOnnxOpset || *opset > kMaxOnnxOpset) {
    ImportProblem problem;
    problem.op_type = "model";
    problem.node_name = graph_name;
    problem.opset = *opset;
    problem.reason = absl::StrFormat(
        "default-domain opset %d is outside the supported range %d to %d",
        *opset, onnx_import::kOldestOnnxOpset, kMaxOnnxOpset);
    out_report.problems.push_back(problem);
    return ImportError(graph_name, *opset, graph.node_size(),
                       out_report.problems);
  }

  SF_RETURN_IF_ERROR(onnx_import::CheckSingleAssignment(graph));

  ImportedModel result;
  result.net.set_format_version(kNetFormatVersion);
  result.net.set_name(graph_name);
  GraphState state(options);
  state.opset = *opset;
  state.net = &result.net;
  state.block = result.net.add_blocks();
  std::vector<ImportProblem>& problems = out_report.problems;
  auto graph_problem = [&](const char* what, const std::string& name,
                           const absl::Status& status) {
    ImportProblem problem;
    problem.op_type = what;
    problem.node_name = name;
    problem.opset = *opset;
    problem.code = status.code();
    problem.reason = std::string(status.message());
    problems.push_back(std::move(problem));
  };

  // Every value name of the model, so that temporaries avoid them.
  for (const onnx::ValueInfoProto& value : graph.input()) {
    state.used_names.insert(value.name());
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    state.used_names.insert(tensor.name());
  }
  onnx_import::CollectValueNames(graph, state.used_names);
  for (const onnx::ValueInfoProto& value : graph.value_info()) {
    state.declared[value.name()] = InfoFromOnnxType(value.type());
  }
  for (const onnx::ValueInfoProto& value : graph.output()) {
    state.declared[value.name()] = InfoFromOnnxType(value.type());
  }

  absl::flat_hash_set<std::string> graph_inputs;
  for (const onnx::ValueInfoProto& value : graph.input()) {
    graph_inputs.insert(value.name());
  }
  for (const auto& [name, tensor] : options.constant_inputs) {
    SF_CHECK(graph_inputs.contains(name),
             "ImportOptions::constant_inputs names \"%s\", which is not a "
             "graph input",
             name);
    state.constants[name] = tensor;
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    SF_CHECK(!tensor.name().empty(), "an initializer has no name");
    SF_CHECK(!state.constants.contains(tensor.name()) &&
                 !state.bad_constants.contains(tensor.name()),
             "initializer \"%s\" is defined twice", tensor.name());
    absl::StatusOr<Tensor> value = TensorFromOnnx(tensor);
    if (value.ok()) {
      state.constants[tensor.name()] = *std::move(value);
    } else {
      state.bad_constants[tensor.name()] = value.status();
    }
  }
  // Graph inputs with an initializer are parameters whose default the
  // initializer gives (IR version < 4 lists every initializer as an input).
  for (const onnx::ValueInfoProto& value : graph.input()) {
    const std::string& name = value.name();
    if (state.constants.contains(name) || state.bad_constants.contains(name)) {
      continue;
    }
    // An optional tensor input imports as the tensor, which must be fed:
    // scopeflow has no empty values at run time, so every run sees it
    // present (OptionalHasElement of it is true).
    const onnx::TypeProto& type =
        value.type().has_optional_type() &&
                value.type().optional_type().elem_type().has_tensor_type()
            ? value.type().optional_type().elem_type()
            : value.type();
    if (!type.has_tensor_type()) {
      const char* kind = value.type().has_sequence_type()
                             ? "a sequence"
                         : value.type().has_optional_type()
                             ? "an optional of a sequence"
                             : "not a tensor";
      graph_problem(
          "graph input", name,
          onnx_import::Unsupported(absl::StrCat(
              kind,
              ": scopeflow has no sequence, map or sparse graph inputs (a "
              "sequence exists only inside a Loop's conversion; an "
              "optional tensor imports as the tensor)")));
      state.tainted.insert(name);
      continue;
    }
    absl::StatusOr<DataType> dtype =
        DataTypeFromOnnx(type.tensor_type().elem_type());
    if (!dtype.ok()) {
      graph_problem("graph input", name, dtype.status());
      state.tainted.insert(name);
      continue;
    }
    const VarInfo info = InfoFromOnnxType(type);
    VarDef* var = state.block->add_vars();
    var->set_name(name);
    var->set_kind(VAR_KIND_DENSE_TENSOR);
    var->set_dtype(*dtype);
    for (int64_t d : info.dims) var->add_shape(d);
    onnx_import::SetDimNames(type, *var);
    state.infos[name] = info;
    state.fed_inputs.insert(name);
    result.inputs.push_back(name);
  }

  onnx_import::FusedNodes nodes;
  if (options.fuse_decomposed) {
    nodes = onnx_import::FuseDecomposedNodes(graph);
  } else {
    nodes.nodes.assign(graph.node().begin(), graph.node().end());
    for (int i = 0; i < graph.node_size(); ++i) nodes.source.push_back(i);
  }
  for (size_t n = 0; n < nodes.nodes.size(); ++n) {
    const onnx::NodeProto& node = nodes.nodes[n];
    const int i = nodes.source[n];
    // Whether the node reads a value an earlier problem left unknown. A
    // node that nothing converts fails whatever it reads: not downstream.
    // (Subgraphs may read enclosing values by name.)
    absl::flat_hash_set<std::string> reads(node.input().begin(),
                                           node.input().end());
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) onnx_import::CollectValueNames(attr.g(), reads);
    }
    const bool downstream =
        IsDefaultDomain(node.domain()) &&
        Converters().contains(node.op_type()) &&
        absl::c_any_of(reads, [&](const std::string& name) {
          return state.tainted.contains(name);
        });
    NodeContext context(state, node);
    const absl::Status status = onnx_import::ConvertNode(node, context);
    if (status.ok()) continue;
    context.Taint();
    ImportProblem problem;
    problem.node_index = i;
    problem.node_name = node.name();
    problem.op_type = node.op_type();
    problem.opset = *opset;
    problem.code = status.code();
    problem.reason = std::string(status.message());
    // Lacking what the unknown value would tell (its rank, say), the node
    // fails as a consequence; a malformed node is reported all the same.
    if (downstream && status.code() == absl::StatusCode::kUnimplemented) {
      out_report.downstream.push_back(std::move(problem));
    } else {
      problems.push_back(std::move(problem));
    }
  }

  for (const onnx::ValueInfoProto& value : graph.output()) {
    const std::string& name = value.name();
    result.outputs.push_back(name);
    if (state.tainted.contains(name)) continue;
    auto info = state.infos.find(name);
    if (info != state.infos.end()) {
      const absl::Status agrees =
          CheckDeclaredOutput(info->second, InfoFromOnnxType(value.type()));
      if (!agrees.ok()) graph_problem("graph output", name, agrees);
      continue;
    }
    auto constant = state.constants.find(name);
    if (constant != state.constants.end()) {
      // A constant output (a Constant node's) is a parameter to fetch.
      DeclareParam(state, name, constant->second);
      continue;
    }
    auto bad = state.bad_constants.find(name);
    graph_problem("graph output", name,
                  bad != state.bad_constants.end()
                      ? bad->second
                      : absl::InvalidArgumentError(
                            "no node, initializer or graph input produces it"));
  }

  for (const std::string& name : result.inputs) {
    if (absl::c_linear_search(state.inputs_needed_as_constants, name)) {
      out_report.inputs_needed_as_constants.push_back(name);
    }
  }
  // Every unknown value comes from a listed problem, so `downstream` is
  // empty without one; checked anyway, as a model must not import with a
  // node left out.
  if (!problems.empty() || !out_report.downstream.empty()) {
    return ImportError(graph_name, *opset, graph.node_size(), problems,
                       static_cast<int>(out_report.downstream.size()));
  }
  result.params = std::move(state.params);
  if (options.fold_constants) {
    onnx_import::RemoveUnreadOps(
        {result.outputs.begin(), result.outputs.end()}, *state.block,
        result.params);
  }
  return result;
}

absl::StatusOr<onnx::ModelProto> ReadOnnxModel(const std::string& path) {
  SF_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  onnx::ModelProto model;
  SF_CHECK(model.ParseFromString(bytes), "%s: not a serialized onnx.ModelProto",
           path);
  const absl::Status loaded = LoadOnnxExternalData(model, path);
  if (!loaded.ok()) {
    return absl::Status(loaded.code(),
                        absl::StrCat(path, ": ", loaded.message()));
  }
  return model;
}

absl::StatusOr<Tensor> ReadOnnxTensor(const std::string& path) {
  SF_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  onnx::TensorProto proto;
  SF_CHECK(proto.ParseFromString(bytes),
           "%s: not a serialized onnx.TensorProto", path);
  absl::StatusOr<Tensor> tensor = TensorFromOnnx(proto);
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        absl::StrCat(path, ": ", tensor.status().message()));
  }
  return tensor;
}

absl::StatusOr<std::optional<Tensor>> ReadOnnxOptionalTensor(
    const std::string& path) {
  SF_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  onnx::OptionalProto proto;
  SF_CHECK(proto.ParseFromString(bytes),
           "%s: not a serialized onnx.OptionalProto", path);
  if (proto.elem_type() == 0) return std::optional<Tensor>();
  if (proto.elem_type() != 1 || !proto.has_tensor_value()) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: an optional of element kind %d, not a tensor (1)", path,
        proto.elem_type()));
  }
  absl::StatusOr<Tensor> tensor = TensorFromOnnx(proto.tensor_value());
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        absl::StrCat(path, ": ", tensor.status().message()));
  }
  return std::optional<Tensor>(*std::move(tensor));
}

absl::Status AddParamsToScope(const ImportedModel& model, Scope& scope) {
  for (const NamedTensor& param : model.params) {
    SF_ASSIGN_OR_RETURN(Tensor * tensor,
                        scope.Var(param.name)->GetMutable<Tensor>());
    tensor->ShareBufferWith(param.tensor);
  }
  return absl::OkStatus();
}

absl::Status SaveImportedParams(const ImportedModel& model,
                                const std::string& path) {
  Scope scope;
  SF_RETURN_IF_ERROR(AddParamsToScope(model, scope));
  std::vector<std::string> names;
  names.reserve(model.params.size());
  for (const NamedTensor& param : model.params) names.push_back(param.name);
  return SaveParams(scope, names, path);
}

}  // namespace scopeflow
