"""Times scopeflow and ONNX Runtime on any ONNX models, alternating.

Each model is imported once (`scopeflow import-onnx`) and fed the same
inputs in both (random normal floats, seeded; zeros for integer inputs).
For each round, each model and each thread count, ONNX Runtime runs it
(bench.js --model: graph optimisation "all", intra-op threads set) and then
scopeflow (`scopeflow run --repeat`, OMP_NUM_THREADS set), each in its own
process, one right after the other so that both see the same load (which
goes first alternates from round to round). Both
time each run on its own after one warm-up run, excluding start-up (loading,
session creation or preparation), and report the median per run; a round
runs each for about --seconds. Per model and thread count this prints the
median over rounds of each one's median, their ratio (ONNX Runtime time /
scopeflow time: above 1 means scopeflow is faster), in how many rounds
scopeflow was the faster, the lowest and highest ratio of a round's pair,
and the peak resident memory of each process (the largest over rounds;
ONNX Runtime's includes Node.js, whose own share is printed once).

Models are given as PATH[:DIM=N,...]: N for each dynamic dimension the
model names DIM (dim_param), e.g. encoder.onnx:batch=8. Dynamic dimensions
left unset are 1.

Usage: python3 compare_models.py --scopeflow BIN --node-path DIR
    [--rounds 5] [--threads 1,2] [--seconds 2] [--markdown] MODEL ...
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import mapping  # Its successor is not in onnx 1.12.

BENCH_JS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "bench.js")


def run_measured(command, env=None):
    """Runs COMMAND; returns (exit status, output, peak resident MiB).

    The peak comes from GNU time, which forks the command from its own
    small process: a child forked from this Python would count this
    process's memory as its own (Linux keeps the high-water mark across
    exec).
    """
    with tempfile.NamedTemporaryFile("r") as peak, \
            tempfile.TemporaryFile() as out:
        code = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", peak.name, *command],
            stdout=out, stderr=subprocess.STDOUT, env=env,
            check=False).returncode
        out.seek(0)
        text = out.read().decode(errors="replace")
        kib = peak.read().strip().splitlines()
    rss = float(kib[-1]) / 1024 if kib and kib[-1].isdigit() else float("nan")
    return code, text, rss


class Model:
    def __init__(self, spec, work, index, base_dir):
        path, _, dims = spec.partition(":")
        self.path = os.path.abspath(os.path.join(base_dir, path))
        base = os.path.splitext(os.path.basename(path))[0]
        parent = os.path.basename(os.path.dirname(self.path))
        self.label = f"{parent} ({base})" if base.startswith("opset") else base
        self.sizes = dict(d.split("=") for d in dims.split(",") if d)
        if self.sizes:
            self.label += " " + ",".join(f"{k}={v}"
                                         for k, v in self.sizes.items())
        self.dir = os.path.join(work, str(index))
        os.makedirs(self.dir)
        self.feeds = []  # (ONNX name, numpy array)
        self.import_error = None

    def make_feeds(self):
        graph = onnx.load(self.path, load_external_data=False).graph
        initializers = {t.name for t in graph.initializer}
        rng = np.random.default_rng(0)
        for value in graph.input:
            if value.name in initializers:
                continue
            tensor_type = value.type.tensor_type
            dtype = mapping.TENSOR_TYPE_TO_NP_TYPE[tensor_type.elem_type]
            dims = []
            for dim in tensor_type.shape.dim:
                if dim.HasField("dim_value"):
                    dims.append(dim.dim_value)
                else:
                    dims.append(int(self.sizes.get(dim.dim_param, 1)))
            if np.issubdtype(dtype, np.floating):
                array = rng.standard_normal(dims).astype(dtype)
            else:
                array = np.zeros(dims, dtype)
            self.feeds.append((value.name, array))

    def prepare(self, scopeflow):
        self.make_feeds()
        self.net = os.path.join(self.dir, "net.pb")
        self.params = os.path.join(self.dir, "params")
        code, text, _ = run_measured([scopeflow, "import-onnx", self.path,
                                      "-o", self.net, "--params", self.params])
        if code != 0:
            lines = [l for l in text.splitlines() if l.strip()]
            self.import_error = lines[0][:200] if lines else f"exit {code}"
            return
        names = next((l[len("inputs:"):] for l in text.splitlines()
                      if l.startswith("inputs:")), "")
        ours = [n.strip() for n in names.split(",") if n.strip()]
        specs, feed_flags = [], []
        for i, (name, array) in enumerate(self.feeds):
            raw = os.path.join(self.dir, f"in{i}.bin")
            npy = os.path.join(self.dir, f"in{i}.npy")
            array.tofile(raw)
            np.save(npy, array)
            specs.append({"name": name, "type": str(array.dtype),
                          "dims": list(array.shape), "file": raw})
            feed_flags.append(f"{ours[i] if i < len(ours) else name}={npy}")
        self.feeds_json = os.path.join(self.dir, "feeds.json")
        with open(self.feeds_json, "w") as f:
            json.dump(specs, f)
        self.feed_flag = ",".join(feed_flags)


def time_onnxruntime(model, node_path, threads, seconds):
    env = dict(os.environ, NODE_PATH=node_path)
    code, text, rss = run_measured(
        ["node", BENCH_JS, "--model", model.path, str(threads),
         model.feeds_json, str(seconds)], env)
    lines = [l for l in text.splitlines() if l.startswith("{")]
    if code != 0 or not lines:
        sys.exit(f"compare: ONNX Runtime failed on {model.path}:\n{text}")
    return json.loads(lines[-1])["median"], rss


def time_scopeflow(model, scopeflow, threads, repeat):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    code, text, rss = run_measured(
        [scopeflow, "run", model.net, "--params", model.params,
         "--feed", model.feed_flag, "--repeat", str(repeat)], env)
    found = re.search(r"latency over \d+ run\(s\): median ([0-9.]+) ms", text)
    if code != 0 or not found:
        sys.exit(f"compare: scopeflow failed on {model.path}:\n{text}")
    return float(found.group(1)), rss


def repeats(seconds, ms_per_run):
    return int(min(100000, max(5, seconds * 1e3 / ms_per_run)))


def node_baseline(node_path):
    env = dict(os.environ, NODE_PATH=node_path)
    _, _, rss = run_measured(["node", "-e", "require('onnxruntime-node')"],
                             env)
    return rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scopeflow", required=True)
    parser.add_argument("--node-path", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="time each one runs a model per round")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--base-dir", default=".",
                        help="where relative model paths start")
    parser.add_argument("models", nargs="+", metavar="MODEL[:DIM=N,...]")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory() as work:
        models = [Model(spec, work, i, args.base_dir) for i, spec in enumerate(args.models)]
        for model in models:
            model.prepare(args.scopeflow)
            if model.import_error:
                print(f"{model.label}: scopeflow cannot import it: "
                      f"{model.import_error}", file=sys.stderr)
        models = [m for m in models if not m.import_error]
        times = {(m.label, t): ([], [], [], []) for m in models
                 for t in threads}
        for round_index in range(args.rounds):
            for model in models:
                for t in threads:
                    row = times[(model.label, t)]
                    # Which goes first alternates between rounds; the first
                    # round's ONNX Runtime time sets how often scopeflow runs.
                    ours_first = round_index % 2 == 1
                    if ours_first:
                        ours, our_rss = time_scopeflow(
                            model, args.scopeflow, t,
                            repeats(args.seconds, row[0][0]))
                    ort, ort_rss = time_onnxruntime(model, args.node_path, t,
                                                    args.seconds)
                    if not ours_first:
                        ours, our_rss = time_scopeflow(
                            model, args.scopeflow, t,
                            repeats(args.seconds, row[0][0] if row[0]
                                    else ort))
                    row[0].append(ort)
                    row[1].append(ours)
                    row[2].append(ort_rss)
                    row[3].append(our_rss)
            print(f"round {round_index + 1} of {args.rounds} done",
                  file=sys.stderr, flush=True)
        baseline = node_baseline(args.node_path)
    rows = []
    for model in models:
        cells, ratios = [model.label], []
        for t in threads:
            ort, ours, ort_rss, our_rss = times[(model.label, t)]
            ratio = statistics.median(ort) / statistics.median(ours)
            pairs = [o / s for o, s in zip(ort, ours)]
            wins = sum(s < o for o, s in zip(ort, ours))
            ratios.append(ratio)
            cells += [f"{statistics.median(ort):.3f}",
                      f"{statistics.median(ours):.3f}", f"{ratio:.2f}",
                      f"{wins}/{len(ort)}",
                      f"{min(pairs):.2f}-{max(pairs):.2f}"]
        peak_ort = max(max(times[(model.label, t)][2]) for t in threads)
        peak_ours = max(max(times[(model.label, t)][3]) for t in threads)
        cells += [f"{peak_ort:.0f}", f"{peak_ours:.0f}"]
        rows.append((min(ratios), cells))
    rows.sort(key=lambda r: r[0])
    header = ["model"]
    for t in threads:
        header += [f"ORT {t}t ms", f"scopeflow {t}t ms", f"ratio {t}t",
                   f"faster {t}t", f"per round {t}t"]
    header += ["ORT peak MiB", "scopeflow peak MiB"]
    print(f"\nmedians of {args.rounds} interleaved rounds; ratio = ONNX "
          "Runtime time / scopeflow time; peak resident memory per process "
          f"(Node.js with onnxruntime-node loaded alone: {baseline:.0f} MiB)")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("| --- " + "| ---: " * (len(header) - 1) + "|")
        for _, cells in rows:
            print("| " + " | ".join(cells) + " |")
    else:
        widths = [max(len(h), *(len(c[1][i]) for c in rows))
                  for i, h in enumerate(header)]
        print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
        for _, cells in rows:
            print("  ".join(c.rjust(w) for c, w in zip(cells, widths)))


if __name__ == "__main__":
    main()
