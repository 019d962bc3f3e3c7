# Session 45, call 2 (one H200): the DP GPU tests with each piece's tail staged while its head is registered
# (SPLIT_IN_PLACE) and pages unlocked after the scores are back (DEFER_UNLOCKING); a profile of one call's host
# time; bench/dp_unlock_probe.py (both changes on and off, interleaved); goal 1's rows of bench/dp_api.py in three
# fresh processes.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" tests -n 8 -k "test_dp" 2>&1 | tail -4
export PYTHONPATH=/tmp/site
timeout 60 python3 bench/dp_call_profile.py --calls 5 > "$OUT/call_profile.log" 2>&1
head -60 "$OUT/call_profile.log"
timeout 200 python3 bench/dp_unlock_probe.py --rounds 3 --repeats 7 --timeline --json "$OUT/unlock_probe.json" 2>&1 | tee "$OUT/unlock_probe.log"
for round in 1 2 3; do
  echo "== round $round"
  timeout 100 python3 bench/dp_api.py --out "$OUT/dpapi$round" --repeats 7 --only "dtw int16 2-D;dtw int32 2-D;dtw float32 2-D;dtw int64 2-D;align uint8 codes, NW seed(0,2,3,3)" 2>&1 | grep -E "GCUPS"
done
