// The C API's predictors: loading a net or an ONNX model, its metadata,
// and runs over Predictor (framework/serving/predictor.h), which is safe
// from many threads at once.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "framework/data_type.h"
#include "framework/net_io.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/param_io.h"
#include "platform/status_macros.h"

using scopeflow::c_api::CheckNotNull;
using scopeflow::c_api::Guard;

sf_predictor::sf_predictor(scopeflow::Predictor p) : predictor(std::move(p)) {
  for (const scopeflow::TensorInfo& info : predictor.inputs()) {
    inputs.push_back({info});
  }
  for (const scopeflow::TensorInfo& info : predictor.outputs()) {
    outputs.push_back({info});
  }
}

namespace scopeflow {
namespace c_api {
namespace {

// An ONNX model's parameters (its initializers), then those of
// `params_path` over them, in a root scope on `place`.
absl::StatusOr<Predictor> LoadOnnx(const std::string& model_path,
                                   const std::string& params_path,
                                   PredictorOptions options) {
  SF_ASSIGN_OR_RETURN(onnx::ModelProto model, ReadOnnxModel(model_path));
  SF_ASSIGN_OR_RETURN(ImportedModel imported, ImportOnnx(model));
  auto root = std::make_unique<Scope>();
  for (const NamedTensor& param : imported.params) {
    SF_ASSIGN_OR_RETURN(Tensor * tensor,
                        root->Var(param.name)->GetMutable<Tensor>());
    if (param.tensor.place() == options.place) {
      tensor->ShareBufferWith(param.tensor);
    } else {
      SF_ASSIGN_OR_RETURN(*tensor, param.tensor.CopyTo(options.place));
    }
  }
  if (!params_path.empty()) {
    SF_RETURN_IF_ERROR(LoadParams(params_path, *root, options.place).status());
  }
  if (options.outputs.empty()) options.outputs = imported.outputs;
  return Predictor::Create(imported.net, std::move(root), std::move(options));
}

absl::StatusOr<Predictor> LoadModel(const std::string& model_path,
                                    const std::string& params_path,
                                    PredictorOptions options) {
  if (absl::EndsWithIgnoreCase(model_path, ".onnx")) {
    return LoadOnnx(model_path, params_path, std::move(options));
  }
  return Predictor::Load(model_path, params_path, std::move(options));
}

// Runs `predictor` on the named inputs; the outputs are host tensors that
// own their buffers alone, so that the caller may write them, and never
// views of the caller's memory or of the parameters.
absl::StatusOr<std::vector<Tensor>> Run(const char* function,
                                        const sf_predictor* predictor,
                                        const char* const* input_names,
                                        const sf_tensor* const* inputs,
                                        size_t num_inputs, size_t num_outputs) {
  SF_RETURN_IF_ERROR(CheckNotNull(predictor, function, "predictor"));
  if (num_inputs > 0) {
    SF_RETURN_IF_ERROR(CheckNotNull(input_names, function, "input_names"));
    SF_RETURN_IF_ERROR(CheckNotNull(inputs, function, "inputs"));
  }
  SF_CHECK(num_outputs == predictor->outputs.size(),
           "%s: num_outputs is %d, but the model has %d output(s)", function,
           num_outputs, predictor->outputs.size());
  std::vector<Feed> feeds;
  feeds.reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    SF_CHECK(input_names[i] != nullptr, "%s: input_names[%d] is null", function,
             i);
    SF_CHECK(inputs[i] != nullptr, "%s: input \"%s\" (inputs[%d]) is null",
             function, input_names[i], i);
    // The caller may have written the elements through a pointer from an
    // earlier sf_tensor_data: copies kept of the old contents are stale.
    inputs[i]->tensor.MarkWritten();
    feeds.push_back({input_names[i], inputs[i]->tensor});
  }
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                      predictor->predictor.Run(feeds));
  for (Tensor& output : outputs) {
    if (!output.initialized()) continue;
    if (output.place() != CPUPlace() || !output.OwnsBufferAlone()) {
      SF_ASSIGN_OR_RETURN(output, output.CopyTo(CPUPlace()));
    }
  }
  return outputs;
}

// Copies `results` into the caller's `outputs` once all of them fit.
absl::Status CopyInto(const char* function, const sf_predictor* predictor,
                      const std::vector<Tensor>& results,
                      sf_tensor* const* outputs) {
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = predictor->outputs[i].info.name;
    SF_CHECK(outputs[i] != nullptr, "%s: output \"%s\" (outputs[%d]) is null",
             function, name, i);
    const Tensor& given = outputs[i]->tensor;
    SF_CHECK(given.dtype() == results[i].dtype() &&
                 given.dims() == results[i].dims(),
             "%s: output \"%s\": the run computed %s %s, but outputs[%d] is "
             "%s %s",
             function, name, DataTypeName(results[i].dtype()),
             DimsToString(results[i].dims()), i, DataTypeName(given.dtype()),
             DimsToString(given.dims()));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].nbytes() == 0) continue;
    std::memcpy(outputs[i]->tensor.raw_data(), results[i].raw_data(),
                results[i].nbytes());
  }
  return absl::OkStatus();
}

