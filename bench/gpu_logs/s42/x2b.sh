# Session 42, call 6 (nvidia-h200-x2, issue 21): weak scaling with the new dealing at a083882's code, Hamming pairs
# 400,000 x 30,000 and CCC 2-way 524,288 x 8,192 per GPU, on 1 and 2 GPUs, each checked against one process.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=a083882
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
timeout 400 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,2 --check --repeats 3 --hamming 400000,30000 --ccc 524288,8192 --tasks-per-worker 2 --label t2 > "$OUT/weak_t2.log" 2>&1
python3 -c "
import json; d = json.load(open('$OUT/results_dask_weak_t2.json'))
for r in d['runs']:
    print(r['gpus'], {k: (round(v['seconds'], 3), [round(x, 3) for x in v['runs']], round(v.get('weak_efficiency', 0), 3), v['identical_to_single_process']) for k, v in r.items() if isinstance(v, dict) and 'seconds' in v})
"
