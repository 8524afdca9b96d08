#include "framework/op_test_util.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/net_io.h"
#include "google/protobuf/text_format.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<NetDef> OneOpNet(const std::string& op_text,
                                const std::vector<VarDecl>& vars) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name("one_op");
  BlockDef* block = net.add_blocks();
  for (const VarDecl& decl : vars) {
    VarDef* var = block->add_vars();
    var->set_name(decl.name);
    var->set_dtype(decl.dtype);
    for (int64_t d : decl.shape) var->add_shape(d);
  }
  if (!google::protobuf::TextFormat::ParseFromString(op_text,
                                                     block->add_ops())) {
    return absl::InvalidArgumentError(
        absl::StrCat("test op is not a valid OpDef: ", op_text));
  }
  return net;
}

std::vector<VarDecl> DeclareFeeds(const std::vector<Feed>& feeds) {
  std::vector<VarDecl> vars;
  for (const Feed& feed : feeds) {
    vars.push_back({feed.name, feed.tensor.dtype(),
                    std::vector<int64_t>(feed.tensor.dims().begin(),
                                         feed.tensor.dims().end())});
  }
  return vars;
}

namespace {

absl::StatusOr<PreparedNet> PrepareDeclared(const std::string& op_text,
                                            const std::vector<VarDecl>& vars) {
  SF_ASSIGN_OR_RETURN(NetDef net, OneOpNet(op_text, vars));
  return Executor().Prepare(net, 0, CPUPlace());
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches) {
  return RunDeclared(op_text, DeclareFeeds(feeds), feeds, fetches);
}

absl::Status PrepareOp(const std::string& op_text,
                       const std::vector<Feed>& feeds) {
  return PrepareDeclared(op_text, DeclareFeeds(feeds)).status();
}

absl::StatusOr<VarInfo> InferAtPrepare(const std::string& op_text,
                                       const std::vector<VarDecl>& vars,
                                       const std::string& var) {
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, PrepareDeclared(op_text, vars));
  const int v = prepared.VarIndex(var);
  SF_CHECK(v >= 0, "the net has no variable \"%s\"", var);
  return prepared.var_infos()[v];
}

absl::StatusOr<VarInfo> InferAlone(const std::string& op_text,
                                   const std::vector<VarDecl>& vars,
                                   const std::string& var) {
  OpDef def;
  SF_CHECK(google::protobuf::TextFormat::ParseFromString(op_text, &def),
           "test op is not a valid OpDef: %s", op_text);
  PreparedOp op;
  op.spec = OpRegistry::Global().Find(def.type());
  SF_CHECK(op.spec != nullptr, "no op \"%s\"", def.type());
  std::vector<VarInfo> table;
  std::vector<std::string> names;
  for (const VarDecl& decl : vars) {
    table.push_back(VarInfo{decl.dtype,
                            Dims(decl.shape.begin(), decl.shape.end()),
                            !decl.shape.empty()});
    names.push_back(decl.name);
  }
  // Each variable named in a slot, an undeclared one with nothing known.
  auto bind = [&](const OpSlot& slot, int s,
                  std::vector<std::vector<int>>& bound) -> absl::Status {
    SF_CHECK(s >= 0, "op \"%s\" has no slot \"%s\"", def.type(), slot.slot());
    for (const std::string& name : slot.vars()) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        table.emplace_back();
        names.push_back(name);
        it = names.end() - 1;
      }
      bound[s].push_back(static_cast<int>(it - names.begin()));
    }
    return absl::OkStatus();
  };
  op.inputs.resize(op.spec->inputs().size());
  op.outputs.resize(op.spec->outputs().size());
  for (const OpSlot& slot : def.inputs()) {
    SF_RETURN_IF_ERROR(bind(slot, op.spec->InputIndex(slot.slot()), op.inputs));
  }
  for (const OpSlot& slot : def.outputs()) {
    SF_RETURN_IF_ERROR(
        bind(slot, op.spec->OutputIndex(slot.slot()), op.outputs));
  }
  for (const AttrDef& attr : def.attrs()) {
    const AttrSpec* spec = op.spec->FindAttr(attr.name());
    SF_CHECK(spec != nullptr, "no attribute \"%s\"", attr.name());
    SF_ASSIGN_OR_RETURN(AttrValue value, AttrValueFromProto(attr));
    SF_ASSIGN_OR_RETURN(value, ConvertAttrValue(value, spec->type));
    op.attrs.Set(attr.name(), std::move(value));
  }
  for (const AttrSpec& spec : op.spec->attrs()) {
    if (!op.attrs.Has(spec.name) && spec.default_value.has_value()) {
      op.attrs.Set(spec.name, *spec.default_value);
    }
  }
  InferContext context(op, table, names);
  SF_RETURN_IF_ERROR(op.spec->infer()(context));
  const auto it = std::find(names.begin(), names.end(), var);
  SF_CHECK(it != names.end(), "the op has no variable \"%s\"", var);
  return table[it - names.begin()];
}

absl::StatusOr<std::vector<Tensor>> RunDeclared(
    const std::string& op_text, const std::vector<VarDecl>& vars,
    const std::vector<Feed>& feeds, const std::vector<std::string>& fetches) {
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, PrepareDeclared(op_text, vars));
  Scope scope;
  return Executor().Run(prepared, scope, feeds, fetches);
}

int64_t CountMismatches(const std::vector<float>& actual,
                        const std::vector<double>& expected, double rel_tol,
                        std::string* first) {
  if (actual.size() != expected.size()) {
    *first = absl::StrFormat("sizes %d vs %d", actual.size(), expected.size());
    return static_cast<int64_t>(std::max(actual.size(), expected.size()));
  }
  int64_t mismatches = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i];
    const double e = expected[i];
    const bool match = std::isnan(e)
                           ? std::isnan(a)
                           : std::fabs(a - e) <= rel_tol * std::fabs(e);
    if (!match && mismatches++ == 0) {
      *first = absl::StrFormat("element %d: %.9g vs %.9g", i, a, e);
    }
  }
  return mismatches;
}

namespace {

// `n` values of T drawn uniformly from [-1, 1) with `seed`.
template <typename T>
std::vector<T> UniformValues(int64_t n, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<T> dist(T(-1), T(1));
  std::vector<T> values(n);
  for (T& v : values) v = dist(engine);
  return values;
}

}  // namespace

std::vector<double> RandomValues(int64_t n, uint32_t seed) {
  return UniformValues<double>(n, seed);
}

std::vector<float> RandomFloats(int64_t n, uint32_t seed) {
  return UniformValues<float>(n, seed);
}

std::vector<std::string> Bindings(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots) {
  std::vector<std::string> bindings;
  for (const OpSlot& slot : slots) {
    for (const std::string& var : slot.vars()) {
      bindings.push_back(slot.slot() + ": " + var);
    }
  }
  return bindings;
}

}  // namespace scopeflow
