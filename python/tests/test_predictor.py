"""Predictor on the MLP example: the probabilities `scopeflow run` gives,
metadata, fetches, and arrays passed without copies."""

import numpy as np
import pytest

import scopeflow
from conftest import mlp_reference


def test_gives_the_commands_probabilities(mlp):
    predictor = scopeflow.Predictor(mlp["net"], params=mlp["params"])
    out = predictor.run({"image": mlp["digit"]})
    assert list(out) == ["probabilities"]
    assert out["probabilities"].dtype == np.float32
    assert out["probabilities"].shape == mlp["probabilities"].shape
    np.testing.assert_allclose(out["probabilities"], mlp["probabilities"],
                               rtol=1e-6, atol=1e-7)
    assert abs(out["probabilities"].sum() - 1) < 1e-5


def test_matches_numpy_on_a_batch(mlp):
    predictor = scopeflow.Predictor(mlp["net"], mlp["params"], place="cpu")
    scope = scopeflow.Scope()
    startup = scopeflow.Net.load(mlp["startup"])
    executor = scopeflow.Executor()
    executor.run(executor.prepare(startup), scope=scope)
    image = np.random.default_rng(3).random((5, 64), dtype=np.float32)
    out = predictor.run({"image": image})["probabilities"]
    np.testing.assert_allclose(out, mlp_reference(scope, image), rtol=1e-5,
                               atol=1e-6)


def test_metadata(mlp):
    predictor = scopeflow.Predictor(mlp["net"], mlp["params"])
    assert predictor.name == "mlp"
    assert predictor.place == "cpu"
    [image] = predictor.inputs
    assert (image.name, image.dtype, image.shape) == (
        "image", np.dtype("float32"), (-1, 64))
    [probabilities] = predictor.outputs
    assert (probabilities.name, probabilities.shape) == (
        "probabilities", (-1, 10))
    assert "float32 [-1, 64]" in repr(image)


def test_fetches_choose_among_outputs(mlp):
    predictor = scopeflow.Predictor(mlp["net"], mlp["params"],
                                    outputs=["logits", "probabilities"])
    out = predictor.run({"image": mlp["digit"]}, fetches=["probabilities"])
    assert list(out) == ["probabilities"]
    both = predictor.run({"image": mlp["digit"]},
                         fetches=["probabilities", "logits"])
    assert list(both) == ["probabilities", "logits"]
    logits = both["logits"].astype(np.float64)
    e = np.exp(logits - logits.max())
    np.testing.assert_allclose(both["probabilities"], e / e.sum(), rtol=1e-5)


def test_outputs_view_the_runs_tensors(mlp):
    predictor = scopeflow.Predictor(mlp["net"], mlp["params"])
    image = mlp["digit"].copy()
    first = predictor.run({"image": image})["probabilities"]
    # Not a copy numpy owns: the array keeps the run's tensor alive.
    assert not first.flags.owndata
    assert first.base is not None
    # The input was read in place and left as it was.
    np.testing.assert_array_equal(image, mlp["digit"])
    # A later run does not write over an array still held.
    kept = first.copy()
    predictor.run({"image": np.zeros_like(image)})
    np.testing.assert_array_equal(first, kept)


def test_read_only_inputs_are_read_in_place(mlp):
    predictor = scopeflow.Predictor(mlp["net"], mlp["params"])
    image = mlp["digit"].copy()
    image.setflags(write=False)
    out = predictor.run({"image": image})["probabilities"]
    np.testing.assert_allclose(out, mlp["probabilities"], rtol=1e-6, atol=1e-7)


def test_clone_shares_the_model(mlp):
    predictor = scopeflow.Predictor(mlp["net"], mlp["params"])
    clone = predictor.clone()
    del predictor
    out = clone.run({"image": mlp["digit"]})["probabilities"]
    np.testing.assert_allclose(out, mlp["probabilities"], rtol=1e-6, atol=1e-7)


def test_accepts_path_objects(mlp, tmp_path):
    import pathlib
    predictor = scopeflow.Predictor(pathlib.Path(mlp["net"]),
                                    pathlib.Path(mlp["params"]))
    assert predictor.inputs[0].name == "image"
