#!/usr/bin/env bash
# Keeps Bazel's disk cache (.bazelrc: --disk_cache) under a size cap. Bazel 4
# never evicts from it, so on a machine that builds many configurations (opt,
# CUDA, tsan, asan) and many worktrees it grows until the disk is full and
# links fail. Evicts the least recently used entries first (by the later of
# access and modification time); anything evicted is rebuilt on demand.
#
# The cap holds what one CI run builds (the optimised CUDA build, position-
# independent, and the tsan and asan shares: about 25 GB), so that a run's
# trims do not evict the sanitizer configurations' entries before the next.
#
# Usage: tools/trim_disk_cache.sh [CAP_GB]   (default: SCOPEFLOW_DISK_CACHE_GB or 32)
set -euo pipefail

cache_dir="${SCOPEFLOW_DISK_CACHE_DIR:-$HOME/.cache/scopeflow-bazel-disk}"
cap_gb="${1:-${SCOPEFLOW_DISK_CACHE_GB:-32}}"
[[ -d "$cache_dir" ]] || exit 0

cap_bytes=$((cap_gb * 1024 * 1024 * 1024))
total=$(du -sb "$cache_dir" | cut -f1)
if ((total <= cap_bytes)); then exit 0; fi

echo "trim_disk_cache: $cache_dir holds $((total >> 20)) MiB, cap ${cap_gb} GiB; evicting the least recently used entries"
# Each line: last use (epoch seconds), size, path; oldest first.
find "$cache_dir" -type f -printf '%A@ %T@ %s %p\n' |
  awk '{ used = ($1 > $2) ? $1 : $2; print used, $3, $4 }' |
  sort -n |
  awk -v excess=$((total - cap_bytes)) '
    freed < excess { freed += $2; print $3 }' |
  xargs -r -d '\n' rm -f
echo "trim_disk_cache: now $(( $(du -sb "$cache_dir" | cut -f1) >> 20 )) MiB"
