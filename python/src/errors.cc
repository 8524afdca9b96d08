#include "python/src/errors.h"

#include <Python.h>

namespace scopeflow::python {
namespace {

namespace py = pybind11;

// Owned by the module, which lives until the interpreter ends.
PyObject* error = nullptr;
PyObject* invalid_argument_error = nullptr;
PyObject* not_found_error = nullptr;
PyObject* unimplemented_error = nullptr;

PyObject* NewError(py::module_& module, const char* name, PyObject* bases) {
  const std::string qualified = std::string("scopeflow.") + name;
  PyObject* type =
      PyErr_NewException(qualified.c_str(), bases, /*dict=*/nullptr);
  if (type == nullptr) throw py::error_already_set();
  module.add_object(name, py::handle(type));
  return type;
}

PyObject* ErrorFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return invalid_argument_error;
    case absl::StatusCode::kNotFound:
      return not_found_error;
    case absl::StatusCode::kUnimplemented:
      return unimplemented_error;
    default:
      return error;
  }
}

}  // namespace

void RegisterErrors(py::module_& module) {
  error = NewError(module, "Error", PyExc_RuntimeError);
  py::tuple value_bases = py::make_tuple(py::handle(error),
                                         py::handle(PyExc_ValueError));
  invalid_argument_error =
      NewError(module, "InvalidArgumentError", value_bases.ptr());
  py::tuple lookup_bases = py::make_tuple(py::handle(error),
                                          py::handle(PyExc_LookupError));
  not_found_error = NewError(module, "NotFoundError", lookup_bases.ptr());
  py::tuple unimplemented_bases = py::make_tuple(
      py::handle(error), py::handle(PyExc_NotImplementedError));
  unimplemented_error =
      NewError(module, "UnimplementedError", unimplemented_bases.ptr());
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const StatusError& e) {
      PyErr_SetString(ErrorFor(e.status().code()), e.what());
    }
  });
}

}  // namespace scopeflow::python
