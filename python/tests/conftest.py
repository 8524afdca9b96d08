"""Shared fixtures: the example nets, the scopeflow command, and the MLP's
parameters and probabilities as `scopeflow run` gives them."""

import os
import subprocess

import numpy as np
import pytest


@pytest.fixture(scope="session")
def examples():
    return os.environ.get("SCOPEFLOW_EXAMPLES", "examples")


@pytest.fixture(scope="session")
def mlp(examples, tmp_path_factory):
    """The MLP of examples/mlp: its net, the parameters its startup net makes
    (saved by the command), its input digit and the command's output."""
    out = tmp_path_factory.mktemp("mlp")
    net = os.path.join(examples, "mlp", "main.pbtxt")
    digit = os.path.join(examples, "mlp", "digit.npy")
    params = str(out / "mlp.params")
    subprocess.run(
        [os.environ.get("SCOPEFLOW_CLI", "scopeflow"), "run", net,
         "--startup=" + os.path.join(examples, "mlp", "startup.pbtxt"),
         "--feed=image=" + digit, "--fetch=probabilities",
         "--save_params=" + params, "--output_dir=" + str(out)],
        check=True, stdout=subprocess.DEVNULL)
    return {
        "net": net,
        "startup": os.path.join(examples, "mlp", "startup.pbtxt"),
        "params": params,
        "digit": np.load(digit),
        "probabilities": np.load(out / "probabilities.npy"),
    }


def mlp_reference(scope_or_params, image):
    """The MLP's probabilities computed with numpy from its parameters."""
    get = scope_or_params.get
    hidden = np.maximum(image.astype(np.float64) @ get("fc1.w") + get("fc1.b"), 0)
    logits = hidden @ get("fc2.w") + get("fc2.b")
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
