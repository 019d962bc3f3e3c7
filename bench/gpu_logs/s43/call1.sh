# Session 43, call 1 (one H200): the whole GPU suite at 58de09f (session 42's last code: the compare path of pairs
# by order, the sparse cursor row, which had not run on a GPU with the rest), then goal 1's rows of
# bench/dp_api.py, every row (list of str included, last measured in session 21), fresh processes, 3 rounds.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=58de09f
bash bench/gpu_run.sh "$OUT" tests -n 8 2>&1 | tail -4
export PYTHONPATH=/tmp/site
for round in 1 2 3; do
  echo "== round $round"
  timeout 110 python3 bench/dp_api.py --out "$OUT/dpapi$round" --repeats 7 --profile 2>&1 | grep -E "GCUPS|profile"
done