const sf_tensor_info* InfoAt(const std::vector<sf_tensor_info>& infos,
                             size_t index) {
  return index < infos.size() ? &infos[index] : nullptr;
}

}  // namespace
}  // namespace c_api
}  // namespace scopeflow

extern "C" {

sf_status* sf_options_create(sf_options** out) {
  return Guard("sf_options_create", [&]() -> absl::Status {
    SF_RETURN_IF_ERROR(CheckNotNull(out, "sf_options_create", "out"));
    *out = new sf_options;
    return absl::OkStatus();
  });
}

void sf_options_free(sf_options* options) { delete options; }

sf_status* sf_options_set_place(sf_options* options, const char* place) {
  static constexpr char kFunction[] = "sf_options_set_place";
  return Guard(kFunction, [&]() -> absl::Status {
    SF_RETURN_IF_ERROR(CheckNotNull(options, kFunction, "options"));
    SF_RETURN_IF_ERROR(CheckNotNull(place, kFunction, "place"));
    SF_ASSIGN_OR_RETURN(options->options.place, scopeflow::ParsePlace(place));
    return absl::OkStatus();
  });
}

sf_status* sf_options_add_output(sf_options* options, const char* name) {
  static constexpr char kFunction[] = "sf_options_add_output";
  return Guard(kFunction, [&]() -> absl::Status {
    SF_RETURN_IF_ERROR(CheckNotNull(options, kFunction, "options"));
    SF_RETURN_IF_ERROR(CheckNotNull(name, kFunction, "name"));
    options->options.outputs.push_back(name);
    return absl::OkStatus();
  });
}

sf_status* sf_predictor_load(const char* model_path, const char* params_path,
                             const sf_options* options, sf_predictor** out) {
  static constexpr char kFunction[] = "sf_predictor_load";
  return Guard(kFunction, [&]() -> absl::Status {
    SF_RETURN_IF_ERROR(CheckNotNull(model_path, kFunction, "model_path"));
    SF_RETURN_IF_ERROR(CheckNotNull(out, kFunction, "out"));
    SF_ASSIGN_OR_RETURN(
        scopeflow::Predictor predictor,
        scopeflow::c_api::LoadModel(
            model_path, params_path == nullptr ? "" : params_path,
            options == nullptr ? scopeflow::PredictorOptions()
                               : options->options));
    *out = new sf_predictor(std::move(predictor));
    return absl::OkStatus();
  });
}

sf_status* sf_predictor_clone(const sf_predictor* predictor,
                              sf_predictor** out) {
  static constexpr char kFunction[] = "sf_predictor_clone";
  return Guard(kFunction, [&]() -> absl::Status {
    SF_RETURN_IF_ERROR(CheckNotNull(predictor, kFunction, "predictor"));
    SF_RETURN_IF_ERROR(CheckNotNull(out, kFunction, "out"));
    *out = new sf_predictor(predictor->predictor.Clone());
    return absl::OkStatus();
  });
}

void sf_predictor_free(sf_predictor* predictor) { delete predictor; }

const char* sf_predictor_name(const sf_predictor* predictor) {
  return predictor == nullptr ? "" : predictor->predictor.name().c_str();
}

size_t sf_predictor_num_inputs(const sf_predictor* predictor) {
  return predictor == nullptr ? 0 : predictor->inputs.size();
}

size_t sf_predictor_num_outputs(const sf_predictor* predictor) {
  return predictor == nullptr ? 0 : predictor->outputs.size();
}

const sf_tensor_info* sf_predictor_input(const sf_predictor* predictor,
                                         size_t index) {
  if (predictor == nullptr) return nullptr;
  return scopeflow::c_api::InfoAt(predictor->inputs, index);
}

const sf_tensor_info* sf_predictor_output(const sf_predictor* predictor,
                                          size_t index) {
  if (predictor == nullptr) return nullptr;
  return scopeflow::c_api::InfoAt(predictor->outputs, index);
}

const char* sf_tensor_info_name(const sf_tensor_info* info) {
  return info == nullptr ? "" : info->info.name.c_str();
}

sf_dtype sf_tensor_info_dtype(const sf_tensor_info* info) {
  return info == nullptr ? SF_DTYPE_UNSPECIFIED
                         : static_cast<sf_dtype>(info->info.dtype);
}

int sf_tensor_info_rank(const sf_tensor_info* info) {
  if (info == nullptr || !info->info.has_dims) return -1;
  return static_cast<int>(info->info.dims.size());
}

int64_t sf_tensor_info_dim(const sf_tensor_info* info, int axis) {
  if (info == nullptr || axis < 0 || axis >= sf_tensor_info_rank(info)) {
    return -1;
  }
  return info->info.dims[axis];
}

const char* sf_tensor_info_dim_name(const sf_tensor_info* info, int axis) {
  if (info == nullptr || axis < 0 ||
      static_cast<size_t>(axis) >= info->info.dim_names.size()) {
    return "";
  }
  return info->info.dim_names[axis].c_str();
}

sf_status* sf_predictor_run(const sf_predictor* predictor,
                            const char* const* input_names,
                            const sf_tensor* const* inputs, size_t num_inputs,
                            sf_tensor** outputs, size_t num_outputs) {
  static constexpr char kFunction[] = "sf_predictor_run";
  return Guard(kFunction, [&]() -> absl::Status {
    if (num_outputs > 0) {
      SF_RETURN_IF_ERROR(CheckNotNull(outputs, kFunction, "outputs"));
    }
    SF_ASSIGN_OR_RETURN(std::vector<scopeflow::Tensor> results,
                        scopeflow::c_api::Run(kFunction, predictor, input_names,
                                              inputs, num_inputs, num_outputs));
    std::vector<std::unique_ptr<sf_tensor>> made;
    made.reserve(results.size());
    for (scopeflow::Tensor& result : results) {
      made.push_back(std::make_unique<sf_tensor>(sf_tensor{std::move(result)}));
    }
    for (size_t i = 0; i < made.size(); ++i) outputs[i] = made[i].release();
    return absl::OkStatus();
  });
}

sf_status* sf_predictor_run_into(const sf_predictor* predictor,
                                 const char* const* input_names,
                                 const sf_tensor* const* inputs,
                                 size_t num_inputs, sf_tensor* const* outputs,
                                 size_t num_outputs) {
  static constexpr char kFunction[] = "sf_predictor_run_into";
  return Guard(kFunction, [&]() -> absl::Status {
    if (num_outputs > 0) {
      SF_RETURN_IF_ERROR(CheckNotNull(outputs, kFunction, "outputs"));
    }
    SF_ASSIGN_OR_RETURN(std::vector<scopeflow::Tensor> results,
                        scopeflow::c_api::Run(kFunction, predictor, input_names,
                                              inputs, num_inputs, num_outputs));
    return scopeflow::c_api::CopyInto(kFunction, predictor, results, outputs);
  });
}

}  // extern "C"
