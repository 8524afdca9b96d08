"""Imports and runs the zoo's exports in scopeflow; compares with torch.

For each model and opset that export_models.py wrote: `scopeflow
import-onnx`, then `scopeflow run` on each case's inputs (two batch sizes),
and the outputs compared with torch's. An output matches when its shape and
dtype are torch's and

    max |scopeflow - torch| / max |torch|  <=  rtol

(1e-4 unless the model says why it needs more; the error is taken relative
to the output's largest magnitude, as elements near zero have no useful
relative error of their own). A detector's outputs are rows ranked by a
score (the catalog's `ranked_by`): rows whose torch scores lie within
rtol of each other may come in either order (the order of near-equal
scores is rounding's), so within each such group our rows are first
matched to torch's, each to the closest. Prints a table; --write-docs puts it in
docs/MODELS.md between its markers, replacing the rows of the models run.

tools/zoo/expected.txt lists, one `model@opset reason` a line, what is known
not to pass yet. The exit status is 1 when a model not listed there fails
(a regression) or one listed passes (update the file), 0 otherwise.

Usage: python3 tools/zoo/run_zoo.py [--zoo DIR] [--scopeflow BIN]
    [--models a,b] [--opsets 9,11] [--small] [--write-docs]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import zoo_catalog  # noqa: E402  pylint: disable=wrong-import-position

DEFAULT_ZOO = os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
    "scopeflow-zoo")
BEGIN = "<!-- zoo results begin (tools/zoo/run_zoo.py --write-docs) -->"
END = "<!-- zoo results end -->"
COMMAND_TIMEOUT_S = 600


def first_error_line(text):
    """What went wrong, in a line: scopeflow's error, shortened.

    The importer's error is a summary line ("cannot import ...: 89 of 178
    node(s) cannot be converted:") and one line per problem; this keeps the
    count, the op types of the nodes concerned and the first problem, less
    the node's long name.
    """
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for i, line in enumerate(lines):
        if line.startswith("scopeflow:"):
            lines = lines[i:]
            break
    if not lines:
        return "(no output)"
    summary = re.sub(r"^scopeflow: (\S+: )?", "", lines[0])
    if len(lines) > 1 and summary.endswith(":"):
        count = re.search(r"(\d+ of \d+ node\(s\)) cannot be converted",
                          summary)
        ops = []
        for line in lines[1:]:
            found = re.match(r'node \d+ "[^"]*" \((\w+), opset', line)
            if found and found.group(1) not in ops:
                ops.append(found.group(1))
        first = re.sub(r'^(node \d+) "[^"]*"', r"\1", lines[1])
        if count and not count.group(1).startswith("0 "):
            summary = (f"{count.group(1)} fail (ops {', '.join(ops)}); "
                       f"first: {first}")
        else:
            summary = first
    return summary[:300]


def run(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True,
                             timeout=COMMAND_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {COMMAND_TIMEOUT_S} s"
    text = out.stdout + out.stderr
    if out.returncode < 0:
        text += f"\nkilled by signal {-out.returncode}"
    return out.returncode, text


def read_names(import_output, label):
    for line in import_output.splitlines():
        if line.startswith(label + ":"):
            return [n.strip() for n in line[len(label) + 1:].split(",")
                    if n.strip()]
    return []


def align_near_ties(ours, references, ranked_by, rtol):
    """Reorders the rows of `ours` (output name -> array) within each group
    of rows whose reference scores `references[ranked_by]` lie within rtol
    (of the largest score) of the group's first, so that each reference row
    faces the closest of ours; returns the reordered arrays. Arrays that
    cannot be aligned (missing, other shapes) are returned as they are."""
    scores = references[ranked_by].astype(np.float64)
    rows = scores.shape[0] if scores.ndim else 0
    if any(name not in ours or ours[name].shape != ref.shape or
           ref.ndim == 0 or ref.shape[0] != rows
           for name, ref in references.items()):
        return ours
    scales = {name: max(np.abs(ref.astype(np.float64)).max(initial=0.0),
                        np.finfo(np.float32).tiny)
              for name, ref in references.items()}
    tolerance = rtol * scales[ranked_by]
    order = list(range(rows))
    start = 0
    while start < rows:
        end = start + 1
        while end < rows and abs(scores[end] - scores[start]) <= tolerance:
            end += 1
        free = list(range(start, end))
        for row in range(start, end):
            def distance(candidate):
                return max(float(np.abs(
                    ours[name][candidate].astype(np.float64) -
                    ref[row].astype(np.float64)).max(initial=0.0)) /
                    scales[name] for name, ref in references.items())
            best = min(free, key=distance)
            free.remove(best)
            order[row] = best
        start = end
    return {name: array[order] if name in references else array
            for name, array in ours.items()}


def compare(ours, reference):
    if ours is None:
        return None, "no output written"
    if ours.shape != reference.shape:
        return None, f"shape {list(ours.shape)}, torch {list(reference.shape)}"
    if ours.dtype != reference.dtype:
        return None, f"dtype {ours.dtype}, torch {reference.dtype}"
    if ours.size == 0:
        return 0.0, None
    ours64 = ours.astype(np.float64)
    ref64 = reference.astype(np.float64)
    if np.isnan(ours64).any() != np.isnan(ref64).any():
        return None, "NaN where torch has none" if np.isnan(ours64).any() \
            else "torch has NaN, scopeflow none"
    scale = max(np.abs(ref64).max(), np.finfo(np.float32).tiny)
    return float(np.abs(ours64 - ref64).max() / scale), None


class Result:
    def __init__(self, model, opset):
        self.model = model
        self.opset = opset
        self.export_error = None
        self.missing = False  # Not exported (export_models.py not run)
        self.import_error = None
        self.cases = {}  # label -> "match" or what went wrong
        self.max_rel = None

    @property
    def passed(self):
        return (not self.missing and self.export_error is None
                and self.import_error is None
                and bool(self.cases)
                and all(v == "match" for v in self.cases.values()))


def run_model(scopeflow, folder, manifest, opset, rtol, work,
              ranked_by=None):
    result = Result(manifest["name"], opset)
    entry = manifest["opsets"].get(str(opset))
    if entry is None:
        result.missing = True
        return result
    if entry["error"]:
        result.export_error = entry["error"]
        return result
    model = os.path.join(folder, f"opset{opset}.onnx")
    net = os.path.join(work, "net.pb")
    params = os.path.join(work, "params")
    code, text = run([scopeflow, "import-onnx", model, "-o", net,
                      "--params", params])
    if code != 0:
        result.import_error = first_error_line(text)
        return result
    inputs = read_names(text, "inputs")
    outputs = read_names(text, "outputs")
    if len(inputs) != len(manifest["inputs"]) or \
            len(outputs) != len(manifest["outputs"]):
        result.import_error = (f"imported inputs {inputs} / outputs {outputs}"
                               f", torch's {manifest['inputs']} / "
                               f"{manifest['outputs']}")
        return result
    for label in manifest["cases"]:
        out_dir = os.path.join(work, label)
        os.makedirs(out_dir, exist_ok=True)
        feeds = ",".join(
            f"{ours}={os.path.join(folder, f'{label}.in.{theirs}.npy')}"
            for ours, theirs in zip(inputs, manifest["inputs"]))
        code, text = run([scopeflow, "run", net, "--params", params,
                          "--feed", feeds, "--fetch", ",".join(outputs),
                          "--output_dir", out_dir])
        if code != 0:
            result.cases[label] = "run error: " + first_error_line(text)
            continue
        worst, problem = 0.0, None
        references, written = {}, {}
        for ours, theirs in zip(outputs, manifest["outputs"]):
            references[theirs] = np.load(
                os.path.join(folder, f"{label}.out.{theirs}.npy"))
            path = os.path.join(out_dir, f"{ours}.npy")
            if os.path.exists(path):
                written[theirs] = np.load(path)
        if ranked_by is not None:
            written = align_near_ties(written, references, ranked_by, rtol)
        for theirs, reference in references.items():
            rel, problem = compare(written.get(theirs), reference)
            if problem:
                problem = f"{theirs}: {problem}"
                break
            worst = max(worst, rel)
        result.max_rel = worst if result.max_rel is None else max(
            result.max_rel, worst)
        if problem:
            result.cases[label] = problem
        elif worst <= rtol:
            result.cases[label] = "match"
        else:
            result.cases[label] = f"differs (rel {worst:.1e} > {rtol:g})"
    return result


def read_expected(path):
    expected = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, _, reason = line.partition(" ")
            if "@" not in key or not reason.strip():
                sys.exit(f"{path}:{number}: expected 'model@opset reason'")
            expected[key] = reason.strip()
    return expected


def md(text):
    return str(text).replace("|", "\\|")


def table_rows(results):
    rows = []
    for r in results:
        cases = list(r.cases.items())
        if r.missing:
            status = "not exported: run export_models.py"
            cells = ["-", "-", "-", "-"]
        elif r.export_error:
            status = f"export fails: {r.export_error.split(' Please ')[0]}"
            cells = ["-", "-", "-", "-"]
        elif r.import_error:
            cells = [f"error: {r.import_error}", "-", "-", "-"]
            status = ""
        else:
            cells = ["ok"] + [v for _, v in cases][:2]
            while len(cells) < 3:
                cells.append("-")
            cells.append("-" if r.max_rel is None else f"{r.max_rel:.1e}")
            status = ""
        case_labels = "/".join(label for label, _ in cases)
        rows.append([r.model, str(r.opset)] + cells +
                    ["pass" if r.passed else (status or "fail"), case_labels])
    return rows


HEADER = ["model", "opset", "import", "case 1", "case 2", "max rel error",
          "result", "cases"]


def print_table(rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(HEADER)]
    widths = [min(w, 60) for w in widths]
    fmt = "  ".join(f"{{:{w}.{w}}}" for w in widths)
    print(fmt.format(*HEADER))
    for row in rows:
        print(fmt.format(*row))


def write_docs(path, rows):
    with open(path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{path}: no zoo results markers")
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    merged = {}
    for line in old.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == len(HEADER) and cells[1].isdigit():
            merged[(cells[0], int(cells[1]))] = cells
    for row in rows:
        merged[(row[0], int(row[1]))] = [md(c) for c in row]
    order = {name: i for i, name in enumerate(zoo_catalog.CATALOG)}
    keys = sorted(merged, key=lambda k: (order.get(k[0], len(order)), k[1]))
    lines = ["| " + " | ".join(HEADER) + " |",
             "| " + " | ".join("---" for _ in HEADER) + " |"]
    lines += ["| " + " | ".join(merged[k]) + " |" for k in keys]
    with open(path, "w") as f:
        f.write(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", default=DEFAULT_ZOO)
    parser.add_argument("--scopeflow",
                        default=os.path.join(ROOT, "bazel-bin/tools/scopeflow"))
    parser.add_argument("--models", default="")
    parser.add_argument("--opsets", default="9,11,13,17")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--expected", default=os.path.join(HERE,
                                                           "expected.txt"))
    parser.add_argument("--write-docs", action="store_true",
                        help="put the table in docs/MODELS.md")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    names = zoo_catalog.select(args.models, args.small)
    opsets = [int(o) for o in args.opsets.split(",") if o]
    expected = read_expected(args.expected)
    results = []
    start = time.monotonic()
    for name in names:
        folder = os.path.join(args.zoo, name)
        manifest_path = os.path.join(folder, "manifest.json")
        if not os.path.exists(manifest_path):
            sys.exit(f"run_zoo: {manifest_path} missing: run "
                     f"tools/zoo/export_models.py {args.zoo} first")
        with open(manifest_path) as f:
            manifest = json.load(f)
        for opset in opsets:
            with tempfile.TemporaryDirectory() as work:
                entry = zoo_catalog.CATALOG[name]
                result = run_model(args.scopeflow, folder, manifest, opset,
                                   entry.rtol, work, entry.ranked_by)
            results.append(result)
            print(f"{name}@{opset}: "
                  f"{'pass' if result.passed else 'FAIL'} "
                  f"({time.monotonic() - start:.0f} s)", flush=True)
    rows = table_rows(results)
    print()
    print_table(rows)
    regressions, newly_passing = [], []
    missing = [f"{r.model}@{r.opset}" for r in results if r.missing]
    for r in results:
        if r.export_error or r.missing:
            continue
        key = f"{r.model}@{r.opset}"
        if r.passed and key in expected:
            newly_passing.append(key)
        elif not r.passed and key not in expected:
            regressions.append(key)
    exported = [r for r in results if not r.export_error and not r.missing]
    print(f"\n{sum(r.passed for r in exported)} of {len(exported)} exported "
          f"model@opset pass; {len(results) - len(exported)} not exported")
    if args.write_docs:
        write_docs(os.path.join(ROOT, "docs/MODELS.md"), rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([vars(r) for r in results], f, indent=1)
    if regressions:
        print("run_zoo: expected to pass but failed (regressions): "
              + ", ".join(regressions))
    if newly_passing:
        print("run_zoo: now pass, remove from tools/zoo/expected.txt: "
              + ", ".join(newly_passing))
    if missing:
        print("run_zoo: not exported, run tools/zoo/export_models.py: "
              + ", ".join(missing))
    sys.exit(1 if regressions or newly_passing or missing else 0)


if __name__ == "__main__":
    main()
