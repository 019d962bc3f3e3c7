# Session 43, call 3 (one H200): the alignment-mode GPU tests at ea2caef (the int16-columns test now also puts the
# short side against long queries, shared and by order).
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=ea2caef
bash bench/gpu_run.sh "$OUT" tests -n 8 -k "align_modes or top_hits" 2>&1 | tail -4
