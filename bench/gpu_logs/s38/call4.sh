# Session 38, call 4: after the lock-order fix (see call 3), the 1 Gbp --max-edits scan of this tree against
# fa1eabe (session 37's last) interleaved, the course run A/B, then the scan helper's GPU tests. Every process
# dumps its stacks if it runs past 30 s (bench/gpu_logs/s38/diag).
set -u
WORK=/tmp/seqcompare-work
rm -rf build /tmp/oldsrc /tmp/old38 && cp -r oldtree /tmp/oldsrc && rm -rf /tmp/oldsrc/build
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old38 /tmp/oldsrc 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > $OUT/workload.log 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
DIAG=$PWD/bench/gpu_logs/s38/diag
run() {  # tag, pythonpath, round
  mkdir -p $OUT/$1_$3
  local s=$(date +%s%N)
  DIAG_DIR=$OUT/$1_$3 DIAG_AFTER=30 PYTHONPATH=$DIAG${2:+:$2} timeout 40 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv > $OUT/$1_$3/log.txt 2>&1
  local rc=$? e=$(date +%s%N)
  echo "$1 $3 rc $rc $(( (e - s) / 1000000 )) ms" >> $OUT/runs.log
}
run old /tmp/old38 0; run new "" 0
for r in 1 2 3 4 5; do run old /tmp/old38 $r; run new "" $r; done
cmp $WORK/out_old.tsv $WORK/out_new.tsv && echo "outputs identical" >> $OUT/runs.log
for tree in old new; do
  if [ $tree = old ]; then PP=/tmp/old38; B=oldtree/bench; else PP=""; B=bench; fi
  PYTHONPATH=$PP timeout 100 python3 $B/scan_bench.py --out $OUT/course_$tree --device cuda --repeats 5 --work $WORK > $OUT/course_$tree.log 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/course_$tree/results_scan_cuda.json'))
print('$tree', 'median', round(d['end_to_end_median_s'],3), 'runs', [round(x,3) for x in d['end_to_end_runs_s']], 'identical', d['identical_to_cpu_output'], 'planted', d['all_planted_found'])
print(d['log_of_last_run'])" >> $OUT/course.log 2>&1
done
find $OUT -name "*stacks*" -size 0 -delete
(cd tests && timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider test_scan.py test_gpu_helper.py -k "gpu_cli or helper" > $OUT/tests.log 2>&1; echo "rc $?" >> $OUT/tests.log)
