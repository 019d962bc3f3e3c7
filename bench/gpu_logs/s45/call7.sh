# Session 45, call 7 (one H200): the DP GPU tests at the session's last GPU code (pages unlocked after the scores
# are back, the last piece a quarter of the others, ranges of 16 MB copied as soon as each is locked; lengths of
# 2-D arrays as broadcasts, strip sizes by compares, fewer host arrays a call); every row of bench/dp_api.py
# (goal 1) in three fresh processes.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" tests -n 8 -k "test_dp" 2>&1 | tail -4
export PYTHONPATH=/tmp/site
for round in 1 2 3; do
  echo "== round $round"
  timeout 110 python3 bench/dp_api.py --out "$OUT/dpapi$round" --repeats 7 --profile 2>&1 | grep -E "GCUPS|profile"
done
