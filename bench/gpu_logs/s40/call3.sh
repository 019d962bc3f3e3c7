# Session 40, call 3: the scan and FASTQ GPU tests on this tree (plain FASTQ records found by threads); the 1 Gbp
# --max-edits 5% scan through the helper, 239f37c (oldtree/), d5dcfe3 (midtree/, call 2) and this tree interleaved,
# each run timed from the shell to the interpreter and to os._exit (s39/diag/sitecustomize.py); the exact course run
# (bench/scan_bench.py); bench/scan_approximate.py against Sassy and seqkit.
set -u
OUTDIR=${OUT:-/tmp/out}
WORK=/tmp/seqcompare-work
export PYTHONUNBUFFERED=1
rm -rf build /tmp/oldsrc /tmp/old39 /tmp/midsrc /tmp/mid40 && cp -r oldtree /tmp/oldsrc && cp -r midtree /tmp/midsrc
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old39 /tmp/oldsrc 2>&1 | tail -2
rm -rf build
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/mid40 /tmp/midsrc 2>&1 | tail -2
rm -rf build
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
PARALLEL=$(python3 -c 'import xdist; print("-n 8")' 2>/dev/null)
(cd tests && PYTHONPATH=/tmp/site timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider $PARALLEL test_scan.py test_scan_approximate.py test_gpu_helper.py test_fastq.py 2>&1 | grep -v "Benchmark\|warner" | tail -8)
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > /dev/null 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
run() {  # tag, pythonpath
  local s=$(date +%s.%N)
  PYTHONPATH=$2:bench/gpu_logs/s39/diag timeout 60 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv > $WORK/log_$1.txt 2>&1
  local rc=$? e=$(date +%s.%N)
  python3 - $1 $rc $s $e $WORK/log_$1.txt <<'PY'
import re, sys
tag, rc, shell_start, shell_end, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
text = open(path).read()
started, exited = (float(x) for x in re.search(r"interpreter start ([0-9.]+) os._exit ([0-9.]+)", text).groups())
marks = " ".join(f"{w}@{t}" for t, w in re.findall(r"\[seqcompare +([0-9.]+)s\] (\w+)", text))
stages = re.search(r"helper process \((.*)\)", text).group(1)
stages = re.sub(r", helper (cupy|driver|kernel |upload|lock)[^,]*", "", stages)
print(f"{tag} rc {rc} {1000 * (shell_end - shell_start):.0f} ms | to interpreter {started - shell_start:.3f}, to os._exit "
      f"{exited - started:.3f}, exit {shell_end - exited:.3f} | {marks} | {stages}")
PY
}
run old /tmp/old39 > /dev/null; run mid /tmp/mid40 > /dev/null; run new "" > /dev/null
for r in 1 2 3 4 5; do run old /tmp/old39; run mid /tmp/mid40; run new ""; done
cmp $WORK/out_old.tsv $WORK/out_new.tsv && cmp $WORK/out_mid.tsv $WORK/out_new.tsv && echo "outputs identical ($(wc -l < $WORK/out_new.tsv) lines)"
cat $WORK/log_new.txt
PYTHONPATH=/tmp/site timeout 120 python3 bench/scan_bench.py --out $OUTDIR --device cuda --repeats 5 2>&1 | tail -6
PYTHONPATH=/tmp/site timeout 400 python3 bench/scan_approximate.py --out $OUTDIR --work $WORK --device cuda --threads 16 --peer-threads 2 --repeats 3 --seqkit-bases 2e6 --seqkit .peers/seqkit/seqkit 2>&1 | tail -32
