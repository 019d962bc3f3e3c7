# Session 42, call 1 (nvidia-h200-x4, issue 21): strong scaling at 68175c2 (pack by multiply, early starts and an
# undealt tail) on 1 and 4 GPUs, beside the tree before them (ddd58d8, carried as oldtree/) on 4 GPUs; then the
# Dask GPU tests.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=68175c2
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
{ nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; cat /sys/kernel/mm/transparent_hugepage/shmem_enabled; df -h /dev/shm | tail -1; free -g | head -2; } > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
export PYTHONPATH=/tmp/site
timeout 200 python3 bench/dask_bench.py strong --out "$OUT" --gpus 1,4 --check --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --label new > "$OUT/strong_new.log" 2>&1
grep -E "root|HammingWork" "$OUT/strong_new.log" | cut -c1-300
SEQCOMPARE_COMMIT=ddd58d8 PYTHONPATH=$PWD/oldtree/src:/tmp/site timeout 90 python3 -c "import seqcompare; print(seqcompare.__file__)"
SEQCOMPARE_COMMIT=ddd58d8 PYTHONPATH=$PWD/oldtree/src:/tmp/site timeout 100 python3 bench/dask_bench.py strong --out "$OUT" --gpus 4 --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --label old > "$OUT/strong_old.log" 2>&1
grep -E "root|HammingWork" "$OUT/strong_old.log" | cut -c1-300
(cd tests && timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider test_distributed.py 2>&1 | tail -3) | tee "$OUT/gpu_tests.log"
