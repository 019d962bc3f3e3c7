"""Batched NW and DTW on the GPU (warp per pair, DP in registers) against the CPU paths: exact scores."""

import numpy as np
import pytest

from seqcompare.align.api import align, dtw
from seqcompare.align.costs import Costs

pytestmark = pytest.mark.gpu


def sequences(rng, count, low, high):
    return ["".join(rng.choice(list("ACGTN"), rng.integers(low, high + 1))) for _ in range(count)]


AFFINE = Costs(Costs.seed(0, 4, 1, 1).substitution, insert_open=3, insert_extend=1, delete_open=6, delete_extend=2)
MATRIX = Costs.scores(matrix=np.array([[5, -4, -2, -4, 0], [-4, 5, -4, -2, 0], [-2, -4, 5, -4, 0], [-4, -2, -4, 5, 0],
                                       [0, 0, 0, 0, -1]]), gap_open=-6, gap_extend=-1)  # fmt: skip


@pytest.mark.parametrize("costs", [Costs.edit(), Costs.seed(0, 3, 2, 5), Costs.seed(-2, 1, 1, 3),
                                   Costs.scores(2, -3, 0, -2), Costs.scores(2, -3, -5, -2), AFFINE, MATRIX])  # fmt: skip
@pytest.mark.parametrize("low,high", [(0, 40), (90, 140), (200, 300), (1000, 1100), (2040, 2100)])
def test_nw_equals_the_cpu(rng, costs, low, high):
    count = 40 if high < 1000 else 6
    targets, queries = sequences(rng, count, low, high), sequences(rng, count, low, high)
    cpu = align(targets, queries, costs=costs)
    gpu = align(targets, queries, costs=costs, device="cuda")
    assert np.array_equal(cpu.scores, gpu.scores)


def test_nw_edge_pairs():
    targets = ["", "A", "", "ACGT", "A" * 1025]
    queries = ["", "", "C", "A", "C" * 1030]
    for costs in (Costs.edit(), AFFINE, MATRIX):
        cpu = align(targets, queries, costs=costs).scores
        assert np.array_equal(cpu, align(targets, queries, costs=costs, device="cuda").scores)


@pytest.mark.parametrize("mode", ["full", "open-end", "subsequence"])
@pytest.mark.parametrize("low,high", [(1, 40), (100, 260), (1000, 1100), (2047, 2050)])
def test_integer_dtw_equals_the_cpu(rng, mode, low, high):
    count = 30 if high < 1000 else 5
    a = [rng.integers(-50, 50, rng.integers(low, high + 1)) for _ in range(count)]
    b = [rng.integers(-50, 50, rng.integers(low, high + 1)) for _ in range(count)]
    assert np.array_equal(dtw(a, b, mode=mode).scores, dtw(a, b, mode=mode, device="cuda").scores)


def test_dtw_empty_and_unsupported():
    from seqcompare.errors import InputError

    empty = [np.array([], dtype=np.int64), np.array([1, 2])]
    assert dtw(empty, empty, mode="subsequence", device="cuda").scores.tolist() == [0, 0]
    with pytest.raises(InputError, match="empty signal"):
        dtw([np.array([1])], [np.array([], dtype=np.int64)], device="cuda")
    with pytest.raises(InputError, match="on the GPU"):
        dtw([np.array([1.5])], [np.array([2.5])], window=3, device="cuda")
    with pytest.raises(InputError, match="on the GPU"):
        align(["A" * 10], ["C" * 10], costs=Costs.seed(0, 2**28, 2**28, 2**28), device="cuda")


def test_cli_device_cuda_equals_cpu(tmp_path):
    import subprocess
    import sys

    fasta = tmp_path / "x.fa"
    rng = np.random.default_rng(3)
    fasta.write_text("".join(f">s{k}\n{''.join(rng.choice(list('ACGT'), 300 + k))}\n" for k in range(9)))
    outputs = []
    for device in ("cpu", "cuda"):
        done = subprocess.run([sys.executable, "-m", "seqcompare", "align", str(fasta), "--all-vs-all", "--costs",
                               "0,1,1,2", "--device", device, "-q"], capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == 1 + 36


def test_length_10000_and_real_data(rng):
    import os

    from conftest import DATA

    from seqcompare.io.fastq import read_fastq

    targets, queries = sequences(rng, 2, 10000, 10000), sequences(rng, 2, 9000, 10000)
    assert np.array_equal(align(targets, queries).scores, align(targets, queries, device="cuda").scores)
    a = [rng.integers(0, 1000, 10000) for _ in range(2)]
    b = [rng.integers(0, 1000, 10000) for _ in range(2)]
    for mode in ("full", "open-end"):
        assert np.array_equal(dtw(a, b, mode=mode).scores, dtw(a, b, mode=mode, device="cuda").scores)
    reads = read_fastq(os.path.join(DATA, "scan_example", "reads.fastq"))
    text = ["".join("ACGTN"[c] for c in reads.sequence(r)[:3000]) for r in range(10)]
    costs = Costs.seed(0, 1, 1, 2)
    assert np.array_equal(align(text[:5], text[5:], costs=costs).scores,
                          align(text[:5], text[5:], costs=costs, device="cuda").scores)  # fmt: skip
    series = np.loadtxt(os.path.join(DATA, "dtw_example", "gunpoint_train.csv"), delimiter=",")[:12, 1:]
    quantised = np.rint(series * 1000).astype(np.int64)
    assert np.array_equal(dtw(quantised).scores, dtw(quantised, device="cuda").scores)


@pytest.mark.parametrize("mode", ["full", "open-end", "subsequence"])
@pytest.mark.parametrize("low,high", [(0, 40), (200, 300), (2040, 2060)])
def test_float_dtw_equals_the_cpu(rng, mode, low, high):
    count = 30 if high < 1000 else 4
    a = [rng.normal(size=rng.integers(low, high + 1)) for _ in range(count)]
    b = [rng.normal(size=rng.integers(low, high + 1)) for _ in range(count)]
    cpu, gpu = dtw(a, b, mode=mode).scores, dtw(a, b, mode=mode, device="cuda").scores
    assert np.array_equal(cpu, gpu)  # the same additions in the same order: equal, not just close
