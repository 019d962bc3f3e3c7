# Session 44, 4-GPU call F (nvidia-h200-x4, issue 21): the weak Hamming run again on the gate's tree (is 93.5% the
# host's luck?), checked against single-process runs.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
timeout 200 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,4 --check --repeats 3 --hamming 400000,30000 --jobs hamming --tasks-per-worker 2 --label gate_again > "$OUT/weak.log" 2>&1
grep -E "root hamming \[" "$OUT/weak.log" | cut -c1-300
