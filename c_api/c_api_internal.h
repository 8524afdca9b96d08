// What the C API's opaque handles are, and the boundary every entry point
// goes through: C++ errors and exceptions become sf_status objects there,
// so that nothing throws into the caller's C frames.
#ifndef SCOPEFLOW_C_API_C_API_INTERNAL_H_
#define SCOPEFLOW_C_API_C_API_INTERNAL_H_

#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "c_api/scopeflow_c_api.h"
#include "framework/serving/predictor.h"
#include "framework/tensor.h"

struct sf_status {
  sf_code code;
  std::string message;
};

struct sf_options {
  scopeflow::PredictorOptions options;
};

struct sf_tensor_info {
  scopeflow::TensorInfo info;
};

// The predictor and its metadata in the form the accessors hand out; the
// metadata is immutable, so reading it needs no lock.
struct sf_predictor {
  explicit sf_predictor(scopeflow::Predictor p);

  scopeflow::Predictor predictor;
  std::vector<sf_tensor_info> inputs;
  std::vector<sf_tensor_info> outputs;
};

// A host tensor: one the library allocated, a run's output, or a view of
// the caller's memory (sf_tensor_wrap).
struct sf_tensor {
  scopeflow::Tensor tensor;
};

namespace scopeflow {
namespace c_api {

// A new status for `status`; nullptr for OK. Never throws: when even the
// status cannot be allocated, a static out-of-memory status is returned,
// which sf_status_free recognises and leaves alone.
sf_status* ToCStatus(const absl::Status& status) noexcept;

// Runs `body` (returning absl::Status) and converts its result; exceptions
// become statuses naming `function`.
template <typename Body>
sf_status* Guard(const char* function, Body&& body) noexcept {
  try {
    return ToCStatus(std::forward<Body>(body)());
  } catch (const std::bad_alloc&) {
    return ToCStatus(absl::ResourceExhaustedError(std::string(function) +
                                                  ": out of memory"));
  } catch (const std::exception& e) {
    return ToCStatus(absl::InternalError(
        std::string(function) + ": unexpected exception: " + e.what()));
  } catch (...) {
    return ToCStatus(
        absl::InternalError(std::string(function) + ": unexpected exception"));
  }
}

// InvalidArgument "<function>: <what> is null" when `pointer` is.
absl::Status CheckNotNull(const void* pointer, const char* function,
                          const char* what);

}  // namespace c_api
}  // namespace scopeflow

#endif  // SCOPEFLOW_C_API_C_API_INTERNAL_H_
