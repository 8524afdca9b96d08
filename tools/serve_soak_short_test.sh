#!/usr/bin/env bash
# A bounded run of tools/serve_soak.py in the default tests: 8 s of 16
# keep-alive clients mixing good and bad requests, slowloris and idle
# connections and a version swap halfway; every good request must answer
# 200, every bad one its 4xx, /healthz under 50 ms at the median, and the
# server must exit 0 on SIGTERM. Resident memory is judged only against
# gross growth here; the long run (`tools/serve_soak.py --duration 180`,
# manual) judges it flat.
set -euo pipefail
export TMPDIR="$TEST_TMPDIR"
exec /usr/bin/python3 tools/serve_soak.py --scopeflow tools/scopeflow \
  --duration 8 --sample_seconds 1 --warmup_seconds 3 --max_rss_growth 1.0 \
  --connections 16 --slowloris 4 --idle 16
