"""Peak resident memory of `scopeflow run` with the arena plan on and off.

For each ONNX model (MODEL.onnx[:dim=N,...][,free], free dimensions
default to 1): fixes its free input dimensions so that Prepare knows every
shape (or, with `free`, leaves them free, so that runs plan their arena for
the fed shapes), imports it, prints `scopeflow plan`'s arena and peak lines
(with `free`: of the net with its batch set and the parameters' values),
then runs it (--repeat 5) with and without --noplan_memory, interleaved
over ROUNDS, under GNU time, and prints a table row of the peaks in MiB
(min-max).
Usage: python3 arena_peak.py SCOPEFLOW WORK_DIR ROUNDS MODEL...
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import mapping


def run(command):
    with tempfile.NamedTemporaryFile("r") as peak:
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", peak.name, *command],
            capture_output=True, text=True)
        if done.returncode:
            sys.exit(done.stdout + done.stderr)
        return done.stdout, float(peak.read().strip().splitlines()[-1]) / 1024


def main():
    scopeflow, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for index, spec in enumerate(sys.argv[4:]):
        path, _, dims = spec.partition(":")
        sizes = dict(d.split("=") for d in dims.split(",") if "=" in d)
        free = "free" in dims.split(",")
        model_dir = os.path.join(work, str(index))
        os.makedirs(model_dir, exist_ok=True)
        model = onnx.load(path)
        initializers = {t.name for t in model.graph.initializer}
        rng = np.random.default_rng(0)
        arrays = []
        for value in model.graph.input:
            if value.name in initializers:
                continue
            shape = []
            for dim in value.type.tensor_type.shape.dim:
                if dim.HasField("dim_value"):
                    shape.append(dim.dim_value)
                    continue
                size = int(sizes.get(dim.dim_param, 1))
                shape.append(size)
                if not free:
                    dim.dim_value = size
            dtype = mapping.TENSOR_TYPE_TO_NP_TYPE[
                value.type.tensor_type.elem_type]
            arrays.append(rng.standard_normal(shape).astype(dtype)
                          if np.issubdtype(dtype, np.floating)
                          else np.zeros(shape, dtype))
        fixed = os.path.join(model_dir, "fixed.onnx")
        onnx.save(model, fixed)
        net = os.path.join(model_dir, "net.pb")
        params = os.path.join(model_dir, "params")
        out, _ = run([scopeflow, "import-onnx", fixed, "-o", net,
                      "--params", params])
        os.remove(fixed)
        names = [n.strip() for line in out.splitlines()
                 if line.startswith("inputs:")
                 for n in line[len("inputs:"):].split(",") if n.strip()]
        feeds = []
        for i, array in enumerate(arrays):
            npy = os.path.join(model_dir, f"in{i}.npy")
            np.save(npy, array)
            feeds.append(f"{names[i]}={npy}")
        plan_command = [scopeflow, "plan", net]
        if free:
            plan_command += [f"--batch={sizes.get('batch', 1)}",
                             "--params", params]
        plan = subprocess.run(plan_command, capture_output=True, text=True)
        print(spec, [line for line in (plan.stdout + plan.stderr).splitlines()
                     if line.startswith(("arena", "peak", "scopeflow:"))],
              flush=True)
        command = [scopeflow, "run", net, "--params", params,
                   "--feed", ",".join(feeds), "--repeat", "5"]
        on, off = [], []
        for _ in range(rounds):
            on.append(run(command)[1])
            off.append(run(command + ["--noplan_memory"])[1])
        print(f"| {spec} | {min(off):.0f}-{max(off):.0f} | "
              f"{min(on):.0f}-{max(on):.0f} |", flush=True)


if __name__ == "__main__":
    main()
