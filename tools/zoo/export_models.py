"""Exports the model zoo: real architectures as torch exports them to ONNX.

Each model is built with random weights (seeded, so every run writes the
same models), put in eval mode and exported with a dynamic batch dimension
at each of the opsets asked for. Beside the models go inputs at two batch
sizes and torch's own outputs for them, as .npy files, which run_zoo.py
compares scopeflow's outputs with.

Layout of OUT_DIR (one folder per model):
  MODEL/opsetN.onnx           the export at opset N (absent if it failed)
  MODEL/CASE.in.NAME.npy      input NAME in case CASE (b1, b3: batch 1, 3)
  MODEL/CASE.out.NAME.npy     torch's output NAME in case CASE
  MODEL/manifest.json         inputs, outputs, batches, each opset's result

Runs with Debian's python3-torch 1.13 / python3-torchvision 0.14 / python3-onnx:
  /usr/bin/python3 tools/zoo/export_models.py [OUT_DIR] [--models a,b]
      [--opsets 9,11,13,17] [--small] [--force]
"""

import argparse
import json
import os
import sys
import traceback
import warnings

import numpy as np
import torch
import torchvision

import zoo_models

DEFAULT_OUT = os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
    "scopeflow-zoo")
DEFAULT_OPSETS = [9, 11, 13, 17]
# Bumped when what a model's files hold changes, so cached exports are redone.
FORMAT_VERSION = 2


def first_line(error):
    for line in str(error).splitlines():
        if line.strip():
            return line.strip()[:300]
    return type(error).__name__


def export_one(spec, module, example, path, opset):
    """Exports MODULE at OPSET to PATH and checks it; returns an error or None."""
    dynamic_axes = {name: axes for name, axes in spec.dynamic_axes.items()}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, example, path, opset_version=opset,
                              input_names=spec.input_names,
                              output_names=spec.output_names,
                              dynamic_axes=dynamic_axes,
                              do_constant_folding=True)
        import onnx  # pylint: disable=import-outside-toplevel
        onnx.checker.check_model(onnx.load(path))
    except Exception as error:  # pylint: disable=broad-except
        if os.path.exists(path):
            os.remove(path)
        return f"{type(error).__name__}: {first_line(error)}"
    return None


def check_informative(spec, name, output):
    """Refuses an output that the input barely moves: it would test nothing.

    Items of a batch (different inputs) must give outputs differing by at
    least 1e-3 of the output's size, and that size must not have vanished.
    """
    if not np.issubdtype(output.dtype, np.floating) or output.size == 0:
        return
    size = float(np.abs(output).max())
    if not size > 1e-6:
        raise RuntimeError(f"{spec.name}: output {name} vanished "
                           f"(largest magnitude {size:g})")
    axes = spec.dynamic_axes.get(name, {})
    batch_axis = next((a for a, n in axes.items() if n == "batch"), None)
    if batch_axis is None or output.shape[batch_axis] < 2:
        return
    items = np.moveaxis(output, batch_axis, 0).astype(np.float64)
    spread = float(np.abs(items - items[:1]).max()) / size
    if spread < 1e-3:
        raise RuntimeError(f"{spec.name}: output {name} barely depends on "
                           f"the input (items differ by {spread:.1e} of its "
                           "size)")


def save_references(spec, module, folder):
    for label, n in spec.cases:
        inputs = spec.make_inputs(n)
        with torch.no_grad():
            outputs = module(*inputs)
        outputs = spec.flatten_outputs(outputs)
        if len(outputs) != len(spec.output_names):
            raise RuntimeError(f"{spec.name}: {len(outputs)} outputs, "
                               f"{len(spec.output_names)} names")
        for name, tensor in zip(spec.input_names, spec.flatten_inputs(inputs)):
            np.save(os.path.join(folder, f"{label}.in.{name}.npy"),
                    tensor.numpy())
        for name, tensor in zip(spec.output_names, outputs):
            array = tensor.detach().numpy()
            check_informative(spec, name, array)
            np.save(os.path.join(folder, f"{label}.out.{name}.npy"), array)


def export_model(spec, out_dir, opsets, force):
    folder = os.path.join(out_dir, spec.name)
    manifest_path = os.path.join(folder, "manifest.json")
    manifest = None
    if not force and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
        if manifest.get("format") != FORMAT_VERSION:
            manifest = None
    if manifest is None:
        os.makedirs(folder, exist_ok=True)
        manifest = {
            "format": FORMAT_VERSION,
            "name": spec.name,
            "title": spec.title,
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "inputs": spec.input_names,
            "outputs": spec.output_names,
            "cases": [label for label, _ in spec.cases],
            "rtol": spec.rtol,
            "rtol_reason": spec.rtol_reason,
            "opsets": {},
        }
    module = None
    for opset in opsets:
        key = str(opset)
        path = os.path.join(folder, f"opset{opset}.onnx")
        done = manifest["opsets"].get(key)
        if done is not None and (done["error"] or os.path.exists(path)):
            continue
        if module is None:
            torch.manual_seed(0)
            module = spec.build_trained()
            if not manifest.get("references"):
                save_references(spec, module, folder)
                manifest["references"] = True
        # Traced at the larger case, so that nothing of size 1 is taken for
        # a broadcast and fixed.
        example = spec.make_inputs(spec.cases[-1][1])
        error = export_one(spec, module, example, path, opset)
        manifest["opsets"][key] = {"error": error}
        print(f"{spec.name}@{opset}: {'exported' if error is None else error}",
              flush=True)
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=1)
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default=DEFAULT_OUT)
    parser.add_argument("--models", default="",
                        help="comma-separated model names (default: all)")
    parser.add_argument("--opsets", default=",".join(map(str, DEFAULT_OPSETS)))
    parser.add_argument("--small", action="store_true",
                        help="only the CI-sized subset")
    parser.add_argument("--force", action="store_true",
                        help="export again even where cached")
    parser.add_argument("--list", action="store_true",
                        help="print the model names and exit")
    args = parser.parse_args()
    specs = zoo_models.select(args.models, args.small)
    if args.list:
        for spec in specs:
            print(f"{spec.name:22} {'small' if spec.small else '':6}"
                  f"{spec.title}")
        return
    opsets = [int(o) for o in args.opsets.split(",") if o]
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    os.makedirs(args.out_dir, exist_ok=True)
    failed_builds = []
    for spec in specs:
        try:
            export_model(spec, args.out_dir, opsets, args.force)
        except Exception:  # pylint: disable=broad-except
            traceback.print_exc()
            failed_builds.append(spec.name)
    if failed_builds:
        sys.exit(f"export_models: could not build {', '.join(failed_builds)}")


if __name__ == "__main__":
    main()
