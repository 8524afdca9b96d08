"""Scope, Net and Executor: the level below Predictor."""

import numpy as np
import pytest

import scopeflow
from conftest import mlp_reference


def test_scope_variables_and_lookup():
    root = scopeflow.Scope()
    root.set("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    kid = root.new_scope()
    assert "w" in kid and "v" not in kid
    np.testing.assert_array_equal(kid.get("w"), [[0, 1, 2], [3, 4, 5]])
    # A local variable shadows the parent's.
    kid.set("w", np.array([7], np.int64))
    assert kid.get("w").dtype == np.int64
    assert root.get("w").shape == (2, 3)
    assert kid.local_var_names() == ["w"]
    assert root.num_kids == 1
    # set copies (any layout); get copies: neither aliases the scope.
    source = np.arange(8, dtype=np.float64).reshape(2, 4)[:, ::2]
    root.set("strided", source)
    source[0, 0] = 99
    got = root.get("strided")
    np.testing.assert_array_equal(got, [[0, 2], [4, 6]])
    got[0, 0] = -1
    assert root.get("strided")[0, 0] == 0
    for dtype in [np.float16, np.int32, np.uint8, np.int8, np.int16,
                  np.uint16, np.uint32, np.uint64, np.bool_]:
        root.set("typed", np.ones(3, dtype))
        assert root.get("typed").dtype == dtype


def test_a_kid_keeps_its_parent_alive():
    kid = scopeflow.Scope().new_scope()
    kid.set("x", np.ones(2, np.float32))
    np.testing.assert_array_equal(kid.get("x"), [1, 1])


def test_startup_then_main_as_the_command_does(mlp):
    executor = scopeflow.Executor()
    scope = scopeflow.Scope()
    startup = executor.prepare(scopeflow.Net.load(mlp["startup"]))
    assert executor.run(startup, scope=scope) == {}
    assert scope.local_var_names() == ["fc1.b", "fc1.w", "fc2.b", "fc2.w"]
    main = executor.prepare(scopeflow.Net.load(mlp["net"]), place="cpu")
    assert main.input_names == ["image"]
    out = executor.run(main, {"image": mlp["digit"]},
                       ["probabilities", "fc1.b"], scope=scope)
    np.testing.assert_allclose(out["probabilities"], mlp["probabilities"],
                               rtol=1e-6, atol=1e-7)
    # A fetched parameter is a copy: changing it leaves the scope alone.
    out["fc1.b"][:] = 123
    assert not np.any(scope.get("fc1.b") == 123)
    np.testing.assert_allclose(out["probabilities"],
                               mlp_reference(scope, mlp["digit"]), rtol=1e-5)


def test_net_text_round_trip(tmp_path, mlp):
    net = scopeflow.Net.load(mlp["net"])
    assert net.name == "mlp"
    again = scopeflow.Net.from_text(net.to_text())
    assert again.to_text() == net.to_text()
    net.save(str(tmp_path / "mlp.pb"))
    assert scopeflow.Net.load(str(tmp_path / "mlp.pb")).to_text() == net.to_text()
    with pytest.raises(scopeflow.InvalidArgumentError, match="format_version"):
        scopeflow.Net.from_text('name: "unversioned"')


def test_executor_errors_name_the_variable(mlp):
    executor = scopeflow.Executor()
    main = executor.prepare(scopeflow.Net.load(mlp["net"]))
    with pytest.raises(scopeflow.Error, match='persistable variable "fc1.w"'):
        executor.run(main, {"image": mlp["digit"]}, ["probabilities"],
                     scope=scopeflow.Scope())
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match="expected a list of variable names"):
        executor.run(main, {"image": mlp["digit"]}, "probabilities")
