"""Bad input raises an exception with the library's message and leaves the
process (and the predictor) working."""

import numpy as np
import pytest

import scopeflow


@pytest.fixture(scope="module")
def predictor(mlp):
    return scopeflow.Predictor(mlp["net"], mlp["params"])


def test_wrong_dtype(predictor):
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='input "image": expected dtype float32, got float64'):
        predictor.run({"image": np.zeros((1, 64))})


def test_wrong_shape(predictor):
    with pytest.raises(ValueError,
                       match=r'input "image": expected shape \[-1, 64\], got \[1, 63\]'):
        predictor.run({"image": np.zeros((1, 63), np.float32)})


def test_unknown_and_missing_names(predictor):
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match=r'unknown input "pixels" \(the model\'s inputs: image\)'):
        predictor.run({"pixels": np.zeros((1, 64), np.float32)})
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match=r'missing input "image" \(float32 \[-1, 64\]\)'):
        predictor.run({})
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='fetch "hidden" is not an output of the model'):
        predictor.run({"image": np.zeros((1, 64), np.float32)},
                      fetches=["hidden"])


def test_non_contiguous_array(predictor):
    wide = np.zeros((1, 128), np.float32)
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match=r'feed "image": the array is not C-contiguous '
                             r'\(strides \[512, 8\] bytes\); pass '
                             r'numpy.ascontiguousarray'):
        predictor.run({"image": wide[:, ::2]})
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match="not C-contiguous"):
        predictor.run({"image": np.asfortranarray(np.ones((2, 64), np.float32))})


def test_what_is_not_an_array(predictor):
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='feed "image": expected a numpy array, got list'):
        predictor.run({"image": [[0.0] * 64]})
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match="numpy dtype complex64 has no scopeflow dtype"):
        predictor.run({"image": np.zeros((1, 64), np.complex64)})
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match="not in this machine's byte order"):
        predictor.run({"image": np.zeros((1, 64), ">f4")})
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match="names must be strings"):
        predictor.run({1: np.zeros((1, 64), np.float32)})
    with pytest.raises(TypeError):
        predictor.run([np.zeros((1, 64), np.float32)])


def test_the_predictor_still_runs_after_errors(predictor, mlp):
    out = predictor.run({"image": mlp["digit"]})["probabilities"]
    np.testing.assert_allclose(out, mlp["probabilities"], rtol=1e-6, atol=1e-7)


def test_loading_errors_name_the_file(mlp, tmp_path):
    with pytest.raises(scopeflow.Error, match="nowhere.pbtxt"):
        scopeflow.Predictor(str(tmp_path / "nowhere.pbtxt"))
    # The MLP without its parameters.
    with pytest.raises(scopeflow.Error, match="fc1"):
        scopeflow.Predictor(mlp["net"])
    bad = tmp_path / "bad.pbtxt"
    bad.write_text("format_version: 1 blocks { ops { type: \"nope\" } }")
    with pytest.raises(scopeflow.Error, match="nope"):
        scopeflow.Predictor(str(bad))
    with pytest.raises(scopeflow.InvalidArgumentError, match="tpu"):
        scopeflow.Predictor(mlp["net"], mlp["params"], place="tpu")
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='no variable "nope" to output'):
        scopeflow.Predictor(mlp["net"], mlp["params"], outputs=["nope"])


def test_scope_errors():
    scope = scopeflow.Scope()
    with pytest.raises(scopeflow.NotFoundError,
                       match='no variable "w" in this scope or its parents'):
        scope.get("w")
    with pytest.raises(LookupError):
        scope.get("w")
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='variable "w": numpy dtype object'):
        scope.set("w", np.array([object()]))
