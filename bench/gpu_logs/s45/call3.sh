# Session 45, call 3 (one H200): the DP GPU tests with the tail split taken out again (call 2: slower) and pages
# unlocked after the scores are back; bench/dp_unlock_probe.py on int32 with the finer timeline; piece plans with
# smaller last pieces (bench/dp_pieces_probe.py); goal 1's rows of bench/dp_api.py in three fresh processes.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" tests -n 8 -k "test_dp" 2>&1 | tail -4
export PYTHONPATH=/tmp/site
timeout 120 python3 bench/dp_unlock_probe.py --rounds 3 --repeats 7 --timeline --dtypes int32 --json "$OUT/unlock_probe.json" 2>&1 | tee "$OUT/unlock_probe.log"
timeout 200 python3 bench/dp_pieces_probe.py --rounds 9 2>&1 | tee "$OUT/pieces_probe.log"
for round in 1 2 3; do
  echo "== round $round"
  timeout 100 python3 bench/dp_api.py --out "$OUT/dpapi$round" --repeats 7 --only "dtw int16 2-D;dtw int32 2-D;dtw float32 2-D;dtw int64 2-D;align uint8 codes, NW seed(0,2,3,3)" 2>&1 | grep -E "GCUPS"
done
