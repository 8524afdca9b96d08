"""scope_guard and place_guard set the calling thread's defaults, which
Executor.prepare and Executor.run without a place or scope use; other
threads keep theirs, and leaving a block restores the previous default."""

import threading

import numpy as np
import pytest

import scopeflow

# out = x + w, w a parameter the scope must hold.
ADD_PARAMETER = """
format_version: 1
name: "add_parameter"
blocks {
  vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ 1 ] }
  vars { name: "w" dtype: DATA_TYPE_FLOAT32 shape: [ 1 ] persistable: true }
  ops {
    type: "add"
    inputs { slot: "X" vars: "x" }
    inputs { slot: "Y" vars: "w" }
    outputs { slot: "Out" vars: "out" }
  }
}
"""


def test_scope_guard_sets_and_restores_the_default():
    outer, inner = scopeflow.Scope(), scopeflow.Scope()
    assert scopeflow.default_scope() is scopeflow.global_scope()
    with scopeflow.scope_guard(outer):
        assert scopeflow.default_scope() is outer
        with scopeflow.scope_guard(inner):
            assert scopeflow.default_scope() is inner
        assert scopeflow.default_scope() is outer
    assert scopeflow.default_scope() is scopeflow.global_scope()


def test_guards_restore_on_an_exception():
    scope = scopeflow.Scope()
    with pytest.raises(KeyError):
        with scopeflow.scope_guard(scope), scopeflow.place_guard("cuda:2"):
            assert scopeflow.default_place() == "cuda:2"
            raise KeyError("unwind")
    assert scopeflow.default_scope() is scopeflow.global_scope()
    assert scopeflow.default_place() == "cpu"


def test_run_uses_the_guarded_scope():
    executor = scopeflow.Executor()
    prepared = executor.prepare(scopeflow.Net.from_text(ADD_PARAMETER))
    scope = scopeflow.Scope()
    scope.set("w", np.array([10], np.float32))
    x = np.array([1], np.float32)
    with scopeflow.scope_guard(scope):
        out = executor.run(prepared, {"x": x}, ["out"])
    np.testing.assert_array_equal(out["out"], [11])
    # Outside the guard: the global scope, which has no w.
    with pytest.raises(scopeflow.Error, match='persistable variable "w" is not in the scope'):
        executor.run(prepared, {"x": x}, ["out"])


def test_place_guard_sets_where_nets_are_prepared():
    executor = scopeflow.Executor()
    net = scopeflow.Net.from_text(ADD_PARAMETER)
    assert executor.prepare(net).place == "cpu"
    with scopeflow.place_guard("cuda:1"):
        assert scopeflow.default_place() == "cuda:1"
        # Prepared for cuda:1, or refused by a build or machine without it.
        try:
            assert executor.prepare(net).place == "cuda:1"
        except scopeflow.Error as e:
            assert "cuda:1 is not available" in str(e)
        assert executor.prepare(net, place="cpu").place == "cpu"
    assert executor.prepare(net).place == "cpu"
    with pytest.raises(scopeflow.InvalidArgumentError, match="gpu:0"):
        scopeflow.place_guard("gpu:0")


def test_threads_never_see_each_others_defaults():
    executor = scopeflow.Executor()
    prepared = executor.prepare(scopeflow.Net.from_text(ADD_PARAMETER))
    threads, runs = 6, 100
    scopes = []
    for t in range(threads):
        scope = scopeflow.Scope()
        scope.set("w", np.array([100 * t], np.float32))
        scopes.append(scope)
    wrong = []
    start = threading.Barrier(threads)

    def work(t):
        place = "cpu" if t % 2 == 0 else "cuda:%d" % t
        with scopeflow.scope_guard(scopes[t]), scopeflow.place_guard(place):
            start.wait()
            for r in range(runs):
                if scopeflow.default_scope() is not scopes[t]:
                    wrong.append((t, "scope"))
                if scopeflow.default_place() != place:
                    wrong.append((t, "place"))
                out = executor.run(prepared, {"x": np.array([r], np.float32)},
                                   ["out"])["out"]
                if out[0] != 100 * t + r:
                    wrong.append((t, r, out[0]))

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert wrong == []
    assert scopeflow.default_scope() is scopeflow.global_scope()


def test_a_guard_is_left_on_its_own_thread():
    guard = scopeflow.scope_guard(scopeflow.Scope())
    guard.__enter__()
    failures = []

    def leave():
        try:
            guard.__exit__(None, None, None)
        except scopeflow.Error as e:
            failures.append(str(e))

    thread = threading.Thread(target=leave)
    thread.start()
    thread.join()
    assert failures == ["a guard must be left on the thread that entered it"]
    guard.__exit__(None, None, None)
    assert scopeflow.default_scope() is scopeflow.global_scope()


def test_guard_arguments_are_checked():
    with pytest.raises(scopeflow.InvalidArgumentError, match="got NoneType"):
        scopeflow.scope_guard(None)
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match="expected a Scope, got str"):
        scopeflow.scope_guard("not a scope")
    with pytest.raises(scopeflow.InvalidArgumentError, match="name a place"):
        scopeflow.place_guard(None)
    guard = scopeflow.place_guard("cpu")
    with guard:
        with pytest.raises(scopeflow.Error, match="already entered"):
            guard.__enter__()
