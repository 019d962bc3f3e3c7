# Session 39, call 8: the Dask GPU tests of scan (fallback launched over the pairs that need it; names kept
# encoded) on this tree, with the GPU helper tests once more.
set -u
rm -rf build
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
export PYTHONPATH=/tmp/site
PARALLEL=$(python3 -c 'import xdist; print("-n 8")' 2>/dev/null)
cd tests && timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider $PARALLEL test_distributed.py test_gpu_helper.py -k "scan or helper or killed" 2>&1 | grep -v "Benchmark\|warner" | tail -6
