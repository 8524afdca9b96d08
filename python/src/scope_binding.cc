// Scope for Python, and the calling thread's default scope and place with
// the context managers that set them (Paddle's fluid.scope_guard is the
// model): `with scopeflow.scope_guard(scope):` makes `scope` the default of
// the thread running the block, which Executor.run without a scope uses.
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "framework/default_scope.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "platform/default_place.h"
#include "pybind11/stl.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"
#include "python/src/ndarray.h"

namespace scopeflow::python {
namespace {

namespace py = pybind11;
using namespace pybind11::literals;

const Tensor& FindTensor(const Scope& scope, const std::string& name) {
  const Variable* var = scope.FindVar(name);
  if (var == nullptr) {
    ThrowIfError(absl::NotFoundError(absl::StrCat(
        "no variable \"", name, "\" in this scope or its parents")));
  }
  absl::StatusOr<const Tensor*> tensor = var->Get<Tensor>();
  if (!tensor.ok()) {
    ThrowIfError(absl::InvalidArgumentError(absl::StrCat(
        "variable \"", name, "\" holds ", var->TypeName(), ", not a tensor")));
  }
  return **tensor;
}

void SetTensor(Scope& scope, const std::string& name, const py::handle& value,
               const py::object& place) {
  const std::string what = absl::StrCat("variable \"", name, "\"");
  Tensor tensor = ValueOrThrow(CopyOfArray(value, what));
  const Place target = PlaceOf(place);
  if (!target.is_cpu()) tensor = ValueOrThrow(tensor.CopyTo(target));
  Tensor* slot = ValueOrThrow(scope.Var(name)->GetMutable<Tensor>());
  *slot = std::move(tensor);
}

// Sets a thread's default for the `with` block it guards. Guards are left
// innermost first, as `with` blocks are, on the thread that entered them:
// leaving one on another thread raises instead of changing that thread's
// default.
template <typename Guard, typename Value>
class ContextGuard {
 public:
  ContextGuard(Value value, py::object keep_alive)
      : value_(value), keep_alive_(std::move(keep_alive)) {}

  void Enter() {
    if (guard_ != nullptr) {
      ThrowIfError(absl::FailedPreconditionError(
          "this guard is already entered; make a new one per with block"));
    }
    guard_ = std::make_unique<Guard>(Dereference(value_));
    thread_ = std::this_thread::get_id();
  }

  void Exit() {
    if (guard_ == nullptr) return;
    if (thread_ != std::this_thread::get_id()) {
      ThrowIfError(absl::FailedPreconditionError(
          "a guard must be left on the thread that entered it"));
    }
    guard_.reset();
  }

 private:
  static Scope& Dereference(Scope* scope) { return *scope; }
  static const Place& Dereference(const Place& place) { return place; }

  Value value_;
  // The Python object the guard refers to (the scope), kept alive while
  // it is the default.
  py::object keep_alive_;
  std::unique_ptr<Guard> guard_;
  std::thread::id thread_;
};

using PyScopeGuard = ContextGuard<ScopeGuard, Scope*>;
using PyPlaceGuard = ContextGuard<PlaceGuard, Place>;

}  // namespace

Place PlaceOf(const py::object& place) {
  if (place.is_none()) return DefaultPlace();
  if (!py::isinstance<py::str>(place)) {
    ThrowIfError(absl::InvalidArgumentError(
        absl::StrCat("place: expected \"cpu\", \"cuda\" or \"cuda:N\", got a ",
                     py::type::handle_of(place)
                         .attr("__name__")
                         .cast<std::string>())));
  }
  return ValueOrThrow(ParsePlace(place.cast<std::string>()));
}

std::string PathOf(const py::object& path) {
  return py::module_::import("os").attr("fspath")(path).cast<std::string>();
}

void RegisterScope(py::module_& module) {
  py::class_<Scope>(module, "Scope", R"doc(
Named variables in a tree of scopes: a lookup that misses here looks in the
parents. A Scope() is a root, owned by Python; new_scope() makes a kid owned
by its parent (which the kid keeps alive). Safe to use from many threads;
setting a variable that a run on another thread reads at that moment is
the caller's race.)doc")
      .def(py::init<>())
      .def("new_scope", &Scope::NewScope,
           py::return_value_policy::reference_internal,
           "A kid of this scope, owned by it.")
      .def("set", &SetTensor, "name"_a, "value"_a, "place"_a = py::none(),
           "Sets variable `name` of this scope (not a parent's) to a copy "
           "of the array `value` on `place` (None: the thread's default).")
      .def(
          "get",
          [](const Scope& scope, const std::string& name) {
            return ArrayOfTensor(FindTensor(scope, name), Shared::kCopy);
          },
          "name"_a,
          "A copy of the tensor of variable `name`, found here or in a "
          "parent; NotFoundError if none has it.")
      .def("__contains__",
           [](const Scope& scope, const std::string& name) {
             return scope.FindVar(name) != nullptr;
           })
      .def("local_var_names", &Scope::LocalVarNames,
           "The names of this scope's own variables, sorted.")
      .def_property_readonly("num_kids", &Scope::num_kids);

  module.def("global_scope", &GlobalScope, py::return_value_policy::reference,
             "The process-wide root scope: every thread's default scope "
             "unless a scope_guard says otherwise.");
  module.def("default_scope", &DefaultScope,
             py::return_value_policy::reference,
             "The calling thread's default scope.");
  module.def(
      "default_place", [] { return DefaultPlace().ToString(); },
      "The calling thread's default place: \"cpu\" unless a place_guard "
      "says otherwise.");

  py::class_<PyScopeGuard>(module, "_ScopeGuard")
      .def("__enter__", &PyScopeGuard::Enter)
      .def("__exit__", [](PyScopeGuard& guard, py::args) { guard.Exit(); });
  module.def(
      "scope_guard",
      [](py::object scope) {
        if (!py::isinstance<Scope>(scope)) {
          ThrowIfError(absl::InvalidArgumentError(absl::StrCat(
              "scope_guard: expected a Scope, got ",
              py::type::handle_of(scope).attr("__name__").cast<std::string>())));
        }
        Scope* raw = scope.cast<Scope*>();
        return PyScopeGuard(raw, std::move(scope));
      },
      "scope"_a, R"doc(
`with scope_guard(scope):` makes `scope` the calling thread's default scope
for the block (Executor.run without a scope runs in it) and restores the
previous default when the block ends, also on an exception. Other threads
keep their own defaults.)doc");

  py::class_<PyPlaceGuard>(module, "_PlaceGuard")
      .def("__enter__", &PyPlaceGuard::Enter)
      .def("__exit__", [](PyPlaceGuard& guard, py::args) { guard.Exit(); });
  module.def(
      "place_guard",
      [](const py::object& place) {
        if (place.is_none()) {
          ThrowIfError(absl::InvalidArgumentError(
              "place_guard: name a place (\"cpu\", \"cuda:N\")"));
        }
        return PyPlaceGuard(PlaceOf(place), py::none());
      },
      "place"_a, R"doc(
`with place_guard("cuda:0"):` makes the place the calling thread's default
for the block (Executor.prepare, Predictor, Trainer and Scope.set without a
place use it) and restores the previous default when the block ends.)doc");
}

}  // namespace scopeflow::python
