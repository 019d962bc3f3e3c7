# Session 41, call 6: goal 1 A/B in one call: 798e1be (oldtree/, CuPy reductions as checks) against 8f1fe60 (checks
# folded by one kernel a piece), bench/dp_api.py rows of ordinary 2-D arrays, fresh processes alternating, 3 rounds.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
ROWS="align uint8 codes, NW seed(0,2,3,3);dtw int16 2-D;dtw int32 2-D;dtw int64 2-D;dtw float32 2-D;dtw float64 2-D"
for round in 1 2 3; do
  echo "== round $round, 798e1be"
  PYTHONPATH=$PWD/oldtree/src timeout 100 python3 bench/dp_api.py --out "$OUT/old$round" --repeats 7 --only "$ROWS" 2>&1 | grep "GCUPS"
  echo "== round $round, 8f1fe60"
  timeout 100 python3 bench/dp_api.py --out "$OUT/new$round" --repeats 7 --only "$ROWS" 2>&1 | grep "GCUPS"
done
PYTHONPATH=$PWD/oldtree/src python3 -c "import seqcompare.align.gpu as g; print('old tree checks:', hasattr(g, '_FOLDS'))"
python3 -c "import seqcompare.align.gpu as g; print('new tree checks:', hasattr(g, '_FOLDS'))"
