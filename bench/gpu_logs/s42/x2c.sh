# Session 42, call 7 (nvidia-h200-x2, issue 21): call 6's Hamming weak scaling with the old tree (ddd58d8, carried
# as oldtree/), for an A/B of the dealing across two calls on the same kind of host.
set -u
export PYTHONUNBUFFERED=1
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
SEQCOMPARE_COMMIT=ddd58d8 PYTHONPATH=$PWD/oldtree/src:/tmp/site timeout 300 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,2 --repeats 3 --hamming 400000,30000 --jobs hamming --tasks-per-worker 2 --label old > "$OUT/weak_old.log" 2>&1
python3 -c "
import json; d = json.load(open('$OUT/results_dask_weak_old.json'))
for r in d['runs']:
    print(r['gpus'], {k: (round(v['seconds'], 3), [round(x, 3) for x in v['runs']], round(v.get('weak_efficiency', 0), 3)) for k, v in r.items() if isinstance(v, dict) and 'seconds' in v})
"
