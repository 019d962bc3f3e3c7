# Session 39, call 9: the 1 Gbp --max-edits 5% scan through the helper, be6928a (midtree/, call 5's source)
# against this tree (names found by the reader's threads), interleaved, 5 rounds; outputs compared.
set -u
WORK=/tmp/seqcompare-work
rm -rf build /tmp/midsrc /tmp/mid39 && cp -r midtree /tmp/midsrc
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/mid39 /tmp/midsrc 2>&1 | tail -2
rm -rf build && python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > /dev/null 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
run() {  # tag, pythonpath
  local s=$(date +%s%N)
  PYTHONPATH=$2 timeout 30 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv > $WORK/log_$1.txt 2>&1
  local rc=$? e=$(date +%s%N)
  echo "$1 rc $rc $(( (e - s) / 1000000 )) ms | $(grep -o 'names [0-9.]* s, duplicates [0-9.]* s' $WORK/log_$1.txt)"
}
run mid /tmp/mid39 > /dev/null; run new "" > /dev/null
for r in 1 2 3 4 5; do run mid /tmp/mid39; run new ""; done
cmp $WORK/out_mid.tsv $WORK/out_new.tsv && echo "outputs identical ($(wc -l < $WORK/out_new.tsv) lines)"
