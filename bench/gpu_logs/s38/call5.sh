# Session 38, call 5: the 1 Gbp --max-edits scan: fa1eabe (old), this tree (new), and this tree without the
# parent's background Numba start in the helper path (C, treeC/), interleaved; the stage lines printed.
set -u
WORK=/tmp/seqcompare-work
rm -rf build /tmp/oldsrc /tmp/old38 /tmp/tc /tmp/treeC && cp -r oldtree /tmp/oldsrc && cp -r treeC /tmp/tc
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old38 /tmp/oldsrc 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/treeC /tmp/tc 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > /dev/null 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
run() {  # tag, pythonpath
  local s=$(date +%s%N)
  PYTHONPATH=$2 timeout 40 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv > $WORK/log_$1.txt 2>&1
  local rc=$? e=$(date +%s%N)
  echo "$1 rc $rc $(( (e - s) / 1000000 )) ms | $(grep -o 'read 500000.*\|scanned.*' $WORK/log_$1.txt | tr '\n' ' ' | sed 's/read 500000 samples.*fastq//; s/scanned on the GPU by a helper process//')"
}
run old /tmp/old38 > /dev/null; run new "" > /dev/null; run C /tmp/treeC > /dev/null
for r in 1 2 3 4; do run old /tmp/old38; run new ""; run C /tmp/treeC; done
