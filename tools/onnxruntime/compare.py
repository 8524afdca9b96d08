"""Times scopeflow and ONNX Runtime on the same nets, alternating, in one run.

For each thread count and round, each net runs once in ONNX Runtime
(bench.js, through onnxruntime-node) and once in scopeflow (net_benchmark),
one right after the other, so that both see the same load on a noisy
machine. Prints, per net, the median over the rounds of each one's time,
their ratio, in how many rounds scopeflow was the faster, and the lowest
and highest ratio of a round's pair of runs.

ONNX Runtime's figures come through Node.js, whose binding adds its own
cost to each run (a few microseconds). So each of its times is also given
less the whole time of its one-`Add` net's run, which holds that binding
cost and ONNX Runtime's own per-run cost: a bound that favours ONNX
Runtime. Scopeflow is called faster on a net only where it beats that.

Usage: python3 compare.py NET_BENCHMARK MODEL_DIR NODE_PATH [ROUNDS]
"""

import json
import os
import statistics
import subprocess
import sys

# ONNX Runtime's case (bench.js), net_benchmark's benchmark, what is shown.
NETS = [
    ("add_chain_1000", "BM_AddChain/1000", "chain of 1000 add, per op"),
    ("mlp_1", "BM_Mlp/1", "MLP 784-1024-1024-10, batch 1"),
    ("mlp_64", "BM_Mlp/64", "MLP, batch 64"),
    ("cnn_1", "BM_Cnn/batch:1/layout:3", "CNN, batch 1"),
    ("cnn_16", "BM_Cnn/batch:16/layout:3", "CNN, batch 16"),
]
# The one-Add net: ONNX Runtime's cost of a run that does nothing.
EMPTY_RUN = "add_chain_1"


def onnxruntime_ms(model_dir, node_path, threads, cases):
    bench_js = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "bench.js")
    env = dict(os.environ, NODE_PATH=node_path)
    out = subprocess.run(["node", bench_js, model_dir, str(threads), *cases],
                         env=env, check=True, capture_output=True, text=True)
    results = [json.loads(line) for line in out.stdout.splitlines()]
    return {r["name"]: r["median"] for r in results}


def scopeflow_ms(net_benchmark, threads, benchmark):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run(
        [net_benchmark, f"--benchmark_filter=^{benchmark}(/real_time)?$",
         "--benchmark_min_time=1", "--benchmark_format=json"],
        env=env, check=True, capture_output=True, text=True)
    runs = json.loads(out.stdout)["benchmarks"]
    if len(runs) != 1:
        sys.exit(f"compare: {benchmark} matched {len(runs)} benchmarks")
    unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0}[runs[0]["time_unit"]]
    return runs[0]["real_time"] * unit


def main():
    net_benchmark, model_dir, node_path = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    for threads in (1, 2):
        times = {name: ([], [], []) for name, _, _ in NETS}
        for _ in range(rounds):
            for case, benchmark, _ in NETS:
                ort = onnxruntime_ms(model_dir, node_path, threads,
                                     [EMPTY_RUN, case])
                ours = scopeflow_ms(net_benchmark, threads, benchmark)
                raw, bound = ort[case], ort[case] - ort[EMPTY_RUN]
                if case == "add_chain_1000":
                    # Per op: the chain less the one add, over the 999
                    # others (the run's own cost cancels out).
                    raw, bound = bound / 999, bound / 999
                    ours /= 1000
                times[case][0].append(raw)
                times[case][1].append(bound)
                times[case][2].append(ours)
        print(f"\n{threads} thread(s), medians of {rounds} rounds "
              "(ms; the add chain in us per op)")
        print(f"{'net':32} {'ONNX Runtime':>13} {'less a run':>11} "
              f"{'scopeflow':>10} {'ratio':>6} {'faster':>7} "
              f"{'per round':>11}")
        for case, _, title in NETS:
            raw, bound, ours = times[case]
            scale = 1000 if case == "add_chain_1000" else 1
            wins = sum(o < b for o, b in zip(ours, bound))
            ratio = statistics.median(bound) / statistics.median(ours)
            pairs = [b / o for o, b in zip(ours, bound)]
            print(f"{title:32} {statistics.median(raw) * scale:13.4f} "
                  f"{statistics.median(bound) * scale:11.4f} "
                  f"{statistics.median(ours) * scale:10.4f} "
                  f"{ratio:5.2f}x {wins:3d}/{rounds} "
                  f"{min(pairs):5.2f}-{max(pairs):4.2f}x")


if __name__ == "__main__":
    main()
