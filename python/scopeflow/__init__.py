"""scopeflow from Python: run nets and ONNX models, keep scopes, train.

    import numpy as np
    import scopeflow

    predictor = scopeflow.Predictor("examples/mlp/main.pbtxt", params="mlp.params")
    out = predictor.run({"image": np.zeros((1, 64), np.float32)})
    out["probabilities"]            # numpy array [1, 10]

Predictor is the embedding API: one model, runs from many threads at once
(the GIL is released while a net runs). Scope, Net, Executor and
import_onnx are the level below; Trainer trains a net on batches from any
Python iterator. Defaults follow the calling thread: `with
scope_guard(scope):` and `with place_guard("cuda:0"):` set the scope and
place that calls without one use on that thread only.

Errors raise scopeflow.Error (a RuntimeError) with the library's message;
bad input (a name, dtype or shape the model does not take, an array that is
not C-contiguous) raises InvalidArgumentError, also a ValueError.
"""

from ._scopeflow import (
    Error,
    Executor,
    InvalidArgumentError,
    Net,
    NotFoundError,
    PreparedNet,
    Predictor,
    Scope,
    TensorInfo,
    UnimplementedError,
    default_place,
    default_scope,
    global_scope,
    import_onnx,
    place_guard,
    scope_guard,
)
from ._scopeflow import _Trainer

__all__ = [
    "Error",
    "Executor",
    "InvalidArgumentError",
    "Net",
    "NotFoundError",
    "PreparedNet",
    "Predictor",
    "Scope",
    "TensorInfo",
    "Trainer",
    "UnimplementedError",
    "default_place",
    "default_scope",
    "global_scope",
    "import_onnx",
    "place_guard",
    "scope_guard",
]


def _as_net(net):
    return net if isinstance(net, Net) else Net.load(net)


def _batch_rows(feeds):
    """The examples in a batch: the leading dimension of its first feed."""
    for value in feeds.values():
        shape = getattr(value, "shape", ())
        return shape[0] if len(shape) > 0 else 1
    return 0


class Trainer:
    """Trains a net on batches from a Python data iterator.

    `startup` makes the parameters (a Net or a net file), `main` is the
    forward net ending in the `loss` variable (and optionally an `accuracy`
    one). The training net adds the backward pass and the `optimizer`'s
    updates ("sgd", "momentum" or "adam"); parameters and optimizer state
    live in `scope`. Batches are dicts {input name: numpy array}, read in
    place.

        trainer = scopeflow.Trainer("startup.pbtxt", "main.pbtxt",
                                    optimizer="adam", learning_rate=0.003)
        trainer.initialize()
        losses = trainer.fit(lambda: batches(train), epochs=3)
        trainer.evaluate(batches(test))   # {"loss": ..., "accuracy": ...}
    """

    def __init__(self, startup, main, loss="loss", accuracy="",
                 optimizer="sgd", learning_rate=0.01, momentum=0.9,
                 weight_decay=0.0, clip_norm=0.0, place=None):
        self._trainer = _Trainer(
            _as_net(startup), _as_net(main), loss=loss, accuracy=accuracy,
            optimizer=optimizer, learning_rate=learning_rate,
            momentum=momentum, weight_decay=weight_decay,
            clip_norm=clip_norm, place=place)

    def initialize(self):
        """Runs the startup net: fresh parameters and optimizer state."""
        self._trainer.initialize()

    def step(self, feeds):
        """One update on one batch; returns its loss (before the update)."""
        return self._trainer.step(feeds)

    def fit(self, data, epochs=1, on_step=None):
        """Trains `epochs` passes over `data` and returns each step's loss.

        `data` is an iterable of batches that can be iterated again (a list)
        or a callable returning a new iterator per epoch (a generator
        function); a one-shot iterator serves one epoch only. `on_step(step,
        loss)` is called after each step.
        """
        losses = []
        for epoch in range(epochs):
            batches = data() if callable(data) else data
            steps = 0
            for feeds in batches:
                loss = self._trainer.step(feeds)
                losses.append(loss)
                steps += 1
                if on_step is not None:
                    on_step(len(losses), loss)
            if steps == 0:
                raise InvalidArgumentError(
                    "the data gave no batch in epoch %d; pass a list or a "
                    "callable returning a new iterator per epoch" % (epoch + 1))
        return losses

    def evaluate(self, data):
        """The loss and accuracy of the inference net over `data`'s batches,
        weighted by their rows; the parameters are not changed."""
        total = {"loss": 0.0, "accuracy": 0.0}
        rows = 0
        for feeds in data:
            loss, accuracy = self._trainer.evaluate_batch(feeds)
            n = _batch_rows(feeds)
            total["loss"] += loss * n
            total["accuracy"] += accuracy * n
            rows += n
        if rows == 0:
            raise InvalidArgumentError("evaluate: the data gave no batch")
        return {"loss": total["loss"] / rows,
                "accuracy": total["accuracy"] / rows,
                "examples": rows}

    @property
    def step_count(self):
        """The steps done so far (the step counter in the scope)."""
        return self._trainer.step_count

    @property
    def scope(self):
        """The scope holding the parameters and the optimizer state."""
        return self._trainer.scope

    @property
    def train_net(self):
        """The main net with its backward pass and optimizer updates."""
        return self._trainer.train_net

    @property
    def state_names(self):
        """The persistable variables: parameters, optimizer state, step."""
        return self._trainer.state_names
