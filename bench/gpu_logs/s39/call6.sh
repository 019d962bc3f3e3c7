# Session 39, call 6: where the 1 Gbp --max-edits 5% scan's time goes outside its log lines: the shell's start
# and end around the interpreter's start and its os._exit (diag/sitecustomize.py), 4 runs of this tree.
set -u
WORK=/tmp/seqcompare-work
rm -rf build && python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
[ -f $WORK/reads_1000000000_2000.fastq ] || python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > /dev/null 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
for r in 0 1 2 3 4; do
  s=$(date +%s.%N)
  PYTHONPATH=bench/gpu_logs/s39/diag timeout 60 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out.tsv 2> $WORK/log.txt
  e=$(date +%s.%N)
  python3 - $s $e $WORK/log.txt <<'PY'
import re, sys
shell_start, shell_end = float(sys.argv[1]), float(sys.argv[2])
text = open(sys.argv[3]).read()
started, exited = (float(x) for x in re.search(r"interpreter start ([0-9.]+) os._exit ([0-9.]+)", text).groups())
marks = re.findall(r"\[seqcompare +([0-9.]+)s\] (\w+)", text)
print(f"shell {shell_end - shell_start:.3f} s: to interpreter {started - shell_start:.3f}, interpreter to os._exit "
      f"{exited - started:.3f}, os._exit to shell {shell_end - exited:.3f}; log marks {marks}")
PY
done
