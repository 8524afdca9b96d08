"""Many Python threads on one Predictor: each gets its own input's output
(the GIL is released during runs, so the runs overlap in C++)."""

import threading

import numpy as np

import scopeflow
from conftest import mlp_reference


def test_many_threads_on_one_predictor(mlp):
    predictor = scopeflow.Predictor(mlp["net"], mlp["params"])
    scope = scopeflow.Scope()
    executor = scopeflow.Executor()
    executor.run(executor.prepare(scopeflow.Net.load(mlp["startup"])),
                 scope=scope)
    threads, runs = 8, 50
    rng = np.random.default_rng(7)
    # Runs of a millisecond or so, for other threads to overlap with.
    images = [rng.random((2048 + t, 64), dtype=np.float32)
              for t in range(threads)]
    expected = [mlp_reference(scope, image) for image in images]
    wrong = []
    errors = []
    start = threading.Barrier(threads)

    def work(t):
        try:
            start.wait()
            for _ in range(runs):
                out = predictor.run({"image": images[t]})["probabilities"]
                if not np.allclose(out, expected[t], rtol=1e-5, atol=1e-6):
                    wrong.append(t)
        except Exception as e:  # pylint: disable=broad-except
            errors.append(e)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert wrong == []
    # Runs overlapped: each holds a scope of the pool while the net runs,
    # which a run holding the GIL would never let another thread do.
    assert predictor.pooled_scopes > 1
