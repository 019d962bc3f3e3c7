# Session 40, call 6: the final tree's scan, FASTQ and helper GPU tests; the 1 Gbp --max-edits 5% scan through the
# helper twice, its output compared with the CPU's (-j 16).
set -u
WORK=/tmp/seqcompare-work
export PYTHONUNBUFFERED=1
rm -rf build && python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
PARALLEL=$(python3 -c 'import xdist; print("-n 8")' 2>/dev/null)
(cd tests && timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider $PARALLEL test_scan.py test_scan_approximate.py test_gpu_helper.py test_fastq.py 2>&1 | grep -v "Benchmark\|warner" | tail -6)
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
write_workload('$WORK', 1000000000, 2000)" > /dev/null 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
ARGS="$READS $PAT --both-strands --report all --tsv -j 16 --max-edits 5%"
for r in 1 2; do
  s=$(date +%s%N); timeout 60 python3 -m seqcompare scan $ARGS --device cuda -o $WORK/gpu.tsv 2> $WORK/gpu.log; rc=$?; e=$(date +%s%N)
  echo "cuda rc $rc $(( (e - s) / 1000000 )) ms"; grep -o "scanned on the GPU.*" $WORK/gpu.log | cut -c1-400
done
s=$(date +%s%N); timeout 100 python3 -m seqcompare scan $ARGS --device cpu -q -o $WORK/cpu.tsv; rc=$?; e=$(date +%s%N)
echo "cpu rc $rc $(( (e - s) / 1000000 )) ms"
cmp $WORK/gpu.tsv $WORK/cpu.tsv && echo "GPU output identical to the CPU's ($(wc -l < $WORK/cpu.tsv) lines)"
