# Session 44, 4-GPU call E (nvidia-h200-x4, issues 21 and 17): the single-process Hamming GPU tests on the gate's
# tree, then weak scaling of CCC 2-way (524,288 x 8,192 per GPU, 1 and 4 GPUs), checked against single-process
# runs.
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
(cd tests && timeout 170 python3 -m pytest -q -m gpu -n 12 -p no:cacheprovider test_hamming.py test_gpu_helper.py 2>&1 | tail -3) | tee "$OUT/gpu_tests_hamming.log"
timeout 300 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,4 --check --repeats 3 --jobs ccc --ccc 524288,8192 --tasks-per-worker 2 --label ccc_gate > "$OUT/weak_ccc.log" 2>&1
grep -E "root ccc \[" "$OUT/weak_ccc.log" | cut -c1-300
