#!/usr/bin/env bash
# Runs run_zoo_test.py with Debian's Python, which has numpy.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/run_zoo_test.py"
