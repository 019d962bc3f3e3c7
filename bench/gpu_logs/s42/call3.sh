# Session 42, call 3 (one H200): is a Dask GPU worker slower per pair on smaller tiles? One worker, two tasks at
# once, 400,000 x 30,000 Hamming pairs in tiles of 133,334 rows (3 blocks: what one GPU gets), 66,667 (6) and
# 50,000 (8 blocks: the edge 4 GPUs get on twice the rows), alternated, at a4c9dbb (the last code commit).
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=a4c9dbb
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
for round in 1 2; do
  for tile in 133334 50000 66667; do
    timeout 120 python3 bench/dask_bench.py strong --out "$OUT" --gpus 1 --repeats 3 --hamming 400000,30000 --tasks-per-worker 2 --tile-size $tile --label tile${tile}_$round > "$OUT/tile${tile}_$round.log" 2>&1
    echo "tile $tile round $round"; grep -E "HammingWork|hamming on 1 \[" "$OUT/tile${tile}_$round.log" | cut -c1-160
    grep -E "tasks, one more run" "$OUT/tile${tile}_$round.log" | grep -oE "'compute_s': [0-9.]+, 'span_s': [0-9.]+"
  done
done
