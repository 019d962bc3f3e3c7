# Session 42, call 4 (one H200): the alignment GPU tests at the last code (97f2119's CPU changes: pairs by order
# compare codes, reads with an N grouped apart), whose GPU tests compare with the CPU's paths and the oracles.
set -u
export PYTHONUNBUFFERED=1
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
(cd tests && timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -n 6 test_align_modes.py test_dp.py test_top_hits.py test_matrices_and_modes.py 2>&1 | tail -3) | tee "$OUT/gpu_tests.log"
