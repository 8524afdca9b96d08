#!/usr/bin/env bash
# The zoo's small models (zoo_catalog.py marks them): exported, imported,
# run at two batch sizes and compared with torch; fails on a regression and
# on a model that newly passes (tools/zoo/expected.txt says which to expect).
set -euo pipefail
if ! /usr/bin/python3 -c 'import torch, torchvision, onnx' 2>/dev/null; then
  echo "zoo_test: needs Debian's python3-torch, python3-torchvision and" \
    "python3-onnx: run tools/setup.sh" >&2
  exit 1
fi
out=${TEST_TMPDIR:-$(mktemp -d)}/zoo
start=$SECONDS
/usr/bin/python3 tools/zoo/export_models.py "$out" --small
echo "zoo_test: exported in $((SECONDS - start)) s"
/usr/bin/python3 tools/zoo/run_zoo.py --zoo "$out" --small \
  --scopeflow tools/scopeflow
echo "zoo_test: done in $((SECONDS - start)) s"
