# Session 44, call 1 (one H200): the alignment-mode and top-hit GPU tests at 07f1b7c (the CPU's paths and CIGARs
# in lanes changed how the CIGARs the GPU traces are asked for: _finish hands _gpu_cigars the pairs not traced).
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" tests -n 8 -k "align_modes or top_hits" 2>&1 | tail -4
