// Predictor for Python: a model loaded once and run from any number of
// threads at once. A run reads its numpy inputs in place, releases the GIL
// while the net runs (so threads run in parallel), and hands the outputs
// over as arrays viewing the tensors the run made.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/param_io.h"
#include "framework/serving/predictor.h"
#include "pybind11/stl.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"
#include "python/src/ndarray.h"
#include "python/src/net.h"

namespace scopeflow::python {
namespace {

namespace py = pybind11;
using namespace pybind11::literals;

std::unique_ptr<Predictor> LoadPredictor(const py::object& model_path,
                                         const py::object& params,
                                         const py::object& place,
                                         const py::object& outputs) {
  PredictorOptions options;
  options.place = PlaceOf(place);
  if (!outputs.is_none()) {
    options.outputs = outputs.cast<std::vector<std::string>>();
  }
  const std::string path = PathOf(model_path);
  Net net = LoadModel(path);
  auto root = std::make_unique<Scope>();
  for (const NamedTensor& param : net.params) {
    Tensor tensor = param.tensor;
    if (!options.place.is_cpu()) {
      tensor = ValueOrThrow(tensor.CopyTo(options.place));
    }
    *ValueOrThrow(root->Var(param.name)->GetMutable<Tensor>()) = tensor;
  }
  // A parameter file adds to (or replaces) what an imported model has.
  if (!params.is_none()) {
    ThrowIfError(LoadParams(PathOf(params), *root, options.place).status());
  }
  return std::make_unique<Predictor>(ValueOrThrow(
      Predictor::Create(net.def, std::move(root), std::move(options))));
}

// The indices into outputs() of `fetches` (all of them for None).
std::vector<size_t> FetchIndices(const Predictor& predictor,
                                 const py::object& fetches) {
  const std::vector<TensorInfo>& outputs = predictor.outputs();
  std::vector<size_t> indices;
  if (fetches.is_none()) {
    for (size_t i = 0; i < outputs.size(); ++i) indices.push_back(i);
    return indices;
  }
  if (py::isinstance<py::str>(fetches)) {
    ThrowIfError(absl::InvalidArgumentError(
        "fetches: expected a list of output names, got a str"));
  }
  for (const std::string& name : fetches.cast<std::vector<std::string>>()) {
    size_t i = 0;
    while (i < outputs.size() && outputs[i].name != name) ++i;
    if (i == outputs.size()) {
      std::vector<std::string> names;
      for (const TensorInfo& info : outputs) names.push_back(info.name);
      ThrowIfError(absl::InvalidArgumentError(absl::StrCat(
          "fetch \"", name, "\" is not an output of the model (its outputs: ",
          absl::StrJoin(names, ", "),
          "); load it with outputs=[...] to fetch other variables")));
    }
    indices.push_back(i);
  }
  return indices;
}

py::dict RunPredictor(const Predictor& predictor, const py::dict& feeds,
                      const py::object& fetches) {
  const std::vector<size_t> wanted = FetchIndices(predictor, fetches);
  std::vector<Feed> inputs = ValueOrThrow(FeedsOfDict(feeds));
  absl::StatusOr<std::vector<Tensor>> out;
  {
    py::gil_scoped_release unlocked;
    out = predictor.Run(inputs);
  }
  // The inputs' arrays are let go under the GIL.
  inputs.clear();
  std::vector<Tensor> tensors = ValueOrThrow(std::move(out));
  py::dict result;
  for (size_t i : wanted) {
    // No copy: an output only the run's result views becomes the array's;
    // one the pooled scope still views is handed over read-only.
    result[py::str(predictor.outputs()[i].name)] =
        ArrayOfTensor(std::move(tensors[i]), Shared::kReadOnlyView);
  }
  return result;
}

py::object ShapeOf(const TensorInfo& info) {
  if (!info.has_dims) return py::none();
  return ShapeTuple(info.dims);
}

}  // namespace

void RegisterPredictor(py::module_& module) {
  py::class_<TensorInfo>(module, "TensorInfo",
                         "What a model takes or gives: name, dtype and "
                         "shape (-1 for an unknown dimension, None when "
                         "not even the rank is known).")
      .def_readonly("name", &TensorInfo::name)
      .def_property_readonly(
          "dtype", [](const TensorInfo& info) { return NumpyDtype(info.dtype); })
      .def_property_readonly("shape", &ShapeOf)
      .def_readonly("dim_names", &TensorInfo::dim_names)
      .def("__repr__", [](const TensorInfo& info) {
        return absl::StrCat("TensorInfo(", info.DebugString(), ")");
      });

  py::class_<Predictor>(module, "Predictor", R"doc(
A model loaded once and run from any number of threads at once.

Predictor(model_path, params=None, place=None, outputs=None): model_path is
a .pbtxt or .pb net file or an .onnx model; params a parameter file (as
`scopeflow run --save_params` writes); place "cpu", "cuda:N" or None for
the calling thread's default place (cpu unless a place_guard says
otherwise); outputs the variables run returns (None: what the net
computes).)doc")
      .def(py::init(&LoadPredictor), "model_path"_a, "params"_a = py::none(),
           "place"_a = py::none(), "outputs"_a = py::none())
      .def_property_readonly("inputs", &Predictor::inputs,
                             "list[TensorInfo]: what each run must be fed.")
      .def_property_readonly("outputs", &Predictor::outputs,
                             "list[TensorInfo]: what run returns, in order.")
      .def_property_readonly("name", &Predictor::name)
      .def_property_readonly(
          "place",
          [](const Predictor& predictor) { return predictor.place().ToString(); })
      .def("run", &RunPredictor, "feeds"_a, "fetches"_a = py::none(), R"doc(
Runs the model on feeds {input name: numpy array} and returns {output name:
array} for `fetches` (names of outputs; None: all). C-contiguous inputs are
read in place; the outputs view the tensors the run made, without a copy. The
GIL is released while the net runs. A wrong name, dtype or shape, or an
array that is not C-contiguous, raises InvalidArgumentError.)doc")
      .def_property_readonly(
          "pooled_scopes", &Predictor::pooled_scopes,
          "The run scopes made so far: the most runs that ever overlapped.")
      .def(
          "clone",
          [](const Predictor& predictor) {
            return std::make_unique<Predictor>(predictor.Clone());
          },
          "Another predictor over the same prepared net and parameters, "
          "with a pool of run scopes of its own.");
}

}  // namespace scopeflow::python
