// Tensors to and from JSON values, for the request formats of every REST
// protocol of `scopeflow serve` (TensorFlow Serving's nested arrays,
// KServe v2's flat data with a shape). Floats print in their shortest exact
// form; NaN and infinities, which JSON lacks, print as null.
#ifndef SCOPEFLOW_TOOLS_SERVE_JSON_TENSOR_H_
#define SCOPEFLOW_TOOLS_SERVE_JSON_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/float16.h"
#include "framework/tensor.h"
#include "nlohmann/json.hpp"

namespace scopeflow {

using Json = nlohmann::json;

// Calls f(T{}) with T the C++ element type of `dtype` (float16 for
// kFloat16); returns false, without calling it, for a dtype without one.
template <typename F>
bool VisitElementType(DataType dtype, F&& f) {
  switch (dtype) {
    case kFloat32:
      f(float{});
      return true;
    case kFloat64:
      f(double{});
      return true;
    case kFloat16:
      f(float16{});
      return true;
    case kInt32:
      f(int32_t{});
      return true;
    case kInt64:
      f(int64_t{});
      return true;
    case kUInt8:
      f(uint8_t{});
      return true;
    case kInt8:
      f(int8_t{});
      return true;
    case kBool:
      f(bool{});
      return true;
    default:
      return false;
  }
}

// Arrays and objects nested deeper than this in a body are refused: a
// tensor's arrays (at most 16 deep) in the deepest request format
// (KServe's {"inputs": [{"data": ...}]}) leave room to spare.
inline constexpr int kMaxJsonDepth = 24;
// A body may take at most this many times its size in memory to parse,
// plus 1 MiB (JsonMemoryBudget). A number in an array costs 16 bytes, so a
// body of one-digit numbers takes 8 times its size, rows of one-letter
// keys about 20; only bodies of little but brackets (arrays of one
// element nested deep) pass the limit.
inline constexpr size_t kJsonMemoryMultiple = 32;
size_t JsonMemoryBudget(size_t body_bytes);

// Parses a request body within kMaxJsonDepth and JsonMemoryBudget (or
// `memory_budget` bytes), both checked as it streams
// (tools/serve_json_body.cc), before the document is built.
// InvalidArgument naming the problem otherwise: "malformed JSON: " with the
// line and column, the depth limit, the memory limit, or a key given twice
// in one object (naming it).
absl::StatusOr<Json> ParseJsonBody(absl::string_view body);
absl::StatusOr<Json> ParseJsonBody(absl::string_view body,
                                   size_t memory_budget);

// "an object", "an array", "a string", ... for error messages.
const char* JsonKind(const Json& value);

// The tensor of nested arrays `value` (outermost dimension first, a scalar
// a bare value), converted to `dtype`. InvalidArgument naming `name`:
// ragged arrays, nesting deeper than 16, a value that is not of the dtype (a
// string for float32, 2.5 or 300 for uint8...).
absl::StatusOr<Tensor> TensorFromNestedJson(const std::string& name,
                                            const Json& value, DataType dtype);

// The tensor of shape `dims` whose elements are `value`'s leaves in order
// (a flat array, or nested arrays read row-major). InvalidArgument naming
// `name` for a count of elements other than the shape's, or a value not of
// the dtype.
absl::StatusOr<Tensor> TensorFromFlatJson(const std::string& name,
                                          const Json& value, DataType dtype,
                                          const Dims& dims);

// Appends `tensor` (on the CPU) as nested arrays.
void AppendNestedJson(std::string& out, const Tensor& tensor);
// Appends row `row` of `tensor` (its slice along dimension 0) as nested
// arrays.
void AppendRowJson(std::string& out, const Tensor& tensor, int64_t row);
// Appends `tensor`'s elements as one flat array, row-major.
void AppendFlatJson(std::string& out, const Tensor& tensor);
// Appends `text` as a JSON string (invalid UTF-8 replaced).
void AppendJsonString(std::string& out, absl::string_view text);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_JSON_TENSOR_H_
