set -u
export SEQCOMPARE_COMMIT=dbcf35d
rm -rf /tmp/oldsrc /tmp/old9 && cp -r oldtree /tmp/oldsrc && rm -rf /tmp/oldsrc/build && python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old9 /tmp/oldsrc 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
PYTHONPATH=/tmp/old9 python3 -c "import seqcompare, os; import seqcompare._jit as a; print(seqcompare.__file__, os.path.getsize(a.__file__))" > $OUT/old.log
for round in 1 2; do
PYTHONPATH=/tmp/old9 python3 oldtree/bench/scan_bench.py --out $OUT/old$round --device cuda --repeats 7 --work /tmp/seqcompare-work >> $OUT/old.log 2>&1
python3 bench/scan_bench.py --out $OUT/new$round --device cuda --repeats 7 --work /tmp/seqcompare-work > $OUT/new$round.log 2>&1
done
for d in old1 new1 old2 new2; do python3 -c "
import json,sys; d=json.load(open('$OUT/$d/results_scan_cuda.json'))
print('$d', 'median', round(d['end_to_end_median_s'],3), 'runs', [round(x,3) for x in d['end_to_end_runs_s']], 'identical', d['identical_to_cpu_output'], 'planted', d['all_planted_found'])
print(d['log_of_last_run'])
"; done
