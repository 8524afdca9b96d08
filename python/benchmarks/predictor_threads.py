"""Predictor.run on the MLP from Python: runs per second on 1, 2 and 4
threads sharing one predictor, at batch 1 and 64, in interleaved rounds
(the machine is noisy: compare the ratios of one run). Threads scale only
because the GIL is released while the net runs.

    bazel run --config=cpu_only //python:predictor_threads_benchmark
"""

import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import scopeflow


def mlp_params(directory):
    examples = os.environ["SCOPEFLOW_EXAMPLES"]
    params = os.path.join(directory, "mlp.params")
    subprocess.run(
        [os.environ["SCOPEFLOW_CLI"], "run",
         os.path.join(examples, "mlp", "main.pbtxt"),
         "--startup=" + os.path.join(examples, "mlp", "startup.pbtxt"),
         "--feed=image=" + os.path.join(examples, "mlp", "digit.npy"),
         "--save_params=" + params],
        check=True, stdout=subprocess.DEVNULL)
    return os.path.join(examples, "mlp", "main.pbtxt"), params


def runs_per_second(predictor, image, threads, seconds):
    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def work(t):
        feeds = {"image": image}
        while time.perf_counter() < stop:
            predictor.run(feeds)
            counts[t] += 1

    start = time.perf_counter()
    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.perf_counter() - start)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as directory:
        net, params = mlp_params(directory)
        predictor = scopeflow.Predictor(net, params)
    rng = np.random.default_rng(0)
    print("OMP_NUM_THREADS=%s, %d rounds of 0.5 s each, median runs/s"
          % (os.environ.get("OMP_NUM_THREADS", "unset"), rounds))
    for batch in (1, 64):
        image = rng.random((batch, 64), dtype=np.float32)
        figures = {1: [], 2: [], 4: []}
        for _ in range(rounds):
            for threads in figures:
                figures[threads].append(
                    runs_per_second(predictor, image, threads, 0.5))
        base = np.median(figures[1])
        line = ", ".join(
            "%d thread(s) %.0f (x%.2f)" % (t, np.median(f), np.median(f) / base)
            for t, f in figures.items())
        print("batch %2d: %s; %.1f us per run on 1 thread"
              % (batch, line, 1e6 / base))


if __name__ == "__main__":
    main()
