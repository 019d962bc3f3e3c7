# Session 41, call 5: piece plans for ordinary int32/float32 arrays (bench/dp_pieces_probe.py), twice.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
for r in 1 2; do timeout 150 python3 bench/dp_pieces_probe.py --rounds 9 2>&1 | tee -a "$OUT/dp_pieces_probe.log"; done
