#!/usr/bin/env bash
# The whole zoo (docs/MODELS.md): exports every model at opsets 9, 11, 13
# and 17 into a cache (kept between runs; export_models.py --force redoes
# it), builds scopeflow, imports, runs and compares each, and writes the
# results into docs/MODELS.md. Flags --models a,b / --opsets 9,11 / --small
# pass to both steps. SCOPEFLOW_ZOO overrides the cache folder,
# SCOPEFLOW_BAZEL_FLAGS adds flags to the build (e.g. --config=cpu_only).
#   bash tools/zoo/run_all.sh [--models a,b] [--opsets 9,11] [--small]
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/setup.sh
zoo=${SCOPEFLOW_ZOO:-${XDG_CACHE_HOME:-$HOME/.cache}/scopeflow-zoo}
# shellcheck disable=SC2086  # The flags are words.
bazel build ${SCOPEFLOW_BAZEL_FLAGS:-} //tools:scopeflow
/usr/bin/python3 tools/zoo/export_models.py "$zoo" "$@"
/usr/bin/python3 tools/zoo/run_zoo.py --zoo "$zoo" --write-docs "$@"
