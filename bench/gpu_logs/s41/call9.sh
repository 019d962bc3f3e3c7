# Session 41, call 9: issue 20's side-by-side benchmark at the final tree (74f9970's pack_words packer of the
# signatures had not been benchmarked on a GPU): the scan GPU tests, then bench/scan_approximate.py against Sassy
# and seqkit on one H200.
set -u
WORK=/tmp/seqcompare-work
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
(cd tests && PYTHONPATH=/tmp/site timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 test_scan.py test_scan_approximate.py test_gpu_helper.py test_fastq.py 2>&1 | tail -2)
PYTHONPATH=/tmp/site timeout 380 python3 bench/scan_approximate.py --out "$OUT" --work $WORK --device cuda --threads 16 --peer-threads 2 --repeats 3 --seqkit-bases 2e6 --seqkit .peers/seqkit/seqkit 2>&1 | tail -40
