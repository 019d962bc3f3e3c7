# Session 42, call 2 (one H200; no 4-GPU host lent): the GPU tests of what a4c9dbb touched (bit-plane packing on
# the host, Dask shares), then the caller's block making of a one-GPU Dask run at a4c9dbb beside ddd58d8 (carried
# as oldtree/), alternated, three runs each.
set -u
export PYTHONUNBUFFERED=1
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
nproc
(cd tests && timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 4 test_hamming.py test_models.py test_duplicates.py 2>&1 | tail -3) | tee "$OUT/gpu_tests.log"
(cd tests && timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider test_distributed.py 2>&1 | tail -3) | tee -a "$OUT/gpu_tests.log"
for round in 1 2; do
  for tree in new old; do
    if [ $tree = new ]; then P=/tmp/site; C=a4c9dbb; else P=$PWD/oldtree/src:/tmp/site; C=ddd58d8; fi
    SEQCOMPARE_COMMIT=$C PYTHONPATH=$P timeout 100 python3 bench/dask_bench.py strong --out "$OUT" --gpus 1 --repeats 3 --hamming 300000,30000 --tasks-per-worker 2 --label ${tree}_$round > "$OUT/strong_${tree}_$round.log" 2>&1
    echo "$tree $round"; grep -E "HammingWork|hamming on 1 \[" "$OUT/strong_${tree}_$round.log" | cut -c1-200
  done
done
