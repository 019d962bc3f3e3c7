# Session 44, 4-GPU call B (nvidia-h200-x4, issue 21): where a worker's GPU waits. The weak Hamming run on 1 and 4
# GPUs with every task's stamps (set up, prefetched, turn taken and released, how long its kernels waited for
# its copies), then the 4-GPU run with three tasks a worker.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
timeout 200 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,4 --repeats 3 --hamming 400000,30000 --jobs hamming --tasks-per-worker 2 --label stamps > "$OUT/weak_stamps.log" 2>&1
grep -E "root hamming \[" "$OUT/weak_stamps.log" | cut -c1-300
timeout 150 python3 bench/dask_bench.py weak --out "$OUT" --gpus 4 --repeats 3 --hamming 400000,30000 --jobs hamming --tasks-per-worker 3 --label stamps_t3 > "$OUT/weak_stamps_t3.log" 2>&1
grep -E "root hamming \[" "$OUT/weak_stamps_t3.log" | cut -c1-300
