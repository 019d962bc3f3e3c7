# Session 38, call 3 (diagnostic): a warm 1 Gbp --max-edits scan hung in call 2. Runs of this tree (A) and of this
# tree with scan's helper start as at fa1eabe (B, treeB/), each process dumping its stacks if it runs past 15 s.
set -u
WORK=/tmp/seqcompare-work
rm -rf build /tmp/tb /tmp/treeB && cp -r treeB /tmp/tb
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/treeB /tmp/tb 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > $OUT/workload.log 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
DIAG=$PWD/bench/gpu_logs/s38/diag
run() {  # tag, pythonpath
  mkdir -p $OUT/$1_$3
  DIAG_DIR=$OUT/$1_$3 DIAG_AFTER=15 PYTHONPATH=$DIAG${2:+:$2} timeout 22 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv > $OUT/$1_$3/log.txt 2>&1
  echo "$1 $3 rc $?" >> $OUT/runs.log
}
run A "" 0; run B /tmp/treeB 0
for r in 1 2 3 4 5; do run A "" $r; run B /tmp/treeB $r; done
find $OUT -name "*stacks*" -size 0 -delete
