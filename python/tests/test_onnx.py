"""An ONNX model exported by torch (in a child process, so that torch's own
copies of oneDNN and protobuf stay out of this one) gives torch's outputs
through Predictor and through import_onnx and an Executor."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import scopeflow

EXPORT = textwrap.dedent("""
    import sys
    import numpy as np
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(4 * 5 * 5, 6), torch.nn.Softmax(-1))
    model.eval()
    x = torch.rand(2, 3, 5, 5)
    torch.onnx.export(model, x, sys.argv[1], input_names=["x"],
                      output_names=["y"], opset_version=13,
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    np.save(sys.argv[2], x.numpy())
    with torch.no_grad():
        np.save(sys.argv[3], model(x).numpy())
""")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("onnx")
    paths = [str(out / name) for name in ("model.onnx", "x.npy", "y.npy")]
    subprocess.run([sys.executable, "-c", EXPORT] + paths, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return {"model": paths[0], "x": np.load(paths[1]), "y": np.load(paths[2])}


def test_predictor_runs_an_onnx_model(exported):
    predictor = scopeflow.Predictor(exported["model"])
    [x] = predictor.inputs
    assert (x.name, x.dtype, x.shape) == ("x", np.dtype("float32"),
                                          (-1, 3, 5, 5))
    assert x.dim_names == ["batch", "", "", ""]
    out = predictor.run({"x": exported["x"]})
    assert list(out) == ["y"]
    np.testing.assert_allclose(out["y"], exported["y"], rtol=1e-5, atol=1e-6)


def test_import_onnx_then_an_executor(exported):
    net = scopeflow.import_onnx(exported["model"])
    assert net.inputs == ["x"] and net.outputs == ["y"]
    assert len(net.params) == 4
    assert {p.shape for p in net.params.values()} >= {(4,), (6,)}
    scope = scopeflow.Scope()
    net.add_params_to(scope)
    executor = scopeflow.Executor()
    prepared = executor.prepare(net)
    out = executor.run(prepared, {"x": exported["x"]}, ["y"], scope=scope)
    np.testing.assert_allclose(out["y"], exported["y"], rtol=1e-5, atol=1e-6)


def test_import_errors_name_the_problem(tmp_path):
    with pytest.raises(scopeflow.Error, match="missing.onnx"):
        scopeflow.import_onnx(str(tmp_path / "missing.onnx"))
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07not a model at all")
    with pytest.raises(scopeflow.Error, match="garbage.onnx"):
        scopeflow.Predictor(str(garbage))
