# Session 45, call 4 (one H200): the DP GPU tests with the last piece a quarter of the others and the cost table
# kept on the device; bench/dp_unlock_probe.py on int32 (deferred unlocking on and off); every row of
# bench/dp_api.py (goal 1) in three fresh processes.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" tests -n 8 -k "${TESTS_K:-test_dp or align_modes}" 2>&1 | tail -4  # calls 5, 6: test_dp
export PYTHONPATH=/tmp/site
timeout 100 python3 bench/dp_unlock_probe.py --rounds 3 --repeats 7 --timeline --dtypes int32 --json "$OUT/unlock_probe.json" 2>&1 | tee "$OUT/unlock_probe.log"
for round in 1 2 3; do
  echo "== round $round"
  timeout 110 python3 bench/dp_api.py --out "$OUT/dpapi$round" --repeats 7 --profile 2>&1 | grep -E "GCUPS|profile"
done
