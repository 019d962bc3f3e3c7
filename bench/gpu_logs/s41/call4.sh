# Session 41, call 4: why int32 GPU DTW calls drift from about 16 to 20 ms in one process (bench/dp_drift_probe.py).
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
timeout 200 python3 bench/dp_drift_probe.py 2>&1 | tee "$OUT/dp_drift_probe.log"
