#include "tools/serve_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/float16.h"
#include "nlohmann/json.hpp"
#include "tools/serve_json_tensor.h"

namespace scopeflow {
namespace {

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

void AppendNestedJson(std::string& out, const Tensor& tensor) {
  const bool known = VisitElementType(tensor.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* data = tensor.data<T>();
    AppendArray(out, data, tensor.dims(), 0);
  });
  if (!known) out += "null";
}

void AppendRowJson(std::string& out, const Tensor& tensor, int64_t row) {
  const bool known = VisitElementType(tensor.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const Dims& dims = tensor.dims();
    const int64_t row_size = NumElements(
        absl::MakeConstSpan(dims).subspan(std::min<size_t>(1, dims.size())));
    const T* data = tensor.data<T>() + row * row_size;
    AppendArray(out, data, dims, 1);
  });
  if (!known) out += "null";
}

void AppendFlatJson(std::string& out, const Tensor& tensor) {
  const bool known = VisitElementType(tensor.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* data = tensor.data<T>();
    out += '[';
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      if (i > 0) out += ',';
      AppendElement(out, data[i]);
    }
    out += ']';
  });
  if (!known) out += "null";
}

void AppendJsonString(std::string& out, absl::string_view text) {
  out += Json(std::string(text))
             .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string PredictResponseJson(const std::vector<TensorInfo>& outputs,
                                const std::vector<Tensor>& tensors) {
  std::string out = "{\"outputs\":{";
  for (size_t i = 0; i < tensors.size() && i < outputs.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, outputs[i].name);
    out += ':';
    AppendNestedJson(out, tensors[i]);
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
