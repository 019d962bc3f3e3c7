"""GPU Hamming methods against the CPU oracle, bit for bit. Marked ``gpu``: skipped without CuPy and a GPU."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATA, random_alignment

from seqcompare.hamming.api import encode_inputs, run_hamming
from seqcompare.allpairs import KnnSink, MatrixSink, PairsSink

pytestmark = pytest.mark.gpu

SHAPES = [(1, 1), (2, 31), (3, 32), (5, 33), (7, 63), (16, 64), (17, 65), (40, 255), (41, 256), (127, 257),
          (128, 511), (129, 512), (130, 513), (33, 1000)]  # fmt: skip
GPU_VARIANTS = [("bitmma", "planes"), ("bitmma", "ballot"), ("bitmma", "shared"), ("bitmma", "naive"),
                ("matrix", "planes"), ("bitpack", "planes")]  # fmt: skip


def matrix_on(device, X, Y=None, *, method="auto", packer="planes", alphabet="acgt", cap=None, tile_size=None):
    encoded = encode_inputs(X, Y, alphabet=alphabet)
    shape = (encoded.n_left, encoded.n_left if encoded.symmetric else encoded.n_right)
    sink = MatrixSink(shape, encoded.symmetric)
    return run_hamming(encoded, sink, method=method, device=device, gpu_packer=packer, cap=cap,
                       tile_size=tile_size)  # fmt: skip


def oracle(X, Y=None, alphabet="acgt", cap=None):
    return matrix_on("cpu", X, Y, method="vector", alphabet=alphabet, cap=cap)


@pytest.mark.parametrize("method,packer", GPU_VARIANTS)
@pytest.mark.parametrize("alphabet", ["acgt", "all", "iupac"])
def test_every_gpu_method_equals_the_oracle(rng, method, packer, alphabet):
    for n, m in SHAPES:
        X = random_alignment(rng, n, m)
        got = matrix_on("cuda", X, method=method, packer=packer, alphabet=alphabet)
        np.testing.assert_array_equal(got, oracle(X, alphabet=alphabet), err_msg=f"n={n} m={m}")


@pytest.mark.parametrize("method,packer", GPU_VARIANTS)
def test_rectangular_query_reference(rng, method, packer):
    for n, p, m in [(1, 1, 64), (70, 130, 300), (129, 3, 513)]:
        X, Y = random_alignment(rng, n, m), random_alignment(rng, p, m)
        got = matrix_on("cuda", X, Y, method=method, packer=packer)
        np.testing.assert_array_equal(got, oracle(X, Y))


@pytest.mark.parametrize("method", ["bitmma", "matrix", "bitpack"])
def test_many_engine_tiles_and_caps(rng, method):
    X = random_alignment(rng, 700, 190, alphabet=b"ACGTN-")
    reference = matrix_on("cpu", X, method="bitpack")
    np.testing.assert_array_equal(matrix_on("cuda", X, method=method, tile_size=256), reference)
    np.testing.assert_array_equal(matrix_on("cuda", X, method=method, tile_size=128, cap=40),
                                  np.minimum(reference, 40))  # fmt: skip


def test_few_thousand_sequences(rng):
    X = random_alignment(rng, 3000, 700, alphabet=b"ACGTN-")
    np.testing.assert_array_equal(matrix_on("cuda", X), matrix_on("cpu", X, method="bitpack"))


@pytest.mark.parametrize("method", ["bitmma", "matrix", "bitpack"])
@pytest.mark.parametrize("symmetric", [True, False])
def test_pairs_and_knn_reduced_on_the_device(rng, method, symmetric):
    X = random_alignment(rng, 300, 400, alphabet=b"ACGTN-")
    Y = None if symmetric else random_alignment(rng, 170, 400, alphabet=b"ACGTN-")
    encoded = encode_inputs(X, Y)
    full = matrix_on("cpu", X, Y, method="bitpack")
    threshold = int(np.percentile(full, 3))
    for cap in (None, threshold + 1, threshold - 5):
        expected = run_hamming(encoded, PairsSink(threshold, symmetric), cap=cap)
        got = run_hamming(encoded, PairsSink(threshold, symmetric), cap=cap, method=method, device="cuda")
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)
    n_right = None if symmetric else Y.shape[0]
    expected = run_hamming(encoded, KnnSink(5, X.shape[0], n_right))
    got = run_hamming(encoded, KnnSink(5, X.shape[0], n_right), method=method, device="cuda", tile_size=128)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_pair_buffer_overflow_is_recounted(rng):
    from seqcompare.hamming.gpu import device_pairs

    X = random_alignment(rng, 200, 100, alphabet=b"ACGT")
    encoded = encode_inputs(X)
    expected = run_hamming(encoded, PairsSink(70, True))
    assert expected[0].size > 1000
    got = device_pairs(encoded, 70, capacity=7)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_tiles_dealt_to_several_devices_give_the_same_pairs(rng):
    import cupy

    from seqcompare.hamming.gpu import device_pairs

    X = random_alignment(rng, 900, 300, alphabet=b"ACGTN-")
    encoded = encode_inputs(X)
    expected = run_hamming(encoded, PairsSink(150, True))
    visible = list(range(cupy.cuda.runtime.getDeviceCount()))
    for devices in ([0, 0, 0], visible, visible * 2):
        got = device_pairs(encoded, 150, devices=devices, chunks=3)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)


def test_all_missing_and_single_sequence():
    for X in (["NNNN", "N-NN", "----"], ["ACGT"], ["A", "N"]):
        np.testing.assert_array_equal(matrix_on("cuda", X), oracle(X))


def test_real_alignment(sarscov2):
    expected = matrix_on("cpu", sarscov2, method="bitpack")
    for method in ("bitmma", "matrix", "bitpack"):
        np.testing.assert_array_equal(matrix_on("cuda", sarscov2, method=method), expected)
    encoded = encode_inputs(sarscov2)
    got = run_hamming(encoded, PairsSink(20, True), device="cuda")
    for a, b in zip(got, run_hamming(encoded, PairsSink(20, True))):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("flags", [[], ["-L"], ["--max-dist", "15"], ["--knn", "3"]])
def test_cli_output_identical_to_cpu(flags):
    path = os.path.join(DATA, "sarscov2_338.fasta.gz")
    base = [sys.executable, "-m", "seqcompare", "hamming", "-q", *flags, path]
    cpu = subprocess.run(base, capture_output=True, check=True).stdout
    gpu = subprocess.run(base + ["--device", "cuda"], capture_output=True, check=True).stdout
    assert gpu == cpu and len(cpu) > 100


@pytest.mark.parametrize("symmetric", [True, False])
def test_pairs_with_every_kernel_shape(rng, symmetric):
    from seqcompare.hamming.gpu import MMA_CONFIGS, device_pairs

    X = random_alignment(rng, 777, 900, alphabet=b"ACGTN-")
    Y = None if symmetric else random_alignment(rng, 301, 900, alphabet=b"ACGTN-")
    encoded = encode_inputs(X, Y)
    threshold = int(np.percentile(matrix_on("cpu", X, Y, method="bitpack"), 4))
    expected = run_hamming(encoded, PairsSink(threshold, symmetric))
    assert 0 < expected[0].size < 777 * 301 // 10
    for config in MMA_CONFIGS:
        got = device_pairs(encoded, threshold, config=config, chunks=5)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b, err_msg=config)
