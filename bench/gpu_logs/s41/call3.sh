# Session 41, call 3: the DP path's checks folded by one kernel a piece (align/checks.cu). The GPU tests of
# test_dp.py and test_align_modes.py; then bench/dp_api.py twice (40,000 pairs of 1,000, medians of 7) and the
# checks probe (checked against unchecked now).
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
(cd tests && timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 test_dp.py test_align_modes.py 2>&1 | tail -4)
for round in 1 2; do
  timeout 100 python3 bench/dp_api.py --out "$OUT/dpapi$round" --repeats 7 2>&1 | grep -v "^\s*$" | tail -12
done
timeout 100 python3 bench/dp_checks_probe.py --out "$OUT/probe" --repeats 7 2>&1 | grep -v stages
