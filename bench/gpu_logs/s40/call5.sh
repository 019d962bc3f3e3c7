# Session 40, call 5: the scan and FASTQ GPU tests on this tree (the helper forked before NumPy's import); the 1 Gbp
# --max-edits 5% scan through the helper, 239f37c (oldtree/), 141338e (midtree/, call 3), this tree, and this tree
# with the shared arrays left unlocked (nolock/sitecustomize.py), interleaved, each with the diagnosis marks
# (diag/sitecustomize.py); bench/scan_approximate.py against Sassy and seqkit.
set -u
OUTDIR=${OUT:-/tmp/out}
WORK=/tmp/seqcompare-work
export PYTHONUNBUFFERED=1
rm -rf build /tmp/oldsrc /tmp/old39 /tmp/midsrc /tmp/mid40b && cp -r oldtree /tmp/oldsrc && cp -r midtree /tmp/midsrc
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old39 /tmp/oldsrc 2>&1 | tail -2
rm -rf build
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/mid40b /tmp/midsrc 2>&1 | tail -2
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
run() {  # tag, pythonpath, sitecustomize folder
  local s=$(date +%s.%N)
  SEQCOMPARE_DIAG_CLI=1 PYTHONPATH=$2:bench/gpu_logs/s40/$3 timeout 60 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv > $WORK/log_$1.txt 2>&1
  local rc=$? e=$(date +%s.%N)
  python3 - $1 $rc $s $e $WORK/log_$1.txt <<'PY'
import re, sys
tag, rc, shell_start, shell_end, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
text = open(path).read()
diag = re.search(r"\[diag\] (.*)", text).group(1)
marks = " ".join(f"{w}@{t}" for t, w in re.findall(r"\[seqcompare +([0-9.]+)s\] (\w+)", text))
stages = re.search(r"helper process \((.*)\)", text).group(1)
stages = re.sub(r", helper (driver|kernel |upload)[^,]*", "", stages)
print(f"{tag} rc {rc} {1000 * (shell_end - shell_start):.0f} ms | {diag} | {marks} | {stages}")
PY
}
run old /tmp/old39 diag > /dev/null; run mid /tmp/mid40b diag > /dev/null; run new "" diag > /dev/null; run nolock "" nolock > /dev/null
for r in 1 2 3 4 5; do run old /tmp/old39 diag; run mid /tmp/mid40b diag; run new "" diag; run nolock "" nolock; done
cmp $WORK/out_old.tsv $WORK/out_new.tsv && cmp $WORK/out_mid.tsv $WORK/out_new.tsv && cmp $WORK/out_nolock.tsv $WORK/out_new.tsv && echo "outputs identical ($(wc -l < $WORK/out_new.tsv) lines)"
cat $WORK/log_new.txt
PYTHONPATH=/tmp/site timeout 400 python3 bench/scan_approximate.py --out $OUTDIR --work $WORK --device cuda --threads 16 --peer-threads 2 --repeats 3 --seqkit-bases 2e6 --seqkit .peers/seqkit/seqkit 2>&1 | tail -32
