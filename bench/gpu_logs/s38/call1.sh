# Session 38, call 1: scan's GPU tests, then the 1 Gbp --max-edits scan, this tree against fa1eabe (session 37's
# last) interleaved on one host, with each run's stage log. The old tree travels as oldtree/ (untracked).
set -u
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:-new}
WORK=/tmp/seqcompare-work
rm -rf build /tmp/oldsrc /tmp/old38 && cp -r oldtree /tmp/oldsrc && rm -rf /tmp/oldsrc/build
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old38 /tmp/oldsrc 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
nproc > $OUT/host.log; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv >> $OUT/host.log
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
(cd tests && PYTHONPATH=/tmp/site timeout 280 python3 -m pytest -q -m gpu -p no:cacheprovider -k "scan or helper" . > $OUT/tests.log 2>&1; echo "rc $?" >> $OUT/tests.log)
tail -3 $OUT/tests.log
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
print(write_workload('$WORK', 1000000000, 2000))" > $OUT/workload.log 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
run() {  # tag, pythonpath
  local s=$(date +%s.%N)
  PYTHONPATH=$2 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv >> $OUT/edits_$1.log 2>&1
  local e=$(date +%s.%N); echo "$1 $(echo "$e - $s" | bc)" | tee -a $OUT/edits_times.log
}
run old /tmp/old38; run new ""   # warm: page cache, kernels' caches
for r in 1 2 3 4 5; do run old /tmp/old38; run new ""; done
cmp $WORK/out_old.tsv $WORK/out_new.tsv && echo "outputs identical" | tee -a $OUT/edits_times.log
