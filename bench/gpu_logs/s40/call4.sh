# Session 40, call 4: where the 1 Gbp --max-edits 5% scan's time goes outside its log lines, on this tree: wall-clock
# marks from the interpreter's start through the handler, the helper path, the write, main's return and os._exit
# (diag/sitecustomize.py), beside the log and the helper's stages; 4 runs in a row.
set -u
WORK=/tmp/seqcompare-work
export PYTHONUNBUFFERED=1
rm -rf build && python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > /dev/null 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
for r in 0 1 2 3; do
  s=$(date +%s.%N)
  SEQCOMPARE_DIAG_CLI=1 PYTHONPATH=bench/gpu_logs/s40/diag timeout 60 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out.tsv 2> $WORK/log.txt
  e=$(date +%s.%N)
  echo "run $r: shell $(python3 -c "print(f'{$e - $s:.3f}')") s"
  cat $WORK/log.txt
done
