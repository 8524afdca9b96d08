// The training steps for Python: a Trainer (framework/training/trainer.h)
// over a startup and a main net, stepped on batches the caller feeds. The
// loop over a data iterator is Python's (scopeflow.Trainer.fit).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/training/trainer.h"
#include "pybind11/stl.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"
#include "python/src/ndarray.h"
#include "python/src/net.h"

namespace scopeflow::python {
namespace {

namespace py = pybind11;
using namespace pybind11::literals;

std::unique_ptr<Trainer> CreateTrainer(const Net& startup, const Net& main,
                                       const std::string& loss,
                                       const std::string& accuracy,
                                       const std::string& optimizer,
                                       float learning_rate, float momentum,
                                       float weight_decay, float clip_norm,
                                       const py::object& place) {
  TrainerOptions options;
  options.loss = loss;
  options.accuracy = accuracy;
  // Batches come from the caller, fed by name.
  options.features_feed = "";
  options.labels_feed = "";
  options.optimizer.type = optimizer;
  options.optimizer.learning_rate = learning_rate;
  options.optimizer.momentum = momentum;
  options.optimizer.weight_decay = weight_decay;
  options.optimizer.clip_norm = clip_norm;
  options.place = PlaceOf(place);
  return ValueOrThrow(Trainer::Create(startup.def, main.def, options));
}

std::vector<Feed> Feeds(const py::dict& feeds) {
  return ValueOrThrow(FeedsOfDict(feeds));
}

}  // namespace

void RegisterTrainer(py::module_& module) {
  py::class_<Trainer>(module, "_Trainer")
      .def(py::init(&CreateTrainer), "startup"_a, "main"_a, "loss"_a,
           "accuracy"_a, "optimizer"_a, "learning_rate"_a, "momentum"_a,
           "weight_decay"_a, "clip_norm"_a, "place"_a)
      .def("initialize",
           [](Trainer& trainer) {
             absl::Status status;
             {
               py::gil_scoped_release unlocked;
               status = trainer.Initialize();
             }
             ThrowIfError(status);
           })
      .def("step",
           [](Trainer& trainer, const py::dict& feeds) {
             std::vector<Feed> bound = Feeds(feeds);
             absl::StatusOr<double> loss;
             {
               py::gil_scoped_release unlocked;
               loss = trainer.TrainStep(bound);
             }
             bound.clear();
             return ValueOrThrow(std::move(loss));
           })
      .def("evaluate_batch",
           [](Trainer& trainer, const py::dict& feeds) {
             std::vector<Feed> bound = Feeds(feeds);
             absl::StatusOr<std::pair<double, double>> result;
             {
               py::gil_scoped_release unlocked;
               result = trainer.EvaluateBatch(bound);
             }
             bound.clear();
             return ValueOrThrow(std::move(result));
           })
      .def_property_readonly(
          "step_count",
          [](const Trainer& trainer) { return ValueOrThrow(trainer.step()); })
      .def_property_readonly("scope", &Trainer::scope,
                             py::return_value_policy::reference_internal)
      .def_property_readonly(
          "train_net",
          [](const Trainer& trainer) {
            return Net{trainer.train_net(), {}, {}, {}};
          })
      .def_property_readonly("state_names", &Trainer::state_names);
}

}  // namespace scopeflow::python
