// JSON request bodies to tensors: ParsePredictJson and the readers of
// tools/serve_json_tensor.h (the writers are in serve_json.cc).
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/float16.h"
#include "nlohmann/json.hpp"
#include "platform/status_macros.h"
#include "tools/serve_json.h"
#include "tools/serve_json_tensor.h"

namespace scopeflow {
namespace {

// Nested deeper than this is a mistake, not a tensor.
constexpr int kMaxRank = 16;

}  // namespace

const char* JsonKind(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_float:
      return "a fraction";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    default:
      return "not a value";
  }
}

namespace {

// A short rendering of a value for an error message: "is a string
// (\"abc\")"; arrays and objects are not shown.
std::string Describe(const Json& value) {
  if (value.is_array() || value.is_object()) return JsonKind(value);
  std::string shown =
      value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (shown.size() > 40) shown = absl::StrCat(shown.substr(0, 37), "...");
  return absl::StrCat(JsonKind(value), " (", shown, ")");
}

std::string PathString(const std::vector<int64_t>& path) {
  std::string text;
  for (int64_t i : path) absl::StrAppend(&text, "[", i, "]");
  return text.empty() ? "the value" : absl::StrCat("element ", text);
}

// Converts one JSON value to T, or says why it is not one.
template <typename T>
bool ToElement(const Json& value, T& out, const char*& needs) {
  if constexpr (std::is_same_v<T, bool>) {
    needs = "true or false";
    if (!value.is_boolean()) return false;
    out = value.get<bool>();
    return true;
  } else if constexpr (std::is_floating_point_v<T> ||
                       std::is_same_v<T, float16>) {
    needs = "numbers";
    if (!value.is_number()) return false;
    if constexpr (std::is_same_v<T, float16>) {
      out = FloatToHalf(value.get<float>());
    } else {
      out = value.get<T>();
    }
    return true;
  } else {
    needs = std::is_same_v<T, uint8_t>  ? "integers from 0 to 255"
            : std::is_same_v<T, int8_t> ? "integers from -128 to 127"
            : std::is_same_v<T, int32_t>
                ? "integers from -2147483648 to 2147483647"
                : "64-bit integers";
    if (value.is_number_unsigned()) {
      const uint64_t v = value.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        return false;
      }
      out = static_cast<T>(v);
      return true;
    }
    if (!value.is_number_integer()) return false;
    const int64_t v = value.get<int64_t>();
    if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return false;
    }
    out = static_cast<T>(v);
    return true;
  }
}

