# Session 42, 4-GPU call B (nvidia-h200-x4, issue 21) at a4c9dbb: weak scaling, Hamming pairs 400,000 x 30,000
# and CCC 2-way 524,288 x 8,192 per GPU, on 1 and 4 GPUs, each result checked against a single-process run.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:-a4c9dbb}  # name the tree sent: the device copy's .git is stale
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
timeout 420 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,4 --check --repeats 3 --hamming 400000,30000 --ccc 524288,8192 --tasks-per-worker 2 --label t2 > "$OUT/weak_t2.log" 2>&1
grep -E "root|HammingWork|CCCWork|efficiency" "$OUT/weak_t2.log" | cut -c1-240
python3 -c "
import json; d = json.load(open('$OUT/results_dask_weak_t2.json'))
for r in d['runs']:
    print(r['gpus'], {k: (round(v['seconds'], 3), v['runs'], round(v.get('weak_efficiency', 0), 3), v['identical_to_single_process']) for k, v in r.items() if isinstance(v, dict) and 'seconds' in v})
"
