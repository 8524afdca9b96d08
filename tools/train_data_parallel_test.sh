#!/usr/bin/env bash
# scopeflow train on several replicas: threads (--replicas) and, where the
# build found MPI, 2 processes under mpirun (--distributed=mpi). Two shards
# summed on threads or across processes are the same floats ((g0 + g1) / 2
# either way, one OpenMP thread each), so the saved parameters of the two
# runs must be identical bytes; and the run must learn.
set -euo pipefail
scopeflow=tools/scopeflow
fail() { echo "FAIL: $*"; exit 1; }
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export OMP_NUM_THREADS=1
flags=(--flagfile=examples/digits/mlp.flags --epochs=3)

threads=$("$scopeflow" train "${flags[@]}" --replicas=2 \
  --save_params="$tmp/threads.sfparams")
grep -q '^data parallel: global batch 32 = 1 process x 2 replicas x 16 examples (per-replica batch 16)' \
  <<<"$threads" || fail "threads header: $threads"
grep -q '^epoch 3/3: .*examples/s' <<<"$threads" || fail "threads epochs: $threads"
accuracy=$(sed -n 's/^final: .*test accuracy \([0-9.]*\)%$/\1/p' <<<"$threads")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 90) }' || fail "2 replicas learn too little: $threads"

# A batch that does not split is refused with the counts.
if out=$("$scopeflow" train "${flags[@]}" --replicas=3 2>&1); then
  fail "a batch of 32 over 3 replicas was accepted"
fi
grep -q 'batch of 32 examples does not split evenly over 3 replicas' <<<"$out" \
  || fail "uneven split error: $out"

# Places: an unknown one, more CUDA devices than the process sees (or no
# GPU code at all), and a replica count that disagrees are refused by name.
if out=$("$scopeflow" train "${flags[@]}" --places=cuda:0,tpu:1 2>&1); then
  fail "--places=cuda:0,tpu:1 was accepted"
fi
grep -q 'train: --places: places "cuda:0,tpu:1": unknown place "tpu:1"' \
  <<<"$out" || fail "unknown place error: $out"
if out=$("$scopeflow" train "${flags[@]}" --places=cuda:0,cuda:64 2>&1); then
  fail "--places=cuda:0,cuda:64 was accepted"
fi
grep -q -E 'places cuda:0,cuda:64: (this build has no GPU code|replica [01] is on cuda:(0|64), and this process sees [0-9]+ CUDA device)' \
  <<<"$out" || fail "missing device error: $out"
if out=$("$scopeflow" train "${flags[@]}" --replicas=3 --places=cuda:0,cuda:0 2>&1); then
  fail "--replicas=3 with two places was accepted"
fi
grep -q 'train: --replicas=3 and --places with 2 places' <<<"$out" ||
  fail "replicas and places error: $out"

# A checkpoint of 2 replicas resumes on 4.
ckpt="$tmp/ckpt"
"$scopeflow" train "${flags[@]}" --epochs=1 --replicas=2 --checkpoint_dir="$ckpt" >/dev/null
resumed=$("$scopeflow" train "${flags[@]}" --epochs=2 --replicas=4 \
  --checkpoint_dir="$ckpt" --resume)
grep -q '^resumed from .* at step 44$' <<<"$resumed" || fail "resume: $resumed"
grep -q '^epoch 2/2: ' <<<"$resumed" || fail "resumed epochs: $resumed"

mpirun=$(command -v mpirun || true)
if [[ -z "$mpirun" ]]; then
  echo "no mpirun: the MPI half is skipped"
  exit 0
fi
if "$scopeflow" train --distributed=mpi --data=none --main=none --startup=none 2>&1 \
  | grep -q 'this build has no MPI'; then
  echo "this build has no MPI: the MPI half is skipped"
  exit 0
fi
# Root in containers, more processes than cores, shared memory only.
mpi=(--oversubscribe --allow-run-as-root --mca btl self,vader
  --mca btl_vader_single_copy_mechanism none -x OMP_NUM_THREADS)
# Under AddressSanitizer: Open MPI leaves its components' memory to the
# process's exit, which LeakSanitizer reports from libmpi and the plugins it
# loads; the leak check stays on for the threaded runs above.
if [[ -n "${ASAN_OPTIONS:-}" ]]; then
  mpi+=(-x "ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0")
fi
mpi_out=$("$mpirun" -np 2 "${mpi[@]}" "$scopeflow" train "${flags[@]}" \
  --distributed=mpi --save_params="$tmp/mpi.sfparams" 2>&1) || fail "mpirun: $mpi_out"
grep -q '^data parallel: global batch 32 = 2 processes x 1 replica x 16 examples' \
  <<<"$mpi_out" || fail "mpi header: $mpi_out"
[[ $(grep -c '^final: ' <<<"$mpi_out") == 1 ]] || fail "only rank 0 reports: $mpi_out"
cmp "$tmp/threads.sfparams" "$tmp/mpi.sfparams" \
  || fail "2 MPI processes and 2 threads trained different parameters"
echo PASS
