#!/usr/bin/env bash
# Runs a Python benchmark ($2) under the interpreter $1 with the module
# from the runfiles; further arguments go to the benchmark.
set -euo pipefail
python="$1"
script="$2"
shift 2
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export SCOPEFLOW_CLI="$PWD/tools/scopeflow"
export SCOPEFLOW_EXAMPLES="$PWD/examples"
exec "$python" "$script" "$@"
