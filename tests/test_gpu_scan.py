"""seqcompare scan on a GPU against the brute-force oracle. Marked ``gpu``: skipped without CuPy and a GPU."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATA, planted_with_dense_ns

from seqcompare.io.sequences import SequenceSet
from seqcompare.scan.api import scan
from seqcompare.simulate import simulate_scan

pytestmark = pytest.mark.gpu
EXAMPLE = os.path.join(DATA, "scan_example")


def assert_gpu_equals_oracle(samples, signatures, **options):
    gpu = scan(samples, signatures, device="cuda", **options)
    oracle = scan(samples, signatures, method="reference", **options)
    assert list(gpu.lines(tsv=True, integrity=True)) == list(oracle.lines(tsv=True, integrity=True))
    return gpu


@pytest.mark.parametrize("n_ratio", [0.0, 0.01, 0.1, 0.3, 0.6])
@pytest.mark.parametrize("report", ["first", "best", "all"])
def test_generated_data(n_ratio, report):
    data = simulate_scan(n_signatures=25, signature_length=(20, 400), n_clean=12, n_infected=10, max_per_sample=3,
                         sample_length=(300, 4000), n_ratio=n_ratio, seed=int(n_ratio * 100) + 1)  # fmt: skip
    assert_gpu_equals_oracle(data.samples, data.signatures, report=report, both_strands=True)


@pytest.mark.parametrize("k", [1, 3, 8, 12, 13])
def test_every_k(k):
    data = simulate_scan(n_signatures=15, signature_length=(5, 200), n_clean=6, n_infected=6, sample_length=(0, 2000),
                         n_ratio=0.2, seed=k)  # fmt: skip
    assert_gpu_equals_oracle(data.samples, data.signatures, k=k, report="all")


def test_ns_inside_planted_copies_force_the_fallback(rng):
    samples, signatures = planted_with_dense_ns(rng, (12, 13, 31, 32, 33, 40, 64, 65, 300, 1000), 3000)
    for report in ("first", "all"):
        result = assert_gpu_equals_oracle(samples, signatures, report=report)
        assert {(i, i) for i in range(10)} <= set(zip(result.sample.tolist(), result.signature.tolist()))


def test_edge_cases_and_min_score():
    samples = SequenceSet.from_strings(["ACGTACGTNNACGT", "", "A", "N" * 20, "ACGT" + "T" * 60 + "A"],
                                       qualities=[[7] * 14, [], [3], [0] * 20, list(range(65))])  # fmt: skip
    signatures = SequenceSet.from_strings(["A", "GT", "NNN", "N" * 20, "N" * 21, "ACGT" * 9, "T" * 40, "CGTN"])
    for report in ("first", "best", "all"):
        for min_score in (None, 5.0, 30.0):
            assert_gpu_equals_oracle(samples, signatures, report=report, both_strands=True, min_score=min_score)


def test_more_samples_than_one_launch_holds(rng):
    n = 70_000
    texts = ["".join(rng.choice(list("ACGTN"), 12)) for _ in range(n)]
    samples = SequenceSet.from_strings(texts, qualities=[[9] * 12] * n)
    signatures = SequenceSet.from_strings(["ACG", "NNTT", texts[-1][2:9]])
    gpu = assert_gpu_equals_oracle(samples, signatures, k=3)
    assert (gpu.sample == n - 1).any()


def test_real_reads_and_cli_output_identical_to_cpu(tmp_path):
    reads = os.path.join(EXAMPLE, "reads.fastq")
    signatures = os.path.join(EXAMPLE, "signatures.fasta")
    for report in ("first", "all"):
        assert_gpu_equals_oracle(reads, signatures, report=report, both_strands=True)
    outputs = []
    for device in ("cpu", "cuda"):
        target = tmp_path / f"{device}.tsv"
        done = subprocess.run([sys.executable, "-m", "seqcompare", "scan", reads, signatures, "--both-strands",
                               "--tsv", "--device", device, "-o", str(target), "-q"], capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs.append(target.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") == 21


def test_full_size_like_sample_lengths():
    data = simulate_scan(n_signatures=40, signature_length=(3000, 10000), n_clean=3, n_infected=3,
                         sample_length=(100_000, 200_000), n_ratio=0.1, seed=11)  # fmt: skip
    gpu = scan(data.samples, data.signatures, device="cuda")
    cpu = scan(data.samples, data.signatures, device="cpu")
    assert list(gpu.lines(tsv=True)) == list(cpu.lines(tsv=True))
    assert {(i, s) for i, s, _ in data.planted} <= set(zip(gpu.sample.tolist(), gpu.signature.tolist()))


def test_a_long_sample_with_copies_only_the_fallback_finds(rng):
    """1.7 Mb, 20% N, and planted copies with an N every 4 bases (at the start, middle and very end)."""
    sample = rng.integers(0, 4, 1_700_000)
    sample[rng.random(sample.size) < 0.2] = 4
    signatures = []
    for at, length in ((5, 40), (900_000, 300), (1_699_000, 1000)):
        signature = rng.integers(0, 4, length)
        copy = signature.copy()
        copy[1::4] = 4
        sample[at : at + length] = copy
        signatures.append("".join("ACGTN"[c] for c in signature))
    samples = SequenceSet.from_strings(["".join("ACGTN"[c] for c in sample)], qualities=[np.where(sample == 4, 0, 30)])
    result = assert_gpu_equals_oracle(samples, SequenceSet.from_strings(signatures), report="all")
    assert {5, 900_000, 1_699_000} <= set(result.offset.tolist())
