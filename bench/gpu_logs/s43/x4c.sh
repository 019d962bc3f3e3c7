# Session 43, 4-GPU call C (nvidia-h200-x4, issue 21) at 825aa91: the weak Hamming run again (is 87.4% the host's
# spread?), then strong scaling in 50,000-row tiles (5% faster than the engine's on one GPU in session 42) on 4
# GPUs and on 1, every result checked against a single-process run.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:-825aa91}
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
timeout 200 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,4 --check --repeats 3 --hamming 400000,30000 --jobs hamming --tasks-per-worker 2 --label t2_again > "$OUT/weak_again.log" 2>&1
grep -E "root hamming \[" "$OUT/weak_again.log" | cut -c1-200
timeout 230 python3 bench/dask_bench.py strong --out "$OUT" --gpus 4,1 --check --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --tile-size 50000 --label t2_tile50000 > "$OUT/strong_tile50000.log" 2>&1
grep -E "root hamming on" "$OUT/strong_tile50000.log" | grep -v tasks | grep -v workers | cut -c1-200
