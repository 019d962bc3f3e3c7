# Session 42, call 5 (nvidia-h200-x2, issue 21): the new dealing (early starts, undealt tail) on 2 GPUs. The Dask
# GPU tests with two workers; strong scaling of 800,000 x 30,000 on 1 and 2 GPUs at a083882's code, and on 2 GPUs
# with the old tree (ddd58d8, carried as oldtree/) in the same call.
set -u
export PYTHONUNBUFFERED=1
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
{ nproc; lscpu | grep -E "Model name|Socket"; nvidia-smi topo -m; } > "$OUT/host.txt" 2>&1
head -3 "$OUT/host.txt"
export PYTHONPATH=/tmp/site
(cd tests && timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider test_distributed.py 2>&1 | tail -3) | tee "$OUT/gpu_tests.log"
SEQCOMPARE_COMMIT=a083882 timeout 170 python3 bench/dask_bench.py strong --out "$OUT" --gpus 1,2 --check --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --label new > "$OUT/strong_new.log" 2>&1
grep -E "root|HammingWork" "$OUT/strong_new.log" | cut -c1-200
SEQCOMPARE_COMMIT=ddd58d8 PYTHONPATH=$PWD/oldtree/src:/tmp/site timeout 90 python3 bench/dask_bench.py strong --out "$OUT" --gpus 2 --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --label old > "$OUT/strong_old.log" 2>&1
grep -E "root|HammingWork" "$OUT/strong_old.log" | cut -c1-200
