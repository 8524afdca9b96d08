#!/usr/bin/env python3
"""ONNX Runtime against scopeflow under OpenMP's wait policies, interleaved.

For each round and model: ONNX Runtime, then scopeflow with OpenMP's
default policy, GOMP_SPINCOUNT=10000, GOMP_SPINCOUNT=1000 and
OMP_WAIT_POLICY=passive (libgomp reads them when it loads, so each is its
own process), all at the same thread count. Prints the medians and each
one's ratio to ONNX Runtime (above 1: scopeflow faster). Meant for loaded
and idle machines alike: the load average is printed after each round.

  bazel build --config=cpu_only //tools:scopeflow
  /usr/bin/python3 tools/onnxruntime/wait_policy.py --rounds 3 MODEL.onnx ...

ONNX Runtime comes from the npm cache that compare.sh fills.
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_models  # noqa: E402

POLICIES = {
    "default": {},
    "GOMP_SPINCOUNT=10000": {"GOMP_SPINCOUNT": "10000"},
    "GOMP_SPINCOUNT=1000": {"GOMP_SPINCOUNT": "1000"},
    "passive": {"OMP_WAIT_POLICY": "passive"},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scopeflow", default="bazel-bin/tools/scopeflow")
    parser.add_argument("--node-path", default=os.path.expanduser(
        "~/.cache/scopeflow-onnxruntime/node_modules"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("models", nargs="+", metavar="MODEL[:DIM=N,...]")
    args = parser.parse_args()
    times = {}
    with tempfile.TemporaryDirectory() as work:
        models = [compare_models.Model(spec, work, i, ".")
                  for i, spec in enumerate(args.models)]
        for model in models:
            model.prepare(args.scopeflow)
            if model.import_error:
                sys.exit(f"{model.label}: {model.import_error}")
        for round_index in range(args.rounds):
            for model in models:
                ort, _ = compare_models.time_onnxruntime(
                    model, args.node_path, args.threads, args.seconds)
                times.setdefault((model.label, "ONNX Runtime"), []).append(ort)
                for name, env in POLICIES.items():
                    saved = dict(os.environ)
                    os.environ.update(env)
                    try:
                        ours, _ = compare_models.time_scopeflow(
                            model, args.scopeflow, args.threads,
                            compare_models.repeats(args.seconds, ort))
                    finally:
                        os.environ.clear()
                        os.environ.update(saved)
                    times.setdefault((model.label, name), []).append(ours)
            print(f"round {round_index + 1} of {args.rounds}, load average "
                  f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    print(f"| {args.threads} threads | ONNX Runtime | " +
          " | ".join(POLICIES) + " |")
    print("| --- | ---: |" + " ---: |" * len(POLICIES))
    for model in models:
        ort = statistics.median(times[(model.label, "ONNX Runtime")])
        cells = [f"{ort:.1f} ms"]
        for name in POLICIES:
            ours = statistics.median(times[(model.label, name)])
            cells.append(f"{ours:.1f} ms ({ort / ours:.2f})")
        print(f"| {model.label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
