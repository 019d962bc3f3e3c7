# Session 41, call 1: the whole GPU suite at 74f9970 (pack_records through pack_words had not run on a GPU), dask
# wheels carried; then issue 17 goal 1's rows through the API (bench/dp_api.py, 40,000 pairs of 1,000, medians of 7).
set -u
export PYTHONUNBUFFERED=1
bash bench/gpu_run.sh "$OUT" tests -n 8 2>&1 | tail -8
DPAPI_ARGS="--repeats 7" timeout 200 bash bench/gpu_run.sh "$OUT" dpapi 2>&1 | grep -v "^\s*$" | tail -40
