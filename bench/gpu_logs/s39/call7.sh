# Session 39, call 7: the GPU helpers' shared start (cuda.runtime.start_cupy_beside_the_driver): the GPU tests of
# both helpers (hamming's and scan's) and of the CLI's scan through it.
set -u
rm -rf build && python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -2
PARALLEL=$(python3 -c 'import xdist; print("-n 8")' 2>/dev/null)
cd tests && timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider $PARALLEL test_gpu_helper.py test_scan.py -k "helper or gpu_cli" 2>&1 | grep -v "Benchmark\|warner" | tail -6
cd .. && python3 -m seqcompare hamming data/sarscov2_338.fasta.gz --device cuda -o /tmp/m.tsv 2>&1 | tail -2; zcat tests/data/golden/snp-dists/sarscov2_338.tsv.gz | cmp - /tmp/m.tsv && echo "hamming through the helper: snp-dists golden matrix byte for byte"
