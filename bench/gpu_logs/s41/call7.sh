# Session 41, call 7: the whole GPU suite at the session's last code (8f1fe60's checks, 0093714's candidate sort),
# dask wheels carried.
set -u
export PYTHONUNBUFFERED=1
bash bench/gpu_run.sh "$OUT" tests -n 8 2>&1 | tail -4
