// The parts of the _scopeflow extension module, each adding its classes
// and functions to the module (module.cc calls them in order).
#ifndef SCOPEFLOW_PYTHON_SRC_BINDINGS_H_
#define SCOPEFLOW_PYTHON_SRC_BINDINGS_H_

#include <string>

#include "platform/place.h"
#include "pybind11/pybind11.h"

namespace scopeflow::python {

// Scope, the calling thread's default scope and place, and their guards.
void RegisterScope(pybind11::module_& module);
// Net, PreparedNet, Executor and import_onnx.
void RegisterExecutor(pybind11::module_& module);
// TensorInfo and Predictor.
void RegisterPredictor(pybind11::module_& module);
// The training loop's steps (the loop itself is Python, over an iterator).
void RegisterTrainer(pybind11::module_& module);

// `place` as Python names it: "cpu", "cuda", "cuda:N", or None for the
// calling thread's default place (platform/default_place.h). Raises
// InvalidArgumentError for anything else.
Place PlaceOf(const pybind11::object& place);

// A path from a str or an os.PathLike.
std::string PathOf(const pybind11::object& path);

}  // namespace scopeflow::python

#endif  // SCOPEFLOW_PYTHON_SRC_BINDINGS_H_
