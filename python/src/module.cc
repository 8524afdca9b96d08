// The _scopeflow extension module; python/scopeflow/__init__.py is its
// public face.
#include "pybind11/pybind11.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"

PYBIND11_MODULE(_scopeflow, module) {
  module.doc() =
      "scopeflow's runtime: predictors, scopes, executors, ONNX import and "
      "training steps. Use it through the scopeflow package.";
  scopeflow::python::RegisterErrors(module);
  scopeflow::python::RegisterScope(module);
  scopeflow::python::RegisterExecutor(module);
  scopeflow::python::RegisterPredictor(module);
  scopeflow::python::RegisterTrainer(module);
}
