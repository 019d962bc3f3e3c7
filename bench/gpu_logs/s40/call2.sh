# Session 40, call 2: the scan GPU tests on this tree (the packing reader vectorised); the 1 Gbp --max-edits 5% scan
# through the helper, 239f37c (oldtree/) and this tree interleaved; this tree run 3 times in a row, then 3 times each
# after a process that holds the FASTQ's lines as Python bytes (about 4 GB, as the benchmark's Sassy process does);
# bench/scan_approximate.py against Sassy and seqkit.
set -u
OUTDIR=${OUT:-/tmp/out}
WORK=/tmp/seqcompare-work
export PYTHONUNBUFFERED=1
rm -rf build /tmp/oldsrc /tmp/old39 && cp -r oldtree /tmp/oldsrc
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old39 /tmp/oldsrc 2>&1 | tail -2
rm -rf build
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
PARALLEL=$(python3 -c 'import xdist; print("-n 8")' 2>/dev/null)
(cd tests && PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider $PARALLEL test_scan.py test_scan_approximate.py test_gpu_helper.py test_fastq.py 2>&1 | grep -v "Benchmark\|warner" | tail -8)
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > /dev/null 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
run() {  # tag, pythonpath
  local s=$(date +%s%N)
  PYTHONPATH=$2 timeout 60 python3 -m seqcompare scan $READS $PAT --both-strands --report all --tsv -j 16 --device cuda --max-edits 5% -o $WORK/out_$1.tsv > $WORK/log_$1.txt 2>&1
  local rc=$? e=$(date +%s%N)
  echo "$1 rc $rc $(( (e - s) / 1000000 )) ms | $(grep -o '\] .*' $WORK/log_$1.txt | grep -v 'read 14\|found' | tr '\n' ' ' | sed 's/read 500000 samples.*fastq//; s/scanned on the GPU by a helper process//')"
}
run old /tmp/old39 > /dev/null; run new "" > /dev/null
for r in 1 2 3 4 5; do run old /tmp/old39; run new ""; done
cmp $WORK/out_old.tsv $WORK/out_new.tsv && echo "outputs identical ($(wc -l < $WORK/out_new.tsv) lines)"
cat $WORK/log_new.txt
echo "--- in a row"
for r in 1 2 3; do run new ""; done
echo "--- each after a process holding 4 GB of small objects"
for r in 1 2 3; do
  python3 -c "import time; t = time.perf_counter(); lines = open('$READS', 'rb').read().split(b'\\n'); kept = [bytearray(x) for x in lines]; print(f'hog: {len(kept)} lines in {time.perf_counter() - t:.1f} s')"
  run new ""
done
PYTHONPATH=/tmp/site timeout 400 python3 bench/scan_approximate.py --out $OUTDIR --work $WORK --device cuda --threads 16 --peer-threads 2 --repeats 3 --seqkit-bases 2e6 --seqkit .peers/seqkit/seqkit 2>&1 | tail -32
