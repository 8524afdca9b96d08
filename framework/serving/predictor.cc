#include "framework/serving/predictor.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/net_io.h"
#include "framework/param_io.h"
#include "platform/status_macros.h"

namespace scopeflow {

namespace {

// A Predictor owns its root scope and never erases a parameter while the
// model serves, and a serving process trades one run's temporaries per
// pooled scope for runs that neither allocate nor look parameters up.
ExecutorOptions ServingOptions() {
  ExecutorOptions options;
  options.run.keep_buffers_between_runs = true;
  options.run.resolve_persistables_once = true;
  return options;
}

}  // namespace

// Immutable once made, so shared by clones and runs without a lock.
struct Predictor::Model {
  Executor executor{ServingOptions()};
  // Declared before `prepared`, so destroyed after it: the run scopes the
  // executor keeps are kids of the pools' scopes, which are kids of root.
  std::unique_ptr<Scope> root;
  PreparedNet prepared;
  std::string name;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::vector<std::string> output_names;
};

namespace {

std::string ShapeString(const TensorInfo& info) {
  if (!info.has_dims) return "[?]";
  if (info.dim_names.size() != info.dims.size()) return DimsToString(info.dims);
  std::vector<std::string> dims;
  for (size_t d = 0; d < info.dims.size(); ++d) {
    dims.push_back(info.dim_names[d].empty() ? absl::StrCat(info.dims[d])
                                             : info.dim_names[d]);
  }
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// Whether `dims` fits `info`'s shape (-1 matches any size).
bool ShapeAdmits(const TensorInfo& info, absl::Span<const int64_t> dims) {
  if (!info.has_dims) return true;
  if (info.dims.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (info.dims[i] >= 0 && info.dims[i] != dims[i]) return false;
  }
  return true;
}

TensorInfo InfoOf(const PreparedNet& prepared, int v) {
  const VarInfo& var = prepared.var_infos()[v];
  return TensorInfo{prepared.var_names()[v], var.dtype,
                    var.has_dims ? var.dims : Dims(), var.has_dims};
}

// Each parameter the net reads must be in the root, as the net declares it;
// no op may write one, since concurrent runs share them.
absl::Status CheckParameters(const NetDef& net, const PreparedNet& prepared,
                             const Scope& root, const Place& place) {
  absl::flat_hash_map<std::string, const VarDef*> declared;
  for (const VarDef& var : net.blocks(0).vars()) declared[var.name()] = &var;
  auto persistable = [&](int v) {
    auto it = declared.find(prepared.var_names()[v]);
    return it != declared.end() && it->second->persistable();
  };
  std::vector<bool> read(prepared.var_names().size(), false);
  for (const PreparedOp& op : prepared.ops()) {
    for (const auto& slot : op.outputs) {
      for (int v : slot) {
        SF_CHECK(!persistable(v),
                 "net \"%s\": %s writes parameter \"%s\"; runs of a "
                 "Predictor share its parameters, so the net may only read "
                 "them",
                 net.name(), OpName(op), prepared.var_names()[v]);
      }
    }
    for (const auto& slot : op.inputs) {
      for (int v : slot) read[v] = true;
    }
  }
  for (size_t v = 0; v < read.size(); ++v) {
    if (!read[v] || !persistable(static_cast<int>(v))) continue;
    const TensorInfo info = InfoOf(prepared, static_cast<int>(v));
    const Variable* var = root.FindVar(info.name);
    const absl::StatusOr<const Tensor*> tensor =
        var == nullptr ? absl::NotFoundError("absent") : var->Get<Tensor>();
    SF_CHECK(tensor.ok() && (*tensor)->initialized(),
             "net \"%s\": parameter \"%s\" (%s %s) is not in the parameters",
             net.name(), info.name, DataTypeName(info.dtype),
             ShapeString(info));
    const Tensor& t = **tensor;
    SF_CHECK((info.dtype == DATA_TYPE_UNSPECIFIED || t.dtype() == info.dtype) &&
                 ShapeAdmits(info, t.dims()) && t.place() == place,
             "net \"%s\": parameter \"%s\" is declared as %s %s on %s; the "
             "parameters hold %s",
             net.name(), info.name, DataTypeName(info.dtype), ShapeString(info),
             place.ToString(), t.DebugString());
  }
  return absl::OkStatus();
}

// Variables some op writes and no op reads, in the net's order.
std::vector<std::string> ComputedVariables(const PreparedNet& prepared) {
  std::vector<bool> read(prepared.var_names().size(), false);
  std::vector<bool> written(prepared.var_names().size(), false);
  for (const PreparedOp& op : prepared.ops()) {
    for (const auto& slot : op.inputs) {
      for (int v : slot) read[v] = true;
    }
    for (const auto& slot : op.outputs) {
      for (int v : slot) written[v] = true;
    }
  }
  std::vector<std::string> names;
  for (size_t v = 0; v < read.size(); ++v) {
    if (written[v] && !read[v]) names.push_back(prepared.var_names()[v]);
  }
  return names;
}

}  // namespace

std::string TensorInfo::DebugString() const {
  return absl::StrCat(name, ": ", DataTypeName(dtype), " ", ShapeString(*this));
}

absl::StatusOr<Predictor> Predictor::Load(const std::string& net_path,
                                          const std::string& params_path,
                                          PredictorOptions options) {
  SF_ASSIGN_OR_RETURN(NetDef net, LoadNet(net_path));
  auto root = std::make_unique<Scope>();
  if (!params_path.empty()) {
    SF_ASSIGN_OR_RETURN(std::vector<std::string> loaded,
                        LoadParams(params_path, *root, options.place));
    if (!options.allow_unused_params) {
      SF_RETURN_IF_ERROR(CheckParamsUsed(loaded, {&net}, params_path));
    }
  }
  return Create(net, std::move(root), std::move(options));
}

absl::StatusOr<Predictor> Predictor::Create(const NetDef& net,
                                            std::unique_ptr<Scope> parameters,
                                            PredictorOptions options) {
  SF_CHECK(parameters != nullptr, "net \"%s\": the parameter scope is null",
           net.name());
  auto model = std::make_shared<Model>();
  SF_ASSIGN_OR_RETURN(model->prepared,
                      model->executor.Prepare(net, 0, options.place));
  const PreparedNet& prepared = model->prepared;
  SF_RETURN_IF_ERROR(
      CheckParameters(net, prepared, *parameters, options.place));
  model->root = std::move(parameters);
  model->name = net.name();
  absl::flat_hash_map<std::string, const VarDef*> declared;
  for (const VarDef& var : net.blocks(0).vars()) declared[var.name()] = &var;
  for (const std::string& name : prepared.input_names()) {
    TensorInfo info = InfoOf(prepared, prepared.VarIndex(name));
    auto var = declared.find(name);
    if (var != declared.end() && info.has_dims &&
        var->second->dim_names_size() == static_cast<int>(info.dims.size())) {
      info.dim_names.assign(var->second->dim_names().begin(),
                            var->second->dim_names().end());
    }
    model->inputs.push_back(std::move(info));
  }
  model->output_names =
      options.outputs.empty() ? ComputedVariables(prepared) : options.outputs;
  SF_CHECK(!model->output_names.empty(),
           "net \"%s\" computes nothing: no op writes a variable that no "
           "other op reads",
           net.name());
  for (const std::string& name : model->output_names) {
    const int v = prepared.VarIndex(name);
    SF_CHECK(v >= 0, "net \"%s\" has no variable \"%s\" to output", net.name(),
             name);
    model->outputs.push_back(InfoOf(prepared, v));
  }
  return Predictor(std::move(model));
}

Predictor::Predictor(std::shared_ptr<const Model> model)
    : model_(std::move(model)),
      scopes_(std::make_unique<ScopePool>(*model_->root)) {}

Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&& other) noexcept {
  if (this != &other) {
    // The old pool's scopes are kids of the old model's root: they go
    // first, while that root still exists.
    scopes_ = std::move(other.scopes_);
    model_ = std::move(other.model_);
  }
  return *this;
}
Predictor::~Predictor() = default;

const std::vector<TensorInfo>& Predictor::inputs() const {
  return model_->inputs;
}
const std::vector<TensorInfo>& Predictor::outputs() const {
  return model_->outputs;
}
const std::string& Predictor::name() const { return model_->name; }
const Place& Predictor::place() const { return model_->prepared.place(); }
const Scope& Predictor::parameters() const { return *model_->root; }
int Predictor::pooled_scopes() const { return scopes_->size(); }

Predictor Predictor::Clone() const { return Predictor(model_); }

absl::Status Predictor::CheckInputs(absl::Span<const Feed> inputs) const {
  const std::vector<TensorInfo>& expected = model_->inputs;
  absl::InlinedVector<bool, 8> given(expected.size(), false);
  for (const Feed& feed : inputs) {
    size_t i = 0;
    while (i < expected.size() && expected[i].name != feed.name) ++i;
    if (i == expected.size()) {
      std::vector<std::string> names;
      for (const TensorInfo& info : expected) names.push_back(info.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown input \"", feed.name,
          "\" (the model's inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    SF_CHECK(!given[i], "input \"%s\" is given twice", feed.name);
    given[i] = true;
    const TensorInfo& info = expected[i];
    SF_CHECK(feed.tensor.dtype() == info.dtype,
             "input \"%s\": expected dtype %s, got %s", feed.name,
             DataTypeName(info.dtype), DataTypeName(feed.tensor.dtype()));
    SF_CHECK(ShapeAdmits(info, feed.tensor.dims()),
             "input \"%s\": expected shape %s, got %s", feed.name,
             ShapeString(info), DimsToString(feed.tensor.dims()));
    SF_CHECK(feed.tensor.initialized() || feed.tensor.numel() == 0,
             "input \"%s\": the tensor has no buffer", feed.name);
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    SF_CHECK(given[i], "missing input \"%s\" (%s %s)", expected[i].name,
             DataTypeName(expected[i].dtype), ShapeString(expected[i]));
  }
  return CheckNamedDims(inputs);
}

// Dimensions named alike must have one size across the inputs.
absl::Status Predictor::CheckNamedDims(absl::Span<const Feed> inputs) const {
  struct Seen {
    int64_t size;
    const std::string* input;
  };
  absl::flat_hash_map<std::string, Seen> sizes;
  for (const Feed& feed : inputs) {
    const TensorInfo* info = nullptr;
    for (const TensorInfo& expected : model_->inputs) {
      if (expected.name == feed.name) info = &expected;
    }
    if (info == nullptr || info->dim_names.empty()) continue;
    for (size_t d = 0; d < info->dim_names.size(); ++d) {
      const std::string& dim = info->dim_names[d];
      if (dim.empty()) continue;
      const int64_t size = feed.tensor.dims()[d];
      auto [it, first] = sizes.try_emplace(dim, Seen{size, &feed.name});
      SF_CHECK(first || it->second.size == size,
               "input \"%s\": dimension %d (\"%s\") is %d, but input \"%s\" "
               "gave \"%s\" size %d",
               feed.name, d, dim, size, *it->second.input, dim,
               it->second.size);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Predictor::Run(
    absl::Span<const Feed> inputs) const {
  return Run(inputs, /*cancellation=*/nullptr);
}

absl::StatusOr<std::vector<Tensor>> Predictor::Run(
    absl::Span<const Feed> inputs, const RunCancellation* cancellation) const {
  SF_RETURN_IF_ERROR(CheckInputs(inputs));
  ScopeLease lease(*scopes_);
  return model_->executor.Run(model_->prepared, lease.scope(), inputs,
                              model_->output_names, /*profile=*/nullptr,
                              cancellation);
}

}  // namespace scopeflow
