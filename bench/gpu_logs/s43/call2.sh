# Session 43, call 2 (one H200): the whole GPU suite at 825aa91 (the CPU strip's register changes and the 16-bit
# lanes' column bound, with the new test of local ends past int16 columns on CPU and GPU).
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=825aa91
bash bench/gpu_run.sh "$OUT" tests -n 8 2>&1 | tail -4
