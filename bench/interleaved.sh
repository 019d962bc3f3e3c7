#!/usr/bin/env bash
# Alternate a baseline tree and this one, ROUNDS times, on the public API rows of bench/public_api.py (--only
# ROWS) and on the end-to-end scan command line (SCAN=1, data from bench/scan_bench.py in $SEQCOMPARE_WORK),
# and on goal 3's calls of 20 pairs of 10,000 (LONG=1: bench/dp_long_calls.py): run-to-run drift of the machine
# then falls on both trees alike.
#
#   bash bench/interleaved.sh BASE_DIR OUTDIR [ROWS] [ROUNDS]
set -uo pipefail
BASE=$(realpath "${1:?usage: bash bench/interleaved.sh BASE_DIR OUTDIR [ROWS] [ROUNDS]}")
OUT=$(realpath -m "${2:?OUTDIR}")
ROWS=${3:-ccc2,ccc3,align,dtw}
ROUNDS=${4:-4}
DEVICE=${DEVICE:-cuda}
cd "$(dirname "$0")/.."
HEAD_TREE=$(pwd)
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" > /dev/null && [[ -n "${INSTALL_WHEELS-1}" ]]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -3
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
WORK=${SEQCOMPARE_WORK:-/tmp/seqcompare-work}
for round in $(seq "$ROUNDS"); do
    for side in base head; do
        tree=$([[ $side == base ]] && echo "$BASE" || echo "$HEAD_TREE")
        if [[ -n "$ROWS" ]]; then
            PYTHONPATH=$tree/src${PYTHONPATH:+:$PYTHONPATH} python3 "$HEAD_TREE/bench/public_api.py" --device "$DEVICE" \
                --only "$ROWS" --repeats 5 --out "$OUT/${side}_$round" 2>&1 | sed "s/^/$side $round: /"
        fi
        if [[ -n "${SCAN:-}" ]]; then
            for run in 1 2 3; do
                start=$(date +%s%N)
                (cd "$tree" && PYTHONPATH=$tree/src${PYTHONPATH:+:$PYTHONPATH} python3 -m seqcompare scan \
                    "$WORK/scan_full.fastq" "$WORK/scan_full_sigs.fasta" -j "$(nproc)" --device "$DEVICE" -q -o /dev/null)
                echo "$side $round: scan end to end $(( ($(date +%s%N) - start) / 1000000 )) ms"
            done
        fi
        if [[ -n "${LONG:-}" ]]; then
            (cd /tmp && PYTHONPATH=$tree/src${PYTHONPATH:+:$PYTHONPATH} python3 "$HEAD_TREE/bench/dp_long_calls.py" \
                --rounds 1) 2>&1 | sed "s/^/$side $round: /"
        fi
    done
done