// Walks `value` along `dims` (read off its first elements), checking that
// every array has its dimension's size, and writes the elements in order.
template <typename T>
absl::Status Fill(const std::string& name, DataType dtype, const Json& value,
                  const Dims& dims, std::vector<int64_t>& path, T*& out) {
  const size_t axis = path.size();
  if (axis == dims.size()) {
    const char* needs = "";
    SF_CHECK(ToElement(value, *out, needs),
             "input \"%s\": %s is %s; dtype %s needs %s", name,
             PathString(path), Describe(value), DataTypeName(dtype), needs);
    ++out;
    return absl::OkStatus();
  }
  SF_CHECK(value.is_array() && static_cast<int64_t>(value.size()) == dims[axis],
           "input \"%s\": ragged array: %s is %s, expected an array of %d",
           name, PathString(path),
           value.is_array() ? absl::StrCat("an array of ", value.size())
                            : Describe(value),
           dims[axis]);
  for (size_t i = 0; i < value.size(); ++i) {
    path.push_back(static_cast<int64_t>(i));
    SF_RETURN_IF_ERROR(Fill(name, dtype, value[i], dims, path, out));
    path.pop_back();
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status FillTyped(const std::string& name, const Json& value,
                       Tensor& tensor) {
  std::vector<int64_t> path;
  T* out = tensor.data<T>();
  return Fill(name, tensor.dtype(), value, tensor.dims(), path, out);
}

// Writes the leaves of `value` (a scalar, or arrays nested any way) in
// order, at most `count` of them; `written` counts them all.
template <typename T>
absl::Status FillFlat(const std::string& name, DataType dtype,
                      const Json& value, int depth, int64_t count, T* out,
                      int64_t& written) {
  if (value.is_array()) {
    SF_CHECK(depth < kMaxRank, "input \"%s\": arrays nested deeper than %d",
             name, kMaxRank);
    for (const Json& element : value) {
      SF_RETURN_IF_ERROR(
          FillFlat(name, dtype, element, depth + 1, count, out, written));
    }
    return absl::OkStatus();
  }
  if (written < count) {
    const char* needs = "";
    SF_CHECK(ToElement(value, out[written], needs),
             "input \"%s\": element %d is %s; dtype %s needs %s", name, written,
             Describe(value), DataTypeName(dtype), needs);
  }
  ++written;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> TensorFromFlatJson(const std::string& name,
                                          const Json& value, DataType dtype,
                                          const Dims& dims) {
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, dims));
  absl::Status status;
  int64_t written = 0;
  const bool known = VisitElementType(dtype, [&](auto zero) {
    using T = decltype(zero);
    status = FillFlat(name, dtype, value, 0, tensor.numel(), tensor.data<T>(),
                      written);
  });
  SF_CHECK(known, "input \"%s\" has dtype %s, which JSON cannot carry", name,
           DataTypeName(dtype));
  SF_RETURN_IF_ERROR(status);
  SF_CHECK(written == tensor.numel(),
           "input \"%s\": %d elements for shape %s, which holds %d", name,
           written, DimsToString(dims), tensor.numel());
  return tensor;
}

absl::StatusOr<Tensor> TensorFromNestedJson(const std::string& name,
                                            const Json& value, DataType dtype) {
  Dims dims;
  for (const Json* level = &value; level->is_array(); level = &level->front()) {
    SF_CHECK(dims.size() < kMaxRank,
             "input \"%s\": arrays nested deeper than %d", name, kMaxRank);
    dims.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
  }
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, dims));
  switch (dtype) {
    case kFloat32:
      SF_RETURN_IF_ERROR(FillTyped<float>(name, value, tensor));
      break;
    case kFloat64:
      SF_RETURN_IF_ERROR(FillTyped<double>(name, value, tensor));
      break;
    case kFloat16:
      SF_RETURN_IF_ERROR(FillTyped<float16>(name, value, tensor));
      break;
    case kInt32:
      SF_RETURN_IF_ERROR(FillTyped<int32_t>(name, value, tensor));
      break;
    case kInt64:
      SF_RETURN_IF_ERROR(FillTyped<int64_t>(name, value, tensor));
      break;
    case kUInt8:
      SF_RETURN_IF_ERROR(FillTyped<uint8_t>(name, value, tensor));
      break;
    case kInt8:
      SF_RETURN_IF_ERROR(FillTyped<int8_t>(name, value, tensor));
      break;
    case kBool:
      SF_RETURN_IF_ERROR(FillTyped<bool>(name, value, tensor));
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("input \"", name, "\" has dtype ", DataTypeName(dtype),
                       ", which JSON cannot carry"));
  }
  return tensor;
}

absl::StatusOr<std::vector<Feed>> ParsePredictJson(
    absl::string_view body, const std::vector<TensorInfo>& inputs) {
  SF_ASSIGN_OR_RETURN(const Json doc, ParseJsonBody(body));
  SF_CHECK(doc.is_object(),
           "the body is %s; expected an object {\"inputs\": {NAME: array}}",
           JsonKind(doc));
  for (const auto& [key, value] : doc.items()) {
    // TensorFlow Serving clients name a signature; a model has one.
    SF_CHECK(key == "inputs" || key == "signature_name",
             "unknown field \"%s\" in the body; expected \"inputs\"", key);
  }
  const auto it = doc.find("inputs");
  SF_CHECK(it != doc.end(),
           "the body has no \"inputs\"; expected {\"inputs\": {NAME: array}}");
  SF_CHECK(it->is_object(),
           "\"inputs\" is %s; expected an object mapping input names to "
           "arrays",
           JsonKind(*it));
  std::vector<Feed> feeds;
  for (const auto& [name, value] : it->items()) {
    const TensorInfo* info = nullptr;
    for (const TensorInfo& input : inputs) {
      if (input.name == name) info = &input;
    }
    if (info == nullptr) {
      std::vector<std::string> names;
      for (const TensorInfo& input : inputs) names.push_back(input.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown input \"", name,
          "\" (the model's inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    SF_ASSIGN_OR_RETURN(Tensor tensor,
                        TensorFromNestedJson(name, value, info->dtype));
    feeds.push_back({name, std::move(tensor)});
  }
  return feeds;
}

}  // namespace scopeflow
