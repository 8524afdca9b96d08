#include "tools/serve_json.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/float16.h"
#include "nlohmann/json.hpp"

namespace scopeflow {
namespace {

using Json = nlohmann::json;

void AppendNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const std::to_chars_result end =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end.ptr);
}

// The shortest form that reads back as the same float, not as the same
// double: 0.1f prints as 0.1, not 0.10000000149011612.
void AppendNumber(std::string& out, float value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const std::to_chars_result end =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end.ptr);
}

template <typename T>
void AppendElement(std::string& out, T value) {
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, float16>) {
    AppendNumber(out, HalfToFloat(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    AppendNumber(out, value);
  } else {
    absl::StrAppend(&out, static_cast<int64_t>(value));
  }
}

template <typename T>
void AppendArray(std::string& out, const T*& data, const Dims& dims,
                 size_t axis) {
  if (axis == dims.size()) {
    AppendElement(out, *data++);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < dims[axis]; ++i) {
    if (i > 0) out += ',';
    AppendArray(out, data, dims, axis + 1);
  }
  out += ']';
}

template <typename T>
void AppendTyped(std::string& out, const Tensor& tensor) {
  const T* data = tensor.data<T>();
  AppendArray(out, data, tensor.dims(), 0);
}

void AppendTensor(std::string& out, const Tensor& tensor) {
  switch (tensor.dtype()) {
    case kFloat32:
      return AppendTyped<float>(out, tensor);
    case kFloat64:
      return AppendTyped<double>(out, tensor);
    case kFloat16:
      return AppendTyped<float16>(out, tensor);
    case kInt32:
      return AppendTyped<int32_t>(out, tensor);
    case kInt64:
      return AppendTyped<int64_t>(out, tensor);
    case kUInt8:
      return AppendTyped<uint8_t>(out, tensor);
    case kInt8:
      return AppendTyped<int8_t>(out, tensor);
    case kBool:
      return AppendTyped<bool>(out, tensor);
    default:
      out += "null";
  }
}

Json InfoJson(const TensorInfo& info) {
  Json shape =
      info.has_dims
          ? Json(std::vector<int64_t>(info.dims.begin(), info.dims.end()))
          : Json(nullptr);
  return Json{{"name", info.name},
              {"dtype", DataTypeName(info.dtype)},
              {"shape", std::move(shape)}};
}

}  // namespace

std::string PredictResponseJson(const std::vector<TensorInfo>& outputs,
                                const std::vector<Tensor>& tensors) {
  std::string out = "{\"outputs\":{";
  for (size_t i = 0; i < tensors.size() && i < outputs.size(); ++i) {
    if (i > 0) out += ',';
    out += Json(outputs[i].name)
               .dump(-1, ' ', false, Json::error_handler_t::replace);
    out += ':';
    AppendTensor(out, tensors[i]);
  }
  out += "}}";
  return out;
}

std::string ModelMetadataJson(const std::string& name, int64_t version,
                              const std::vector<TensorInfo>& inputs,
                              const std::vector<TensorInfo>& outputs) {
  Json in = Json::array();
  for (const TensorInfo& info : inputs) in.push_back(InfoJson(info));
  Json out = Json::array();
  for (const TensorInfo& info : outputs) out.push_back(InfoJson(info));
  return Json{{"name", name},
              {"version", version},
              {"inputs", std::move(in)},
              {"outputs", std::move(out)}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string HealthJson(const std::string& name, int64_t version) {
  return Json{{"status", "ok"}, {"model", name}, {"version", version}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

std::string ErrorJson(absl::string_view message) {
  // Replaces invalid UTF-8 (an echoed input name, say) instead of throwing.
  return Json{{"error", std::string(message)}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace scopeflow
