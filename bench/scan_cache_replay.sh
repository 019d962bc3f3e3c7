#!/usr/bin/env bash
# Replays the sequence after which the CPU scan kernel crashed on H200 machines (bench/RESULTS.md, issue 20):
# a fresh Numba cache, four 1 Gbp `seqcompare scan --max-edits 5%` runs (three --device cuda, one --device cpu),
# then the GPU scan tests, twice. Keeps the cache after the command-line runs and checks every cache entry
# (bench/numba_cache_check.py). Usage: bash bench/scan_cache_replay.sh OUT [BASES]
set -uo pipefail
OUT=${1:?usage: bash bench/scan_cache_replay.sh OUT [BASES]}
BASES=${2:-1000000000}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
git rev-parse --short HEAD 2>/dev/null | tee "$OUT/commit.txt"
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
SITE=$(cd /tmp && python3 -c "import os, seqcompare; print(os.path.dirname(seqcompare.__file__))")
find "$SITE" -name "*.nb[ic]" -delete
WORK=/tmp/seqcompare-replay
python3 - "$WORK" "$BASES" <<'PY'
import sys
sys.path.insert(0, "bench")
from scan_approximate import write_workload
print(write_workload(sys.argv[1], int(sys.argv[2]), 2000)[:2])
PY
READS=$WORK/reads_${BASES}_2000.fastq
for device in cuda cuda cuda cpu; do
    start=$(date +%s%N)
    python3 -m seqcompare scan "$READS" "$WORK/patterns.fa" --both-strands --report all --tsv -q -j 16 \
        --device $device --max-edits 5% -o "$WORK/out_$device.tsv"
    echo "cli --device $device rc=$? $(( ($(date +%s%N) - start) / 1000000 )) ms"
done | tee "$OUT/cli.log"
cmp "$WORK/out_cuda.tsv" "$WORK/out_cpu.tsv" && echo "cuda and cpu outputs identical" | tee -a "$OUT/cli.log"
python3 bench/numba_cache_check.py "$SITE" scan_sample _fallback > "$OUT/cache_check_after_cli.txt"; tail -1 "$OUT/cache_check_after_cli.txt"
(cd "$SITE" && find . -name "*.nb[ic]" | tar czf "$OUT/cache_after_cli.tgz" -T -)
for round in 1 2; do
    (cd tests && NUMBA_DEBUG_CACHE=1 python3 -X faulthandler -m pytest -q -m gpu -p no:cacheprovider \
        -k "scan and not distributed" . > "$OUT/pytest_$round.log" 2>&1; echo "rc=$?" >> "$OUT/pytest_$round.log")
    grep -v "^\[cache\]" "$OUT/pytest_$round.log" | tail -25
done
python3 bench/numba_cache_check.py "$SITE" scan_sample _fallback > "$OUT/cache_check_end.txt"; tail -1 "$OUT/cache_check_end.txt"
which gdb || true
