#!/usr/bin/env bash
# Runs python/tests with pytest under the interpreter given as $1 (the one
# the module was built for), the module imported from this test's runfiles.
set -euo pipefail
python="$1"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export SCOPEFLOW_CLI="$PWD/tools/scopeflow"
export SCOPEFLOW_EXAMPLES="$PWD/examples"
cd "${TEST_TMPDIR:-/tmp}"
exec "$python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests"
