# Session 42, 4-GPU call A (nvidia-h200-x4, issue 21) at a4c9dbb (bit planes packed by a multiply; GPU shares
# dealt with early starts and an undealt tail): the Dask GPU tests (one worker per GPU: four), then strong
# scaling, 800,000 x 30,000, on 1 and 4 GPUs with the engine's tiles, and on 1 GPU in the 4-GPU run's tiles
# (100,000 rows) for a baseline in the same tiles.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:-a4c9dbb}  # name the tree sent: the device copy's .git is stale
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
{ nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; cat /sys/kernel/mm/transparent_hugepage/shmem_enabled; nvidia-smi topo -m; } > "$OUT/host.txt" 2>&1
head -4 "$OUT/host.txt"
export PYTHONPATH=/tmp/site
(cd tests && timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider test_distributed.py 2>&1 | tail -3) | tee "$OUT/gpu_tests.log"
timeout 200 python3 bench/dask_bench.py strong --out "$OUT" --gpus 1,4 --check --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --label t2 > "$OUT/strong_t2.log" 2>&1
grep -E "root|HammingWork" "$OUT/strong_t2.log" | cut -c1-240
timeout 130 python3 bench/dask_bench.py strong --out "$OUT" --gpus 1 --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --tile-size 100000 --label t2_tile100000 > "$OUT/strong_t2_tile100000.log" 2>&1
grep -E "root|HammingWork" "$OUT/strong_t2_tile100000.log" | cut -c1-240
