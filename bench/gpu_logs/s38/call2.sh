# Session 38, call 2: the 1 Gbp --max-edits scan, this tree against fa1eabe (session 37's last) interleaved on
# one host, each run's stage log kept; then the course run A/B; then the scan helper's GPU tests.
set -u
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:-new}
WORK=/tmp/seqcompare-work
rm -rf build /tmp/oldsrc /tmp/old38 && cp -r oldtree /tmp/oldsrc && rm -rf /tmp/oldsrc/build
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/old38 /tmp/oldsrc 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/host.log
python3 -c "
import sys; sys.path.insert(0, 'bench')
from scan_approximate import write_workload
print(write_workload('$WORK', 1000000000, 2000))" > $OUT/workload.log 2>&1
READS=$WORK/reads_1000000000_2000.fastq; PAT=$WORK/patterns.fa
run() {  # tag, pythonpath
  PYTHONPATH=$2 python3 - "$1" "$READS" "$PAT" "$WORK" <<'PY' >> $OUT/edits_times.log 2>&1
import subprocess, sys, time
tag, reads, pat, work = sys.argv[1:]
began = time.perf_counter()
done = subprocess.run([sys.executable, "-m", "seqcompare", "scan", reads, pat, "--both-strands", "--report", "all",
    "--tsv", "-j", "16", "--device", "cuda", "--max-edits", "5%", "-o", f"{work}/out_{tag}.tsv"], capture_output=True, text=True)
print(tag, round(time.perf_counter() - began, 3), "rc", done.returncode)
print(done.stderr.strip())
PY
}
run old /tmp/old38; run new ""   # warm: page cache, kernels' caches
for r in 1 2 3 4; do run old /tmp/old38; run new ""; done
cmp $WORK/out_old.tsv $WORK/out_new.tsv && echo "outputs identical" >> $OUT/edits_times.log
for tree in old new; do
  if [ $tree = old ]; then PP=/tmp/old38; B=oldtree/bench; else PP=""; B=bench; fi
  PYTHONPATH=$PP timeout 150 python3 $B/scan_bench.py --out $OUT/course_$tree --device cuda --repeats 5 --work $WORK > $OUT/course_$tree.log 2>&1
done
for d in old new; do python3 -c "
import json; d=json.load(open('$OUT/course_$d/results_scan_cuda.json'))
print('$d', 'median', round(d['end_to_end_median_s'],3), 'runs', [round(x,3) for x in d['end_to_end_runs_s']], 'identical', d['identical_to_cpu_output'], 'planted', d['all_planted_found'])
print(d['log_of_last_run'])" >> $OUT/course.log 2>&1; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
(cd tests && PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider test_scan.py test_gpu_helper.py -k "gpu_cli or helper" > $OUT/tests.log 2>&1; echo "rc $?" >> $OUT/tests.log)
