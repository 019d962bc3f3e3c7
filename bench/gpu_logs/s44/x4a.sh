# Session 44, 4-GPU call A (nvidia-h200-x4, issue 21): does a GPU's Hamming work slow down when its neighbours
# work too? bench/gpu_concurrency.py (one process per GPU, no Dask: kernel alone, then host to host; GPU 0 alone,
# then 4 at once, nvidia-smi sampling), then the weak Hamming run again with the workers' turn times and
# nvidia-smi sampling.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
{ nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)"; nvidia-smi topo -m; nvidia-smi -q -d POWER,CLOCK | head -80; } > "$OUT/host.txt" 2>&1
head -3 "$OUT/host.txt"
export PYTHONPATH=/tmp/site
timeout 200 python3 bench/gpu_concurrency.py --out "$OUT" --gpus 4 --rows 65536 --seconds 12 > "$OUT/concurrency.log" 2>&1
tail -12 "$OUT/concurrency.log" | cut -c1-300
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 250 > "$OUT/smi_weak.csv" 2>&1 &
SMI=$!
timeout 230 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,4 --check --repeats 3 --hamming 400000,30000 --jobs hamming --tasks-per-worker 2 --label turns > "$OUT/weak_turns.log" 2>&1
kill $SMI
grep -E "root hamming \[|on the workers" "$OUT/weak_turns.log" | cut -c1-900
