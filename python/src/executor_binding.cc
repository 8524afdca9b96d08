// Net, PreparedNet and Executor for Python: the level below Predictor, for
// callers that keep their own scopes (a startup net filling parameters,
// then a main net running against them).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/onnx/onnx_importer.h"
#include "google/protobuf/text_format.h"
#include "pybind11/stl.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"
#include "python/src/ndarray.h"
#include "python/src/net.h"

namespace scopeflow::python {
namespace {

namespace py = pybind11;
using namespace pybind11::literals;

std::vector<std::string> FetchNames(const py::object& fetches) {
  if (fetches.is_none()) return {};
  if (py::isinstance<py::str>(fetches)) {
    ThrowIfError(absl::InvalidArgumentError(
        "fetches: expected a list of variable names, got a str"));
  }
  return fetches.cast<std::vector<std::string>>();
}

py::dict ResultDict(const std::vector<std::string>& names,
                    std::vector<Tensor> tensors, Shared shared) {
  py::dict result;
  for (size_t i = 0; i < names.size(); ++i) {
    result[py::str(names[i])] = ArrayOfTensor(std::move(tensors[i]), shared);
  }
  return result;
}

py::dict Run(const Executor& executor, const PreparedNet& prepared,
             const py::object& feeds, const py::object& fetches,
             Scope* scope) {
  std::vector<Feed> bound;
  if (!feeds.is_none()) {
    if (!py::isinstance<py::dict>(feeds)) {
      ThrowIfError(absl::InvalidArgumentError(
          "feeds: expected a dict {name: numpy array}"));
    }
    bound = ValueOrThrow(FeedsOfDict(feeds.cast<py::dict>()));
  }
  const std::vector<std::string> names = FetchNames(fetches);
  absl::StatusOr<std::vector<Tensor>> out;
  {
    py::gil_scoped_release unlocked;
    // Without a scope: the calling thread's default (scope_guard).
    out = scope != nullptr ? executor.Run(prepared, *scope, bound, names)
                           : executor.Run(prepared, bound, names);
  }
  // The feeds' arrays are let go here, under the GIL (unless a fetched
  // tensor still views one).
  bound.clear();
  // A fetched variable that outlives the run (a parameter) is copied; a
  // temporary the run let go is handed over as it is.
  return ResultDict(names, ValueOrThrow(std::move(out)), Shared::kCopy);
}

}  // namespace

Net LoadModel(const std::string& path) {
  Net net;
  if (!absl::EndsWith(path, ".onnx")) {
    net.def = ValueOrThrow(LoadNet(path));
    return net;
  }
  onnx::ModelProto model = ValueOrThrow(ReadOnnxModel(path));
  ImportedModel imported = ValueOrThrow(ImportOnnx(model));
  net.def = std::move(imported.net);
  net.params = std::move(imported.params);
  net.inputs = std::move(imported.inputs);
  net.outputs = std::move(imported.outputs);
  return net;
}

void RegisterExecutor(py::module_& module) {
  py::class_<Net>(module, "Net", R"doc(
A net (proto/framework.proto's NetDef). Net.load reads a .pbtxt or .pb file;
import_onnx converts an ONNX model, whose parameters come with it (params,
add_params_to).)doc")
      .def_static(
          "load", [](const py::object& path) { return LoadModel(PathOf(path)); },
          "path"_a, "Reads a .pbtxt, .pb or .onnx file.")
      .def_static(
          "from_text",
          [](const std::string& text) {
            return Net{ValueOrThrow(ParseNetText(text)), {}, {}, {}};
          },
          "text"_a, "Parses a net written in protobuf text format.")
      .def_property_readonly("name",
                             [](const Net& net) { return net.def.name(); })
      .def("to_text",
           [](const Net& net) {
             std::string text;
             google::protobuf::TextFormat::PrintToString(net.def, &text);
             return text;
           })
      .def(
          "save",
          [](const Net& net, const py::object& path) {
            ThrowIfError(SaveNet(net.def, PathOf(path)));
          },
          "path"_a, "Writes the net: text for .pbtxt or .txt, else binary.")
      .def_readonly("inputs", &Net::inputs,
                    "An imported model's graph inputs (empty for a net file).")
      .def_readonly("outputs", &Net::outputs,
                    "An imported model's graph outputs (empty for a net file).")
      .def_property_readonly(
          "params",
          [](const Net& net) {
            py::dict params;
            for (const NamedTensor& param : net.params) {
              params[py::str(param.name)] =
                  ArrayOfTensor(param.tensor, Shared::kCopy);
            }
            return params;
          },
          "An imported model's parameters, copied: {name: array}.")
      .def(
          "add_params_to",
          [](const Net& net, Scope& scope) {
            for (const NamedTensor& param : net.params) {
              Tensor* slot =
                  ValueOrThrow(scope.Var(param.name)->GetMutable<Tensor>());
              *slot = param.tensor;
            }
          },
          "scope"_a,
          "Stores an imported model's parameters in `scope`, sharing their "
          "memory with this net.");

  module.def(
      "import_onnx", [](const py::object& path) { return LoadModel(PathOf(path)); },
      "path"_a, R"doc(
Converts an ONNX model file into a Net, its parameters in Net.params (see
docs/CONFORMANCE.md for the ops and opsets). Errors list every node that
does not convert.)doc");

  py::class_<PreparedNet>(module, "PreparedNet",
                          "A block of a net validated and rewritten for a "
                          "place by Executor.prepare; immutable.")
      .def_property_readonly(
          "place", [](const PreparedNet& net) { return net.place().ToString(); })
      .def_property_readonly("input_names", &PreparedNet::input_names)
      .def_property_readonly("var_names", &PreparedNet::var_names);

  py::class_<Executor>(module, "Executor", R"doc(
Prepares nets and runs them against scopes; one executor may run on many
threads at once (the GIL is released while a net runs).)doc")
      .def(py::init([](bool fuse_ops, bool channels_last) {
             ExecutorOptions options;
             options.prepare.fuse_ops = fuse_ops;
             options.prepare.channels_last = channels_last;
             return std::make_unique<Executor>(options);
           }),
           "fuse_ops"_a = true, "channels_last"_a = true)
      .def(
          "prepare",
          [](const Executor& executor, const Net& net, int block,
             const py::object& place) {
            if (place.is_none()) {
              // The calling thread's default place (place_guard).
              return ValueOrThrow(executor.Prepare(net.def, block));
            }
            return ValueOrThrow(executor.Prepare(net.def, block, PlaceOf(place)));
          },
          "net"_a, "block"_a = 0, "place"_a = py::none(),
          "Validates block `block` of `net` for `place` (None: the thread's "
          "default place).")
      .def("run", &Run, "prepared"_a, "feeds"_a = py::none(),
           "fetches"_a = py::none(), "scope"_a = nullptr, R"doc(
Runs a prepared net once against `scope` (None: the thread's default scope,
see scope_guard): feeds {name: array} are read in place, without a copy;
returns {name: array} for `fetches`. Persistable variables the net writes
are created in the scope, those it reads must be there.)doc");
}

}  // namespace scopeflow::python
