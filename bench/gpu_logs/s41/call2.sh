# Session 41, call 2: what the GPU DTW path's value checks cost a call (bench/dp_checks_probe.py), with a fused
# one-kernel-a-piece prototype beside the CuPy reductions, int32 and float32, 40,000 pairs of 1,000.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
python3 bench/dp_checks_probe.py --out "$OUT" --repeats 7 2>&1 | tee "$OUT/dp_checks_probe.log"
python3 bench/dp_checks_probe.py --out "$OUT/round2" --repeats 7 2>&1 | tee "$OUT/dp_checks_probe_round2.log"
