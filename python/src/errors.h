// How the library's errors reach Python: an absl::Status that is not OK
// becomes a Python exception carrying its message, of a class chosen by
// its code, so that callers can catch what they can act on.
#ifndef SCOPEFLOW_PYTHON_SRC_ERRORS_H_
#define SCOPEFLOW_PYTHON_SRC_ERRORS_H_

#include <exception>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pybind11/pybind11.h"

namespace scopeflow::python {

// Carries a Status from C++ code to the translator RegisterErrors installs.
// Thrown only while the GIL is held (never inside a gil_scoped_release).
class StatusError : public std::exception {
 public:
  explicit StatusError(absl::Status status)
      : status_(std::move(status)), what_(status_.message()) {}
  const absl::Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  absl::Status status_;
  std::string what_;
};

// Adds the exception classes to `module`:
//   Error(RuntimeError)                      every error of the library;
//   InvalidArgumentError(Error, ValueError)  a bad input, name, dtype or
//                                            shape (InvalidArgument,
//                                            OutOfRange);
//   NotFoundError(Error, LookupError)        a missing file or variable;
//   UnimplementedError(Error, NotImplementedError)
// and the translator raising them for a StatusError.
void RegisterErrors(pybind11::module_& module);

inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw StatusError(status);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) throw StatusError(value.status());
  return *std::move(value);
}

}  // namespace scopeflow::python

#endif  // SCOPEFLOW_PYTHON_SRC_ERRORS_H_
