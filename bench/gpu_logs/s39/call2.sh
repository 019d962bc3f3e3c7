# Session 39, call 2: the scan's GPU tests (exact, approximate, IUPAC, the helper process) on this tree.
set -u
export PYTHONUNBUFFERED=1
rm -rf build
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
export PYTHONPATH=/tmp/site
PARALLEL=$(python3 -c 'import xdist; print("-n 8")' 2>/dev/null)
echo "pytest options: $PARALLEL"
cd tests && timeout 520 python3 -m pytest -q -m gpu -p no:cacheprovider $PARALLEL test_scan.py test_scan_approximate.py test_gpu_helper.py 2>&1 | tail -30
