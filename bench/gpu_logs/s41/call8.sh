# Session 41, call 8: the whole GPU suite at the session's last code (the CPU's own-query lanes and int16 bound),
# dask wheels carried.
set -u
export PYTHONUNBUFFERED=1
bash bench/gpu_run.sh "$OUT" tests -n 8 2>&1 | tail -4
