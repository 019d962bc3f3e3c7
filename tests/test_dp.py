"""Batched NW and DTW against the plain DP oracles: exact scores, CIGARs that re-score, edge cases, real data."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATA, DEVICES, run_command

from seqcompare.align.api import align, dtw
from seqcompare.align.costs import Costs
from seqcompare.align.reference import cigar_cost, dtw_reference, nw_reference
from seqcompare.errors import InputError
from seqcompare.io.sequences import SequenceSet

COSTS = {
    "edit": Costs.edit(),
    "seed unequal I/D": Costs.seed(0, 3, 2, 5),
    "negative match cost": Costs.seed(-1, 2, 1, 1),
    "affine scores": Costs.scores(2, -3, -5, -2),
    "linear scores": Costs.scores(1, -1, 0, -1),
    "matrix": Costs.scores(matrix=np.array([[5, -4, -2, -4, 0], [-4, 5, -4, -2, 0], [-2, -4, 5, -4, 0],
                                            [-4, -2, -4, 5, 0], [0, 0, 0, 0, 0]]), gap_open=-6, gap_extend=-1),
}  # fmt: skip


@pytest.fixture(params=["cpu", "numpy", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request, monkeypatch):
    """Where the API scores the pairs: the compiled CPU kernels ("cpu", small batches too), the NumPy sweep that
    small batches take by default (seqcompare.align.diagonals, made to take every batch), or the GPU."""
    from seqcompare.align import diagonals

    every = request.param == "numpy"
    monkeypatch.setattr(diagonals, "SMALL_DIAGONALS", 1 << 62 if every else -1)
    monkeypatch.setattr(diagonals, "SMALL_CELLS", 1 << 62 if every else -1)
    monkeypatch.setattr(diagonals, "SWEEP_BUDGET_S", np.inf)
    return "cpu" if every else request.param


def random_sequences(rng, count, low, high):
    return ["".join(rng.choice(list("ACGTN" if low else "ACGT"), rng.integers(low, high + 1))) for _ in range(count)]


def codes(text):
    return SequenceSet.from_strings([text]).codes


@pytest.mark.parametrize("name", COSTS)
def test_nw_scores_and_cigars_equal_the_oracle(rng, device, name):
    costs = COSTS[name]
    targets = random_sequences(rng, 40, 0, 30) + ["", "A", "", "ACGT"]
    queries = random_sequences(rng, 40, 0, 30) + ["", "", "C", "A"]
    result = align(targets, queries, costs=costs, cigar=True, device=device)
    plain = align(targets, queries, costs=costs, device=device)
    for k, (t, q) in enumerate(zip(targets, queries)):
        expected = costs.sign * nw_reference(codes(t), codes(q), costs)
        assert result.scores[k] == expected and plain.scores[k] == expected
        assert costs.sign * cigar_cost(codes(t), codes(q), result.cigars[k], costs) == expected


# The oracle's scores of the long pairs below, by (target, query): every device aligns the same pairs (the rng
# fixture's seed is fixed), and the plain oracle takes 2 s a pair of 1,000.
_LONG_PAIR_SCORES: dict = {}


@pytest.mark.parametrize("length", [100, 250, 1000])
def test_nw_long_pairs(rng, device, length):
    targets, queries = random_sequences(rng, 2, length, length), random_sequences(rng, 2, length, length)
    result = align(targets, queries, costs=COSTS["affine scores"], device=device)
    assert result.cells == 2 * length * length
    for k in range(2):
        pair = (targets[k], queries[k])
        if pair not in _LONG_PAIR_SCORES:
            _LONG_PAIR_SCORES[pair] = -nw_reference(codes(pair[0]), codes(pair[1]), COSTS["affine scores"])
        assert result.scores[k] == _LONG_PAIR_SCORES[pair]


@pytest.mark.parametrize("costs", [Costs.scores(2, -3, -5, -2), Costs.scores(300, -200, -500, -300),
                                   Costs.seed(0, 300, 200, 500), Costs.seed(1, 0, 2, 1)], ids=str)  # fmt: skip
def test_simd_strips_with_mixed_lengths_in_one_vector(rng, costs):
    # 16- and 32-bit lanes; pairs ending in every row of a strip; empty sides; several vectors per thread.
    targets = random_sequences(rng, 150, 0, 45) + ["", "G", "ACGTACGTA"]
    queries = random_sequences(rng, 150, 0, 45) + ["TTTTTTTTTTT", "", "C"]
    result = align(targets, queries, costs=costs, threads=2)
    expected = [costs.sign * nw_reference(codes(t), codes(q), costs) for t, q in zip(targets, queries)]
    assert result.scores.tolist() == expected


@pytest.mark.parametrize("length, lane_bits", [(1100, 16), (1200, 32)])
def test_scores_at_the_16_bit_limit_are_exact(length, lane_bits):
    # Affine scores (bound 7): 1,100 x 1,100 stays in 16-bit lanes, 1,200 x 1,200 could not and widens.
    costs = COSTS["affine scores"]
    result = align(["A" * length, "A" * length], ["A" * length, "C" * length], costs=costs)
    assert result.scores.tolist() == [2 * length, -3 * length]
    assert (length * 2 * costs.bound < 0x3FFF - costs.bound) == (lane_bits == 16)


@pytest.mark.slow
@pytest.mark.parametrize("width", ["16", "32"])
def test_narrower_simd_widths_give_the_same_scores(width):
    # CPUs without AVX-512 use 32- (or 16-) byte vectors; run that code here in a fresh interpreter.
    script = (
        "import numpy as np\n"
        "from seqcompare.align.api import align\n"
        "from seqcompare.align.costs import Costs\n"
        "from seqcompare._simd import VECTOR_BYTES\n"
        f"assert VECTOR_BYTES == {width}\n"
        "rng = np.random.default_rng(5)\n"
        "seqs = [''.join(rng.choice(list('ACGT'), rng.integers(0, 30))) for _ in range(70)]\n"
        "for costs in (Costs.scores(2, -3, -5, -2), Costs.seed(0, 300, 200, 500)):\n"
        "    print(align(seqs[:35], seqs[35:], costs=costs).scores.tolist())\n"
        "for mode in ('local', 'semi-global'):\n"  # the modes' vector strips (mode_kernels.mode_strips)
        "    print(align(seqs, mode=mode, costs=Costs.scores(2, -3, -5, -2)).scores.tolist())\n"
        "    print(align(seqs[:35], seqs[35:], mode=mode, costs=Costs.scores(2, -3, -5, -2)).scores.tolist())\n"
        "from seqcompare._jit import DEFAULT_OPTIONS, _cacheable\n"
        "print(_cacheable(DEFAULT_OPTIONS)['cache'])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "SEQCOMPARE_VECTOR_BYTES": width}, check=True)  # fmt: skip
    lines = done.stdout.splitlines()
    rng = np.random.default_rng(5)
    seqs = ["".join(rng.choice(list("ACGT"), rng.integers(0, 30))) for _ in range(70)]
    for line, costs in zip(lines[:2], (Costs.scores(2, -3, -5, -2), Costs.seed(0, 300, 200, 500)), strict=True):
        expected = [costs.sign * nw_reference(codes(t), codes(q), costs) for t, q in zip(seqs[:35], seqs[35:])]
        assert line == str(expected)
    for k, mode in enumerate(("local", "semi-global")):  # as the full width computes them: all against all, and
        # pairs by order (lanes with a query each)
        scoring = Costs.scores(2, -3, -5, -2)
        assert lines[2 + 2 * k] == str(align(seqs, mode=mode, costs=scoring).scores.tolist())
        assert lines[3 + 2 * k] == str(align(seqs[:35], seqs[35:], mode=mode, costs=scoring).scores.tolist())
    # A width other than this CPU's keeps its machine code out of the on-disk cache; the CPU's own width uses it.
    from seqcompare._simd import NATIVE_VECTOR_BYTES

    cache_on = os.environ.get("SEQCOMPARE_DISABLE_NUMBA_CACHE", "") in ("", "0")
    assert lines[6] == str(int(width) == NATIVE_VECTOR_BYTES and cache_on)


def test_edit_distance_by_bit_vectors_equals_the_oracle(rng, device):
    # Lengths around the 64-bit word boundaries, mixed in one vector of lanes; empty sides; several vectors.
    lengths = [0, 1, 63, 64, 65, 127, 128, 129, 190] + rng.integers(0, 200, 31).tolist()
    targets = ["".join(rng.choice(list("ACGTN"), n)) for n in lengths]
    queries = ["".join(rng.choice(list("ACGTN"), n)) for n in rng.permutation(lengths)]
    queries[5] = targets[5][:40] + targets[5][50:]  # a related pair
    # A carry through a whole word: the target's first base occurs in the query's first word, nowhere in its
    # second, and again in its third (so (Eq & Pv) + Pv is all ones there, plus the carry).
    targets[6], queries[6] = "AACAAAAAAAACCACAAAAACACCACCAC", "A" * 51 + "C" * 117 + "AACCCACACCCCAACACCACACAAAACACACCAAAA"
    expected = [nw_reference(codes(t), codes(q), Costs.edit()) for t, q in zip(targets, queries)]
    assert align(targets, queries, device=device).scores.tolist() == expected
    # any unit: c times the edit distance, as costs or as scores
    assert align(targets, queries, costs=Costs.seed(0, 3, 3, 3), device=device).scores.tolist() == [3 * e for e in expected]
    assert align(targets, queries, costs=Costs.scores(0, -2, 0, -2), device=device).scores.tolist() == [
        -2 * e for e in expected]  # fmt: skip


def mutated(rng, text, rate):
    """``text`` with about ``rate`` of its bases deleted, preceded by an insertion, or substituted."""
    out = []
    for base in text:
        draw = rng.random()
        if draw < rate / 3:
            continue
        out.extend([rng.choice(list("ACGTN")), base] if draw < 2 * rate / 3 else [rng.choice(list("ACGTN"))]
                   if draw < rate else [base])  # fmt: skip
    return "".join(out)


def levenshtein(target: str, query: str) -> int:
    """Plain edit distance, a row of the DP at a time in NumPy (a faster oracle than nw_reference for long pairs):
    D[i][j] = min(D[i-1][j] + 1, D[i-1][j-1] + (t[j] != q[i]), D[i][j-1] + 1), the last term as a running
    minimum of D[i][k] - k."""
    t = np.frombuffer(target.encode(), np.uint8)
    previous = np.arange(len(t) + 1)
    steps = np.arange(len(t) + 1)
    for i, base in enumerate(query.encode(), start=1):
        row = np.empty_like(previous)
        row[0] = i
        row[1:] = np.minimum(previous[1:] + 1, previous[:-1] + (t != base))
        previous = np.minimum.accumulate(row - steps) + steps
    return int(previous[-1])


def test_edit_distance_in_a_band_is_proved_or_run_again(rng, monkeypatch):
    from seqcompare.align import bitparallel

    # Related pairs at every divergence (and unrelated ones, and lengths on both sides of the word boundaries):
    # with a narrow first band most distances exceed what it proves, so the second pass decides them.
    targets = random_sequences(rng, 90, 0, 200)
    queries = [mutated(rng, t, rate) for t, rate in zip(targets, np.tile([0.0, 0.02, 0.1, 0.3, 0.6, 1.0], 15))]
    queries[::9] = random_sequences(rng, 10, 0, 200)
    # Pairs whose only cheap path runs far from the corners' diagonals: t = U + C, q = C + V (delete U, insert V).
    for k, shift in zip(range(1, 90, 9), [5, 10, 20, 30, 40, 50, 60, 70, 80, 90]):
        common = random_sequences(rng, 1, 160, 160)[0]
        targets[k] = random_sequences(rng, 1, shift, shift)[0] + common
        queries[k] = common + random_sequences(rng, 1, shift + k % 3, shift + k % 3)[0]
    expected = [levenshtein(t, q) for t, q in zip(targets, queries)]
    assert expected[:12] == [nw_reference(codes(t), codes(q), Costs.edit()) for t, q in zip(targets[:12], queries[:12])]
    for first_band in (0, 3, 64):
        monkeypatch.setattr(bitparallel, "FIRST_BAND", first_band)
        proved_at_once = [e <= abs(len(t) - len(q)) + 2 * first_band for t, q, e in zip(targets, queries, expected)]
        assert sum(proved_at_once) < 75 if first_band < 64 else sum(proved_at_once) > 45
        assert align(targets, queries, threads=2).scores.tolist() == expected


def test_edit_distance_of_long_pairs_equals_the_oracle(rng, device):
    # Queries on both sides of 1,024 rows (the GPU's chunk: longer ones cross chunk borders) and of 64-bit words,
    # related at several divergences and unrelated, with targets shorter and longer than their queries.
    targets = random_sequences(rng, 6, 900, 2300)
    queries = [mutated(rng, t, rate)[:limit] for t, rate, limit in
               zip(targets, [0.02, 0.1, 0.3, 0.05, 0.6, 0.1], [1023, 1024, 1025, 2100, 1500, 640])]  # fmt: skip
    targets.append(random_sequences(rng, 1, 1200, 1200)[0])
    queries.append(random_sequences(rng, 1, 2049, 2049)[0])
    expected = [levenshtein(t, q) for t, q in zip(targets, queries)]
    assert align(targets, queries, costs=Costs.seed(0, 2, 2, 2), device=device).scores.tolist() == [2 * e for e in expected]


@pytest.mark.parametrize("device", DEVICES)
def test_edit_distances_equal_edlib_on_real_nanopore_reads(device):
    # Golden distances written by edlib 1.3.9 (global "NW" mode), see tests/data/golden/edlib/make.py.
    from seqcompare.io.fastq import read_fastq

    reads = read_fastq(os.path.join(DATA, "scan_example", "reads.fastq"))
    golden = os.path.join(os.path.dirname(__file__), "data", "golden", "edlib", "nanopore_pairs.tsv")
    with open(golden) as handle:
        rows = [[int(x) for x in line.split("\t")] for line in list(handle)[1:]]
    targets = [reads.text(a)[start:stop] for a, start, stop, *_ in rows]
    queries = [reads.text(b)[start:stop] for _, _, _, b, start, stop, _ in rows]
    assert len(rows) == 60
    assert align(targets, queries, device=device).scores.tolist() == [row[-1] for row in rows]


def test_small_batches_skip_the_compiler_until_the_sweep_has_cost_as_much(monkeypatch):
    from seqcompare.align import diagonals

    # A few short pairs are scored by NumPy alone: the process never imports Numba.
    script = ("import sys, numpy as np\n"
              "from seqcompare.align.api import align, dtw\n"
              "print(align(['ACGTAC', 'ACGAAC', 'TTT']).scores.tolist(), dtw(np.array([[1, 2, 3], [2, 3, 5]])).scores.tolist(),"
              " 'numba' in sys.modules)\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[1,", "5,", "6]", "[3]", "False"]
    short, long = np.array([60, 60, 60]), np.array([300, 300])
    monkeypatch.setattr(diagonals, "_spent_s", [0.0])
    assert diagonals.is_small(short, short) and not diagonals.is_small(long, long)
    # once the sweep has cost as much as loading the kernels, the compiled kernels take every batch
    monkeypatch.setattr(diagonals, "_spent_s", [diagonals.SWEEP_BUDGET_S])
    assert not diagonals.is_small(short, short)


def test_all_vs_all_and_explicit_pairs(rng):
    seqs = random_sequences(rng, 6, 5, 20)
    everything = align(seqs)
    assert everything.pairs.tolist() == [[i, j] for i in range(6) for j in range(i + 1, 6)]
    chosen = align(seqs, seqs, pairs=[[5, 0], [2, 2]])
    assert chosen.scores.tolist() == [nw_reference(codes(seqs[5]), codes(seqs[0]), Costs.edit()), 0]
    with pytest.raises(InputError, match="as many queries as targets"):
        align(seqs, seqs[:2])
    with pytest.raises(InputError, match="pair #2 names query 9"):
        align(seqs, seqs, pairs=[[0, 0], [1, 9]])


def test_real_nanopore_reads():
    from seqcompare.io.fastq import read_fastq

    reads = read_fastq(os.path.join(DATA, "scan_example", "reads.fastq"))
    pieces = [reads.sequence(r)[200:420] for r in range(6)]
    text = ["".join("ACGTN"[c] for c in piece) for piece in pieces]
    result = align(text[:3], text[3:], costs=Costs.seed(0, 1, 1, 2), cigar=True)
    for k in range(3):
        assert result.scores[k] == nw_reference(pieces[k], pieces[3 + k], Costs.seed(0, 1, 1, 2))


@pytest.mark.parametrize("mode", ["full", "open-end", "subsequence"])
@pytest.mark.parametrize("window", [None, 0, 3])
@pytest.mark.parametrize("kind", ["int", "float"])
def test_dtw_equals_the_oracle(rng, device, mode, window, kind):
    def signal():
        size = rng.integers(1, 25)
        return rng.integers(-5, 6, size) if kind == "int" else rng.normal(size=size)

    a, b = [signal() for _ in range(30)], [signal() for _ in range(30)]
    if device == "cuda" and window is not None:  # the GPU kernels have no band: refused, not silently moved
        with pytest.raises(InputError, match="on the GPU"):
            dtw(a, b, mode=mode, window=window, device=device)
        return
    result = dtw(a, b, mode=mode, window=window, device=device)
    assert result.scores.dtype == (np.int64 if kind == "int" else np.float64)
    for k in range(30):
        expected = dtw_reference(a[k], b[k], mode=mode, window=window)
        assert result.scores[k] == pytest.approx(expected, rel=1e-9, abs=0) if kind == "float" else result.scores[k] == expected


def test_dtw_edge_cases(device):
    assert dtw([[]], [[]], device=device).scores.tolist() == [0]
    assert dtw([np.array([3.0])], [np.array([])], device=device).scores.tolist() == [np.inf]
    # an empty query matches anywhere for free; nothing matches inside an empty target
    empty = [np.array([], dtype=np.int64), np.array([1, 2])]
    assert dtw(empty, empty, mode="subsequence", device=device).scores.tolist() == [0, 0]
    assert dtw([np.array([1.0, 2.0])], [np.array([], float)], mode="subsequence", device=device).scores.tolist() == [0.0]
    assert dtw([np.array([], float)], [np.array([1.0, 2.0])], mode="subsequence", device=device).scores.tolist() == [
        np.inf]  # fmt: skip
    with pytest.raises(InputError, match="empty signal"):
        dtw([np.array([3])], [np.array([], dtype=np.int64)], device=device)
    with pytest.raises(InputError, match="numeric"):
        dtw([np.array(["a"])])
    with pytest.raises(InputError, match="64-bit"):
        dtw([np.array([0, 2**61])], [np.array([2**61, 0])])


def test_dtw_real_gunpoint_series():
    series = np.loadtxt(os.path.join(DATA, "dtw_example", "gunpoint_train.csv"), delimiter=",")[:8, 1:]
    result = dtw(series, window=10)
    for (i, j), value in zip(result.pairs, result.scores):
        assert value == pytest.approx(dtw_reference(series[i], series[j], window=10), rel=1e-9, abs=0)


def run_cli(*args):
    return run_command(*args)


def test_cli_align_and_dtw(tmp_path):
    fasta = tmp_path / "x.fa"
    fasta.write_text(">a\nACGTACGT\n>b\nACGAACGTT\n>c\nTTT\n")
    done = run_cli("align", str(fasta), "--all-vs-all", "--cigar", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["target\tquery\tscore\tcigar", "a\tb\t2\t7M1D1M", "a\tc\t6\t3I1M2I2M",
                                        "b\tc\t7\t6I3M"]  # fmt: skip
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("c\ta\n")
    done = run_cli("align", str(fasta), str(fasta), "--pairs", str(pairs), "--costs", "0,1,2,1", "-q")
    assert done.stdout.splitlines()[1] == f"c\ta\t{nw_reference(codes('TTT'), codes('ACGTACGT'), Costs.seed(0, 1, 2, 1))}"
    target = tmp_path / "never.tsv"
    for bad, message in [(["align", str(fasta)], "--all-vs-all"), (["align", str(fasta), str(fasta), "--costs", "1,2"], "4 comma"),
                         (["dtw", str(tmp_path / "none.csv")], "no such file")]:  # fmt: skip
        done = run_cli(*bad, "-o", str(target))
        assert done.returncode == 1 and message in done.stderr and done.stderr.count("\n") == 1
        assert not target.exists()
    signals = os.path.join(DATA, "dtw_example", "gunpoint_train.csv")
    done = run_cli("dtw", signals, "--skip-columns", "1", "--window", "10", "-q")
    lines = done.stdout.splitlines()
    assert lines[0] == "i\tj\tdistance" and len(lines) == 1 + 50 * 49 // 2
    series = np.loadtxt(signals, delimiter=",")[:, 1:]
    i, j, value = lines[1].split("\t")
    assert float(value) == dtw_reference(series[int(i)], series[int(j)], window=10)
    text = tmp_path / "bad.csv"
    text.write_text("1,2,3\n4,x,6\n")
    done = run_cli("dtw", str(text))
    assert done.returncode == 1 and "line 2" in done.stderr


def test_wide_scores_take_32_bit_lanes_and_huge_signals_the_64_bit_path(rng):
    costs = Costs.seed(0, 300, 200, 500)  # 60 bases x 500 > 16-bit range: 32-bit lanes
    targets, queries = random_sequences(rng, 20, 0, 30), random_sequences(rng, 20, 0, 30)
    result = align(targets, queries, costs=costs)
    assert result.scores.tolist() == [nw_reference(codes(t), codes(q), costs) for t, q in zip(targets, queries)]
    a = [rng.integers(0, 2**27, rng.integers(1, 20)) for _ in range(10)]  # beyond 32-bit lanes: int64 path
    b = [rng.integers(0, 2**27, rng.integers(1, 20)) for _ in range(10)]
    assert dtw(a, b).scores.tolist() == [dtw_reference(x, y) for x, y in zip(a, b)]


def test_length_10000_lanes_equal_the_scalar_kernel(rng):
    from seqcompare.align.kernels import dtw_pairs, nw_pairs

    target, query = random_sequences(rng, 1, 10000, 10000)[0], random_sequences(rng, 1, 9990, 9990)[0]
    costs = Costs.seed(0, 2, 1, 3)
    lanes = align([target], [query], costs=costs).scores[0]
    t, q = codes(target), codes(query)
    out = np.empty(1, np.int64)
    one = np.array([0], np.int64)
    nw_pairs(t, np.array([0, t.size]), q, np.array([0, q.size]), one, one, 0, 1, costs.substitution,
             np.int64(0), np.int64(1), np.int64(0), np.int64(3), out)  # fmt: skip
    assert lanes == out[0]
    a, b = rng.integers(0, 1000, 10000), rng.integers(0, 1000, 9000)
    scalar = np.empty(1, np.int64)
    dtw_pairs(a, np.array([0, a.size]), b, np.array([0, b.size]), one, one, 0, 1, np.int64(1), np.int64(-1),
              np.int64(1 << 60), scalar)  # fmt: skip
    assert dtw([a], [b], mode="open-end").scores[0] == scalar[0]


# -- the GPU kernels' own limits: lengths around their register tiles, 10,000-long pairs, the command line ------


def sequences(rng, count, low, high):
    return ["".join(rng.choice(list("ACGTN"), rng.integers(low, high + 1))) for _ in range(count)]


AFFINE = Costs(Costs.seed(0, 4, 1, 1).substitution, insert_open=3, insert_extend=1, delete_open=6, delete_extend=2)


@pytest.mark.gpu
@pytest.mark.parametrize("costs", [Costs.edit(), Costs.seed(0, 3, 2, 5), Costs.seed(-2, 1, 1, 3),
                                   Costs.scores(2, -3, 0, -2), Costs.scores(2, -3, -5, -2), AFFINE,
                                   COSTS["matrix"]],
                         ids=["edit", "seed", "negative-match", "linear", "affine", "affine-uneven", "matrix"])  # fmt: skip
@pytest.mark.parametrize("low,high", [(0, 40), (90, 140), (200, 300), (1000, 1100), (2040, 2100)])
def test_gpu_nw_equals_the_cpu(rng, costs, low, high):
    # Too long for the Python oracle: against the CPU kernels, which are held to it above.
    count = 40 if high < 1000 else 6
    targets, queries = sequences(rng, count, low, high), sequences(rng, count, low, high)
    cpu = align(targets, queries, costs=costs, cigar=True)
    gpu = align(targets, queries, costs=costs, device="cuda", cigar=True)
    assert np.array_equal(cpu.scores, gpu.scores)
    assert gpu.cigars == cpu.cigars  # the GPU's traceback takes the CPU's path, ties included


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["full", "open-end", "subsequence"])
@pytest.mark.parametrize("low,high", [(1, 40), (100, 260), (1000, 1100), (2047, 2050)])
def test_gpu_dtw_equals_the_cpu(rng, mode, low, high):
    count = 30 if high < 1000 else 5
    a = [rng.integers(-50, 50, rng.integers(low, high + 1)) for _ in range(count)]
    b = [rng.integers(-50, 50, rng.integers(low, high + 1)) for _ in range(count)]
    assert np.array_equal(dtw(a, b, mode=mode).scores, dtw(a, b, mode=mode, device="cuda").scores)
    a = [rng.normal(size=x.size) for x in a[:4]]
    b = [rng.normal(size=x.size) for x in b[:4]]
    # the same additions in the same order: equal, not just close
    assert np.array_equal(dtw(a, b, mode=mode).scores, dtw(a, b, mode=mode, device="cuda").scores)


@pytest.mark.gpu
def test_gpu_refuses_what_it_cannot_run_exactly():
    with pytest.raises(InputError, match="on the GPU"):
        dtw([np.array([1.5])], [np.array([2.5])], window=3, device="cuda")
    with pytest.raises(InputError, match="on the GPU"):
        align(["A" * 10], ["C" * 10], costs=Costs.seed(0, 2**28, 2**28, 2**28), device="cuda")


@pytest.mark.gpu
def test_gpu_cli_equals_cpu(tmp_path):
    fasta = tmp_path / "x.fa"
    rng = np.random.default_rng(3)
    fasta.write_text("".join(f">s{k}\n{''.join(rng.choice(list('ACGT'), 300 + k))}\n" for k in range(9)))
    outputs = []
    for device in ("cpu", "cuda"):
        done = run_cli("align", str(fasta), "--all-vs-all", "--costs", "0,1,1,2", "--device", device, "-q")
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == 1 + 36


@pytest.mark.gpu
def test_gpu_length_10000_and_real_data(rng):
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


@pytest.fixture
def long_kernel_calls(monkeypatch):
    """Makes every pair with a query over 100 rows take the long-pair kernel (one warp per chunk of 32 R rows),
    with launches of a few pairs each; returns the list of the strip sizes it was launched with, by either host
    path (the general one, or the one for calls of long pairs only with small sides)."""
    from seqcompare.align import gpu

    calls = []
    launch, few = gpu._launch_long, gpu._few_long_pairs

    def spy(*args):
        calls.append(args[6])  # rows
        return launch(*args)

    def few_spy(*args):
        calls.append(args[12])  # rows
        return few(*args)

    monkeypatch.setattr(gpu, "LONG_QUERY_ROWS", 100)
    monkeypatch.setattr(gpu, "_LONG_BORDER_BYTES", 200_000)
    monkeypatch.setattr(gpu, "_launch_long", spy)
    monkeypatch.setattr(gpu, "_few_long_pairs", few_spy)
    return calls


@pytest.mark.gpu
@pytest.mark.parametrize("few_long_path", [True, False])
@pytest.mark.parametrize("rows", [4, 8, 16, 32])
def test_gpu_long_pairs_over_many_warps_equal_the_cpu(rng, monkeypatch, long_kernel_calls, rows, few_long_path):
    from seqcompare.align import gpu

    monkeypatch.setattr(gpu, "LONG_STRIP", rows)
    if few_long_path:  # every call of these long pairs takes the packed path (the budget: one launch)
        monkeypatch.setattr(gpu, "_LONG_BORDER_BYTES", 1 << 30)
    else:  # the general path: the rows passed between chunks in launches of a few pairs
        monkeypatch.setattr(gpu, "_few_long_pairs_fit", lambda *args: False)
    chunk = 32 * rows
    # queries at, around and well past the chunk edges; targets from one base up
    # (the interior steps of two columns run from step 32 to where lane 0 reaches column m - 1: none for 33
    # columns, one block of 16 steps for 97; odd and even targets end the two columns of a step apart)
    q_lengths = [101, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk, 3 * chunk + 7, 2500, 2600, 1000]
    t_lengths = [1, 2, 31, 33, 701, 2048, 2600, 1500, 97]
    targets = ["".join(rng.choice(list("ACGTN"), k)) for k in t_lengths]
    queries = ["".join(rng.choice(list("ACGTN"), k)) for k in q_lengths]
    queries[-1] = targets[-1][:1200] + queries[-1][1200:]  # a related pair: a low-cost path through the middle
    for costs in (Costs.seed(0, 3, 2, 5), Costs.seed(-2, 1, 1, 3), Costs.scores(2, -3, -5, -2), AFFINE,
                  COSTS["matrix"]):  # fmt: skip
        cpu = align(targets, queries, costs=costs)
        assert np.array_equal(cpu.scores, align(targets, queries, costs=costs, device="cuda").scores)
    a = [rng.integers(-50, 50, k) for k in t_lengths]
    b = [rng.integers(-50, 50, k) for k in q_lengths]
    for mode in ("full", "open-end", "subsequence"):
        for dtype in (np.int16, np.int32, np.int64, np.float32, np.float64):
            if np.dtype(dtype).kind == "f":
                x, y = [rng.normal(size=v.size).astype(dtype) for v in a], [rng.normal(size=v.size).astype(dtype) for v in b]
            else:
                x, y = [v.astype(dtype) for v in a], [v.astype(dtype) for v in b]
            expected = dtw(x, y, mode=mode).scores
            assert np.array_equal(expected, dtw(x, y, mode=mode, device="cuda").scores), (mode, dtype)
    assert long_kernel_calls == [rows] * (5 + 3 * 5)  # every call took the long-pair kernel


@pytest.mark.gpu
def test_gpu_calls_of_few_long_pairs_share_sides_and_check_first(rng, monkeypatch):
    """The packed path for calls of long pairs only: one side read as both (all against all), calls one after
    another reusing its buffer, and a failed range check raised with no scores returned."""
    from seqcompare.align import gpu

    taken = []
    packed = gpu._few_long_pairs
    monkeypatch.setattr(gpu, "LONG_QUERY_ROWS", 100)
    monkeypatch.setattr(gpu, "_few_long_pairs", lambda *args: taken.append(args[11]) or packed(*args))  # shared
    lengths = [300, 450, 1000]
    codes = rng.integers(0, 4, sum(lengths)).astype(np.uint8)
    off = np.r_[0, np.cumsum(lengths)]
    plan = np.array([[i, j] for i in range(3) for j in range(3)])
    text = ["".join("ACGT"[c] for c in codes[a:b]) for a, b in zip(off[:-1], off[1:])]
    expected = align(text, text, costs=Costs.seed(0, 2, 3, 3), pairs=plan).scores
    for q_codes, q_off in ((codes, off), (codes.copy(), off.copy())):
        found = gpu.dp_on_gpu(0, codes, off, q_codes, q_off, plan, match=0, mismatch=2, ins=3, dele=3, check=True)
        assert np.array_equal(found, expected)
    signals = [np.cumsum(rng.integers(-3, 4, k)).astype(np.int32) for k in (150, 700, 2000)]
    for mode in ("full", "subsequence"):
        assert np.array_equal(dtw(signals, signals, mode=mode, device="cuda").scores,
                              dtw(signals, signals, mode=mode).scores)  # fmt: skip
    assert taken[:2] == [True, False] and len(taken) == 4  # every call took the packed path
    wide = [v.astype(np.int64) * (1 << 27) for v in signals]
    with pytest.raises(InputError, match="on the GPU"):
        dtw(wide, wide, device="cuda")
    assert len(taken) == 5


@pytest.mark.gpu
def test_gpu_pairs_of_100000_are_exact(rng):
    from seqcompare.align import gpu

    target = rng.integers(0, 4, 100_000).astype(np.uint8)
    query = target.copy()
    changed = rng.choice(target.size, 400, replace=False)
    query[changed] = (query[changed] + 1) % 4  # 400 substitutions, cost 2 each: cheaper than a gap of 3 twice
    query = np.concatenate([query[:30_000], query[30_010:], [0, 1, 2]])  # 10 bases out, 3 in: a length 99,993
    costs = Costs.seed(0, 2, 3, 3)
    text = ["".join("ACGT"[c] for c in p) for p in (target, query)]
    gpu_scores = align(text[:1], text[1:], costs=costs, device="cuda").scores
    assert gpu_scores[0] <= 400 * 2 + 13 * 3  # a path of that cost exists
    assert np.array_equal(gpu_scores, align(text[:1], text[1:], costs=costs).scores)  # 10^10 cells on the CPU
    assert gpu.LONG_QUERY_ROWS < 99_993
    signal = np.cumsum(rng.integers(-3, 4, 100_000)).astype(np.int32)
    other = np.cumsum(rng.integers(-3, 4, 100_000)).astype(np.int32)
    assert np.array_equal(dtw([signal], [other]).scores, dtw([signal], [other], device="cuda").scores)


@pytest.mark.parametrize("mode", ["full", "open-end", "subsequence"])
def test_float32_dtw_is_bit_equal_to_a_float32_oracle(rng, device, mode):
    a = [rng.normal(scale=100, size=rng.integers(1, 40)).astype(np.float32) for _ in range(25)]
    b = [rng.normal(scale=100, size=rng.integers(1, 40)).astype(np.float32) for _ in range(25)]
    result = dtw(a, b, mode=mode, device=device)
    assert result.scores.dtype == np.float32
    expected = [dtw_reference(x, y, mode=mode, float32=True) for x, y in zip(a, b)]
    assert result.scores.tolist() == [float(v) for v in expected]
    # float64 sums of the same values differ: the float32 path is not float64 rounded at the end
    wide = dtw([x.astype(np.float64) for x in a], [y.astype(np.float64) for y in b], mode=mode, device=device)
    assert wide.scores.dtype == np.float64 and not np.array_equal(wide.scores.astype(np.float32), result.scores)


@pytest.mark.parametrize("mode", ["full", "open-end", "subsequence"])
def test_float32_dtw_at_the_extremes_of_the_range(rng, device, mode):
    # Ties of exact zeros, subnormal steps, and costs that overflow to +inf (|3e38 - -3e38|): the GPU takes the
    # three-way minimum of float32 cells on their bits as integers, which is exact only for cells that are +0,
    # positive or +inf. Series of 40-120 values also run the kernel's interior loop (past 32 columns).
    palette = np.array([0.0, 0.0, 1e-45, -1e-45, 1.0, -1.0, 3e38, -3e38, 1e30], np.float32)
    a = [palette[rng.integers(0, palette.size, rng.integers(40, 121))] for _ in range(12)]
    b = [palette[rng.integers(0, palette.size, rng.integers(40, 121))] for _ in range(12)]
    a[0] = b[0] = np.zeros(64, np.float32)  # every cell on the diagonal +0
    b[1] = -a[1]
    result = dtw(a, b, mode=mode, device=device)
    with np.errstate(over="ignore"):
        expected = [dtw_reference(x, y, mode=mode, float32=True) for x, y in zip(a, b)]
    assert result.scores.dtype == np.float32
    assert [v.view(np.uint32) for v in result.scores] == [np.float32(v).view(np.uint32) for v in expected]
    assert np.isinf(result.scores).any() and (result.scores == 0).any()  # both ends of the range were reached


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.float32, np.float64])  # fmt: skip
def test_dtw_of_2d_arrays_in_their_own_dtype(rng, device, dtype):
    if np.dtype(dtype).kind == "f":
        a, b = rng.normal(size=(12, 30)).astype(dtype), rng.normal(size=(12, 30)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        low, high = max(info.min, -1000), min(info.max, 1000)
        a, b = rng.integers(low, high, (12, 30), endpoint=True).astype(dtype), rng.integers(low, high, (12, 30)).astype(dtype)
    result = dtw(a, b, device=device)
    single = np.dtype(dtype) == np.float32
    expected = [dtw_reference(x.tolist(), y.tolist(), float32=single) for x, y in zip(a, b)]
    if np.dtype(dtype).kind == "f":
        assert result.scores.dtype == dtype
        assert result.scores.tolist() == [float(v) for v in expected]
    else:
        assert result.scores.dtype == np.int64 and result.scores.tolist() == expected
    # the same rows given as a list of arrays, and a Fortran-ordered copy, give the same scores
    assert np.array_equal(dtw(list(a), list(b), device=device).scores, result.scores)
    assert np.array_equal(dtw(np.asfortranarray(a), np.asfortranarray(b), device=device).scores, result.scores)


@pytest.mark.parametrize("mode", ["full", "subsequence"])
def test_one_query_against_a_database(rng, device, mode):
    database = rng.integers(-100, 100, (40, 50)).astype(np.int32)
    query = rng.integers(-100, 100, 20).astype(np.int32)
    # the query as the second argument: it is the series that may match a stretch of each database row
    found = dtw(database, query, mode=mode, device=device)
    assert found.pairs.tolist() == [[k, 0] for k in range(40)]
    assert found.scores.tolist() == [dtw_reference(row, query, mode=mode) for row in database]
    # either side may hold the one series
    flipped = dtw(query, database, mode=mode, device=device)
    assert flipped.pairs.tolist() == [[0, k] for k in range(40)]
    assert flipped.scores.tolist() == [dtw_reference(query, row, mode=mode) for row in database]
    with pytest.raises(InputError, match="one of either"):
        dtw(database[:3], database[:2], device=device)


def test_align_reads_2d_uint8_codes_in_place(rng, device):
    targets = rng.integers(0, 5, (30, 60)).astype(np.uint8)
    queries = rng.integers(0, 5, (30, 60)).astype(np.uint8)
    as_text = lambda rows: ["".join("ACGTN"[c] for c in row) for row in rows]  # noqa: E731
    costs = Costs.seed(0, 1, 1, 2)
    result = align(targets, queries, costs=costs, device=device)
    assert np.array_equal(result.scores, align(as_text(targets), as_text(queries), costs=costs, device=device).scores)
    assert result.scores.tolist() == [nw_reference(t, q, costs) for t, q in zip(targets, queries)]
    # one sequence against many
    one = align(targets[:1], queries, costs=costs, device=device)
    assert one.scores.tolist() == [nw_reference(targets[0], q, costs) for q in queries]
    bad = queries.copy()
    bad[7, 3] = 65  # a letter, not a code: refused wherever the codes are read
    with pytest.raises(InputError, match="0..4"):
        align(targets, bad, costs=costs, device=device)
    with pytest.raises(InputError, match="uint8"):
        align(targets.astype(np.int32), device=device)


@pytest.mark.gpu
def test_gpu_checks_values_where_it_reads_them():
    wide = [np.array([0, 2**26] * 20), np.array([2**26, 0] * 20)]
    assert dtw(wide[:1], wide[1:]).scores.tolist() == [dtw_reference(wide[0], wide[1])]
    with pytest.raises(InputError, match="2\\*\\*29"):
        dtw(wide[:1], wide[1:], device="cuda")
    # "auto" runs on the CPU, exactly, what the GPU's 32-bit DP refuses
    assert dtw(wide[:1], wide[1:], device="auto").scores.tolist() == [dtw_reference(wide[0], wide[1])]
    signals = np.ones((3, 8), np.float32)
    signals[2, 5] = np.nan
    with pytest.raises(InputError, match="NaN"):
        dtw(signals, signals[::-1].copy(), device="cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("route", ["staging", "in place"])
def test_gpu_checks_every_piece_of_large_sides(rng, monkeypatch, route):
    # Sides in many pieces, each folded into the checks on the device: a bad value in the first, a middle or the
    # last piece of either side is found, past int32 too, and good values pass with the CPU's scores.
    from seqcompare.align import gpu

    monkeypatch.setattr(gpu, "_STREAM_FROM", 0)
    monkeypatch.setattr(gpu, "_MIN_PIECE_PAIRS", 500)
    monkeypatch.setattr(gpu, "_PIECE_BYTES", 4000)
    monkeypatch.setattr(gpu, "NARROW_IN_TRANSIT", False)
    monkeypatch.setattr(gpu, "PIN_IN_PLACE", route == "in place")
    monkeypatch.setattr(gpu, "_PIN_IN_PLACE_FROM", 0)
    count, width = 4000, 16
    cases = [(np.int32, 2**30, "2\\*\\*29"), (np.int32, -(2**31), "2\\*\\*29"), (np.int64, 2**40, "2\\*\\*29"),
             (np.int64, -(2**40), "2\\*\\*29"), (np.int16, -(2**15), None), (np.float32, np.nan, "NaN"),
             (np.float64, -np.inf, "NaN"), (np.uint8, 5, "0..4")]  # fmt: skip
    for dtype, bad, message in cases:
        high = 5 if dtype == np.uint8 else 100
        sides = [rng.integers(0, high, (count, width)).astype(dtype) for _ in range(2)]
        call = align if dtype == np.uint8 else dtw
        assert np.array_equal(call(*sides, device="cuda").scores, call(*sides).scores), dtype
        for side, row, column in [(0, 0, 0), (1, count // 2, 3), (1, count - 1, width - 1), (0, count - 1, 0)]:
            spoiled = [values.copy() for values in sides]
            spoiled[side][row, column] = bad
            if message is None:  # int16's extreme is within the DP's range
                assert np.array_equal(call(*spoiled, device="cuda").scores, call(*spoiled).scores)
                continue
            with pytest.raises(InputError, match=message):
                call(*spoiled, device="cuda")


@pytest.fixture(params=["staging", "in place", "narrowed"])
def upload_route(request, monkeypatch):
    """How sides paired in order go up: through page-locked staging buffers, or page-locked where they lie
    (every side, however small, so that pieces start and end inside pages), or (int32 and int64 that fit) as
    int16 through staging buffers (every side, however small, in pieces)."""
    from seqcompare.align import gpu

    monkeypatch.setattr(gpu, "NARROW_IN_TRANSIT", request.param == "narrowed")
    monkeypatch.setattr(gpu, "PIN_IN_PLACE", request.param == "in place")
    monkeypatch.setattr(gpu, "_PIN_IN_PLACE_FROM", 0)
    if request.param == "narrowed":
        from seqcompare.cuda.runtime import prepare_narrowing

        monkeypatch.setattr(gpu, "_STREAM_FROM", 0)
        prepare_narrowing()  # else the first call in a process would not narrow
    return request.param


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.float32, np.float64])
def test_gpu_pieces_and_streams_equal_the_cpu(rng, dtype, upload_route):
    # Enough pairs for several pieces on several streams; lengths that mix strip sizes within a piece.
    count = 20000
    lengths = np.where(rng.random(count) < 0.5, 20, rng.integers(1, 300, count))
    a = [(rng.normal(size=n) * 50).astype(dtype) for n in lengths]
    b = [(rng.normal(size=n) * 50).astype(dtype) for n in lengths[::-1]]
    assert np.array_equal(dtw(a, b).scores, dtw(a, b, device="cuda").scores)
    square = (rng.normal(size=(count, 40)) * 50).astype(dtype)
    other = (rng.normal(size=(count, 40)) * 50).astype(dtype)
    assert np.array_equal(dtw(square, other).scores, dtw(square, other, device="cuda").scores)
    assert np.array_equal(dtw(square, other[0]).scores, dtw(square, other[0], device="cuda").scores)
    codes = rng.integers(0, 5, (count, 300)).astype(np.uint8)
    partners = rng.integers(0, 5, (count, 300)).astype(np.uint8)
    assert np.array_equal(align(codes, partners).scores, align(codes, partners, device="cuda").scores)


def registers(cupy, array) -> bool:
    """Whether CUDA page-locks ``array`` (and then unlocks it): False while some page of it is locked already."""
    try:
        cupy.cuda.runtime.hostRegister(array.ctypes.data, array.nbytes, 0)
    except cupy.cuda.runtime.CUDARuntimeError:
        return False
    cupy.cuda.runtime.hostUnregister(array.ctypes.data)
    return True


@pytest.mark.gpu
def test_gpu_pages_locked_in_place_are_unlocked_and_refusals_fall_back(rng, monkeypatch):
    cupy = pytest.importorskip("cupy")
    from seqcompare.align import gpu

    monkeypatch.setattr(gpu, "_PIN_IN_PLACE_FROM", 0)
    monkeypatch.setattr(gpu, "NARROW_IN_TRANSIT", False)  # these int32 fit int16, and would go up narrowed
    monkeypatch.setattr(gpu, "_STREAM_FROM", 0)  # sides of 1.5 MB, streamed in pieces all the same
    monkeypatch.setattr(gpu, "_PIECE_BYTES", 1 << 16)
    monkeypatch.setattr(gpu, "_MIN_PIECE_PAIRS", 1000)  # 10 pieces, each ending inside a page
    a = rng.integers(0, 1000, (10000, 37)).astype(np.int32)
    b = rng.integers(0, 1000, (10000, 37)).astype(np.int32)
    expected = np.array([dtw_reference(x, y) for x, y in zip(a[:50], b[:50])])
    registered = []
    original = gpu._InPlace.release

    def counted(self):
        registered.append(len(self.ranges))
        original(self)

    monkeypatch.setattr(gpu._InPlace, "release", counted)
    scores = dtw(a, b, device="cuda").scores
    assert registered == [10, 10] and np.array_equal(scores[:50], expected)
    gpu.wait_for_unlocking()  # calls return before their pages are unlocked (gpu.DEFER_UNLOCKING)
    assert registers(cupy, a) and registers(cupy, b)  # every range was unlocked
    # two sides that share a page (one buffer): only whole pages inside each are locked, so neither refuses
    buffer = np.empty(1 + a.size + b.size, np.int32)
    near_a, near_b = buffer[1 : 1 + a.size].reshape(a.shape), buffer[1 + a.size :].reshape(b.shape)
    near_a[...], near_b[...] = a, b
    registered.clear()
    assert np.array_equal(dtw(near_a, near_b, device="cuda").scores, scores)
    assert registered == [10, 10]
    # a side the caller has locked already goes up straight from it (nothing registered here), and stays locked
    cupy.cuda.runtime.hostRegister(a.ctypes.data, a.nbytes, 0)
    try:
        routes = []
        original_route = gpu._route
        monkeypatch.setattr(gpu, "_route", lambda *args: routes.append(original_route(*args)) or routes[-1])
        registered.clear()
        assert np.array_equal(dtw(a, b, device="cuda").scores, scores)
        assert registered == [10] and [type(route).__name__ for route in routes] == ["_Locked", "_InPlace"]
        assert routes[0].fallback is None and not registers(cupy, a)
    finally:
        cupy.cuda.runtime.hostUnregister(a.ctypes.data)
    # an array from seqcompare.cuda.locked_empty, a whole search database, the same way
    from seqcompare.cuda import locked_empty

    database = locked_empty(a.shape, a.dtype)
    database[...] = a
    routes.clear()
    assert np.array_equal(dtw(database, b[0], device="cuda").scores, dtw(a, b[0], device="cuda").scores)
    assert type(routes[0]).__name__ == "_Locked" and routes[0].fallback is None
    # a failed check still unlocks every range
    bad = a.astype(np.float32)
    bad[9999, 3] = np.nan
    with pytest.raises(InputError, match="NaN"):
        dtw(bad, b.astype(np.float32), device="cuda")
    gpu.wait_for_unlocking()
    assert registers(cupy, bad)


@pytest.mark.gpu
@pytest.mark.parametrize("deferred", [True, False])
def test_gpu_calls_return_before_their_pages_are_unlocked_and_the_next_call_waits(rng, monkeypatch, deferred):
    # With DEFER_UNLOCKING, a call's ranges are unlocked on a background thread after it returns. A second call on
    # the same arrays at once must neither find them locked already (it would take them for the caller's own
    # page-locked memory) nor fail to lock them; both calls equal the CPU, and every page is unlocked in the end.
    cupy = pytest.importorskip("cupy")
    from seqcompare.align import gpu

    monkeypatch.setattr(gpu, "DEFER_UNLOCKING", deferred)
    monkeypatch.setattr(gpu, "_PIN_IN_PLACE_FROM", 0)
    monkeypatch.setattr(gpu, "NARROW_IN_TRANSIT", False)
    monkeypatch.setattr(gpu, "_STREAM_FROM", 0)
    monkeypatch.setattr(gpu, "_PIECE_BYTES", 1 << 16)
    monkeypatch.setattr(gpu, "_MIN_PIECE_PAIRS", 1000)
    a = rng.integers(0, 1000, (10000, 37)).astype(np.int32)
    b = rng.integers(0, 1000, (10000, 37)).astype(np.int32)
    expected = dtw(a, b).scores
    routes = []
    original_route = gpu._route
    monkeypatch.setattr(gpu, "_route", lambda *args: routes.append(original_route(*args)) or routes[-1])
    for _ in range(3):
        assert np.array_equal(dtw(a, b, device="cuda").scores, expected)
        # a view that shares pages with a side: waits for them too, and is read right
        assert np.array_equal(dtw(a[5000:], b[5000:], device="cuda").scores, expected[5000:])
    assert {type(route).__name__ for route in routes} == {"_InPlace"}
    assert all(route.fallback is None for route in routes)
    gpu.wait_for_unlocking()
    assert registers(cupy, a) and registers(cupy, b) and not gpu._UNLOCKER.failures


@pytest.mark.gpu
def test_gpu_narrows_wide_integers_in_transit_and_starts_again_where_they_do_not_fit(rng, monkeypatch):
    from seqcompare.align import gpu
    from seqcompare.cuda.runtime import prepare_narrowing

    prepare_narrowing()

    monkeypatch.setattr(gpu, "_STREAM_FROM", 0)
    monkeypatch.setattr(gpu, "_PIECE_BYTES", 1 << 16)
    monkeypatch.setattr(gpu, "_MIN_PIECE_PAIRS", 1000)  # 10 pieces a call
    narrowed = []  # the dtype of each piece narrowed on its way up
    original = gpu._Narrowing._fill
    monkeypatch.setattr(gpu._Narrowing, "_fill",
                        lambda self, staged, source: narrowed.append(source.dtype) or original(self, staged, source))  # fmt: skip
    a = rng.integers(-(1 << 15), 1 << 15, (10000, 37))  # int16's whole range
    b = rng.integers(-(1 << 15), 1 << 15, (10000, 37))
    a[0, 0], b[1, 1] = -(1 << 15), (1 << 15) - 1
    expected = np.array([dtw_reference(x, y) for x, y in zip(a[:40], b[:40])])
    as_int16 = dtw(a.astype(np.int16), b.astype(np.int16), device="cuda").scores
    assert np.array_equal(as_int16[:40], expected)
    for dtype in (np.int32, np.int64):
        narrowed.clear()
        scores = dtw(a.astype(dtype), b.astype(dtype), device="cuda").scores
        assert narrowed == [np.dtype(dtype)] * 20, narrowed
        assert np.array_equal(scores, as_int16)
        narrowed.clear()  # a database against one query (narrowed on the host: it goes up in one copy)
        search = dtw(a.astype(dtype), b[7].astype(dtype), device="cuda").scores
        assert narrowed == [np.dtype(dtype)] * 10, narrowed
        assert np.array_equal(search, dtw(a.astype(np.int16), b[7].astype(np.int16), device="cuda").scores)
        assert search[3] == dtw_reference(a[3], b[7])
    # one value past int16 in the last piece: that piece refuses, and the call starts again in int32
    wide, partner = a.astype(np.int32), b.astype(np.int32)
    wide[-1, -1] = 1 << 15
    narrowed.clear()
    scores = dtw(wide, partner, device="cuda").scores
    assert len(narrowed) == 19  # both sides' first nine pieces, then the first side's last
    assert np.array_equal(scores[:-1], as_int16[:-1]) and scores[-1] == dtw_reference(wide[-1], partner[-1])
    # a failed range check of narrowed values raises, as it does for values in their own dtype
    long_a, long_b = np.full((2, 9000), -(1 << 15), np.int32), np.full((2, 9000), (1 << 15) - 1, np.int32)
    with pytest.raises(InputError, match="2\\*\\*29"):
        dtw(long_a, long_b, device="cuda")
    # int32 sides that lock in place go up as they are (quicker than narrowing them); int64 ones narrowed
    monkeypatch.setattr(gpu, "_PIN_IN_PLACE_FROM", 0)
    for dtype, pieces in ((np.int32, 0), (np.int64, 20)):
        narrowed.clear()
        assert np.array_equal(dtw(a.astype(dtype), b.astype(dtype), device="cuda").scores, as_int16)
        assert len(narrowed) == pieces
    # a side held page-locked goes up from where it lies, in its own dtype: nothing is narrowed
    from seqcompare.cuda import locked_empty

    locked_a, locked_b = locked_empty(a.shape, np.int32), locked_empty(b.shape, np.int32)
    locked_a[...], locked_b[...] = a, b
    narrowed.clear()
    assert np.array_equal(dtw(locked_a, locked_b, device="cuda").scores, as_int16) and narrowed == []


def test_narrowing_is_ready_only_where_numba_has_started(monkeypatch):
    from seqcompare import _jit
    from seqcompare.cuda import runtime

    monkeypatch.setattr(runtime, "_NARROWING", {})
    monkeypatch.setattr(_jit, "compiler_started", lambda: False)  # a process where Numba has not started
    assert runtime.narrowing_ready() is False and runtime._NARROWING == {}  # nothing loaded, nothing started
    monkeypatch.setattr(_jit, "compiler_started", lambda: True)  # Numba runs already: loading costs little
    assert runtime.narrowing_ready() is True
    monkeypatch.setattr(_jit, "compiler_started", lambda: False)
    assert runtime.narrowing_ready() is True  # loaded: ready from then on
    monkeypatch.setattr(runtime, "_NARROWING", {})
    runtime.prepare_narrowing()
    assert runtime.narrowing_ready() is True


def test_narrowing_copy_equals_a_plain_cast_or_refuses(rng, monkeypatch):
    from seqcompare.cuda import runtime

    for threads in (1, 3):
        monkeypatch.setattr(runtime, "COPY_THREADS", threads)
        for size in (0, 1, 2, 1000, (1 << 18) * 3 + 5):
            for dtype in (np.int32, np.int64):
                values = rng.integers(-(1 << 15), 1 << 15, size).astype(dtype)
                values[rng.permutation(size)[:2]] = [-(1 << 15), (1 << 15) - 1][: min(size, 2)]  # both ends
                destination = np.full(size, 7, np.int16)
                found = runtime.narrow_in_parallel(destination, values)
                plain = [int(v) for v in values]
                assert found == ((min(plain), max(plain)) if plain else (0, 0))
                assert destination.tolist() == plain
                for past in (-(1 << 15) - 1, 1 << 15, 1 << 40):
                    if size == 0 or (dtype == np.int32 and past == 1 << 40):
                        continue
                    spoiled = values.copy()
                    spoiled[int(rng.integers(0, size))] = past
                    assert runtime.narrow_in_parallel(np.empty(size, np.int16), spoiled) is None


@pytest.mark.parametrize("device", DEVICES)
def test_cli_dtw_query_against_a_float32_database(tmp_path, rng, device):
    database = rng.normal(size=(30, 40)).astype(np.float32)
    np.save(tmp_path / "db.npy", database)
    queries = rng.normal(size=(2, 25))
    (tmp_path / "q.csv").write_text("\n".join(",".join(repr(float(v)) for v in row) for row in queries) + "\n")
    done = run_cli("dtw", "--query", str(tmp_path / "q.csv"), str(tmp_path / "db.npy"), "--device", device, "-q")
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()[1:]]
    assert len(rows) == 60
    for i, j, value in rows:
        # a text query of a float32 database is read as float32, and the distance printed as float32 reads back
        expected = dtw_reference(database[int(i)], queries[int(j)].astype(np.float32), float32=True)
        assert np.float32(value) == expected
    both = run_cli("dtw", str(tmp_path / "db.npy"), str(tmp_path / "q.csv"), "--query", str(tmp_path / "q.csv"))
    assert both.returncode != 0 and "not both" in both.stderr


class _FakeDevice:
    """Enough of CuPy for the GPU DP's upload routes on a machine without a GPU: device arrays are NumPy arrays,
    and host copies behave as CUDA's do: a copy from page-locked memory must lie inside one registration
    (else cudaErrorInvalidValue), and a page may be registered once."""

    class CUDARuntimeError(RuntimeError):
        pass

    uint8 = np.uint8

    cudaDevAttrHostRegisterReadOnlySupported = 113  # noqa: N815 (CUDA's names)

    def __init__(self, page: int, refuse_after: int | None = None, read_only_supported: bool = True):
        self.page = page
        self.refuse_after = refuse_after  # registrations CUDA accepts before it refuses the next
        self.read_only_supported = read_only_supported
        self.ranges = {}  # start -> end, registered
        self.flags = []  # of each registration asked for
        self.attempts = 0
        self.copies = []
        self.cuda = self
        self.runtime = self
        self.id = 0

    def Device(self, device=None):  # noqa: N802
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def deviceGetAttribute(self, attribute, device):  # noqa: N802
        assert attribute == 113 and device == 0
        return int(self.read_only_supported)

    def hostRegister(self, start, size, flags):  # noqa: N802 (CUDA's names)
        assert start % self.page == 0 and size % self.page == 0 and size > 0
        self.flags.append(flags)
        self.attempts += 1
        if self.refuse_after is not None and len(self.ranges) >= self.refuse_after:
            raise self.CUDARuntimeError("cudaErrorHostMemoryAlreadyRegistered")
        assert all(end <= start or start + size <= other for other, end in self.ranges.items())
        self.ranges[start] = start + size

    def hostUnregister(self, start):  # noqa: N802
        del self.ranges[start]

    def pointerGetAttributes(self, address):  # noqa: N802
        class Attributes:
            type = int(any(start <= address < end for start, end in self.ranges.items()))  # 1: page-locked

        return Attributes()

    def Event(self):  # noqa: N802
        class Event:
            def record(self, stream=None):
                pass

            def synchronize(self):
                pass

        return Event()

    def array(self, values):
        fake = self

        class DeviceArray:
            def __init__(self, data):
                self.data = data

            def reshape(self, *shape):
                return DeviceArray(self.data.reshape(*shape))

            def view(self, dtype):
                return DeviceArray(self.data.view(dtype))

            def __getitem__(self, index):
                return DeviceArray(self.data[index])

            def set(self, source, stream=None):
                lo = source.ctypes.data
                hi = lo + source.nbytes
                inside = [start for start, end in fake.ranges.items() if start < hi and lo < end]
                if inside and not (len(inside) == 1 and inside[0] <= lo and hi <= fake.ranges[inside[0]]):
                    raise fake.CUDARuntimeError("cudaErrorInvalidValue")  # locked pages: one registration's
                fake.copies.append((lo, hi, bool(inside)))
                self.data[...] = source

        return DeviceArray(values)


@pytest.mark.parametrize("refuse_after, read_only, deferred, chunk_pages",
                         [(None, True, True, 4096), (0, True, True, 4096), (3, True, False, 4096),
                          (None, False, True, 4096), (None, True, False, 4096), (None, True, True, 3),
                          (5, True, True, 2)])  # fmt: skip
def test_pieces_locked_in_place_go_up_whole_and_within_their_registrations(rng, monkeypatch, refuse_after, read_only,
                                                                           deferred, chunk_pages):  # fmt: skip
    # The host side of the in-place route, without a GPU: random pieces of an array that starts and ends off page
    # boundaries, copied as CUDA allows, every byte arriving, every range unlocked (on the background thread
    # where deferred); a refusal falls back to staging. Ranges are registered read-only
    # (cudaHostRegisterReadOnly, 8) where the device supports it, else plainly; in chunks of ``chunk_pages``,
    # each piece taking one chunk at most, or several.
    from seqcompare.align import gpu
    from seqcompare.cuda import runtime

    monkeypatch.setattr(gpu, "DEFER_UNLOCKING", deferred)
    page = 4096
    monkeypatch.setattr(gpu, "_PAGE", page)
    monkeypatch.setattr(gpu, "_REGISTER_BYTES", chunk_pages * page)
    monkeypatch.setattr(gpu, "pinned_empty", lambda shape, dtype: np.empty(shape, dtype))
    monkeypatch.setattr(runtime, "_READ_ONLY_SUPPORTED", {})
    fake = _FakeDevice(page, refuse_after, read_only_supported=read_only)
    buffer = np.zeros(73 * page + 3000, np.uint8)
    values = buffer[1236 : 1236 + 70 * page + 100].view(np.int32)  # pieces and buffers are counted in values
    values[...] = rng.integers(-(2**31), 2**31, values.size)
    target = np.zeros_like(values)
    inner = (rng.choice(np.arange(1, 70), 8, replace=False) * page + rng.integers(-700, 700, 8)) // 4
    cuts = np.unique(np.r_[0, inner, values.size])
    route = gpu._InPlace(fake, values, 2, int(np.diff(cuts).max()))
    device = fake.array(target)
    for slot, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        route.upload(slot % 2, None, values[a:b], device[a:b])
    assert np.array_equal(target, values)
    first_page, last_page = -(-values.ctypes.data // page) * page, (values.ctypes.data + values.nbytes) // page * page
    inside = values.ctypes.data, values.ctypes.data + values.nbytes
    staged = sum(hi - lo for lo, hi, _ in fake.copies if not inside[0] <= lo < inside[1])
    assert (staged > 0) == (refuse_after is not None)  # from staging buffers only once CUDA has refused
    if refuse_after != 0:
        # whole pages inside the array only, from its first whole page on, and no gaps between them
        assert min(fake.ranges) == first_page and max(fake.ranges.values()) <= last_page
        spans = sorted(fake.ranges.items())
        assert all(end == start for (_, end), (start, _) in zip(spans[:-1], spans[1:]))
    assert (route.fallback is not None) == (refuse_after is not None and fake.attempts > refuse_after)
    assert refuse_after is None or fake.attempts == refuse_after + 1  # refused mid-way: then staging
    assert chunk_pages > 70 or refuse_after is not None or len(fake.ranges) > len(cuts)  # pieces in chunks
    assert all(end - start <= chunk_pages * page for start, end in fake.ranges.items())
    route.release()
    gpu.wait_for_unlocking()
    assert fake.ranges == {} and route.ranges == []
    assert fake.flags and set(fake.flags) == {8 if read_only else 0}
    # what went from locked pages and what did not: the array's partial end pages never did
    assert not any(locked for lo, hi, locked in fake.copies if hi <= first_page)


def test_strip_sizes_and_pair_lengths_equal_their_plain_forms(rng):
    # The GPU's strip size per pair (the smallest of STRIPS whose 32 R rows hold the query, else the largest) and
    # each pair's lengths (broadcasts where every series has one length), against plain NumPy.
    from seqcompare.align import gpu
    from seqcompare.align.plans import pair_lengths

    lengths = np.r_[0, 1, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 5000, rng.integers(0, 3000, 500)]
    plain = [min((r for r in gpu.STRIPS if 32 * r >= n), default=gpu.STRIPS[-1]) for n in lengths]
    assert gpu.strips_for(lengths).tolist() == plain
    assert gpu.strips_for(np.broadcast_to(np.int64(300), (7,))).tolist() == [16] * 7
    uniform = np.arange(41, dtype=np.int64) * 25
    ragged = np.r_[0, np.cumsum(rng.integers(0, 50, 40))]
    plans = [np.stack([np.arange(40), np.arange(40)], axis=1), np.stack([np.arange(40), np.full(40, 3)], axis=1),
             rng.integers(0, 40, (60, 2))]  # fmt: skip
    for t_off in (uniform, ragged):
        for q_off in (uniform, ragged):
            for plan in plans:
                t_len, q_len = pair_lengths(plan, t_off, q_off)
                assert np.array_equal(t_len, np.diff(t_off)[plan[:, 0]])
                assert np.array_equal(q_len, np.diff(q_off)[plan[:, 1]])


def test_pieces_cover_the_pairs_and_the_last_is_a_quarter_of_the_others(monkeypatch):
    from seqcompare.align import gpu

    monkeypatch.setattr(gpu, "_MIN_PIECE_PAIRS", 8192)
    monkeypatch.setattr(gpu, "_PIECE_BYTES", 16 << 20)
    assert gpu._pieces(5000, 40 << 20).tolist() == [0, 5000]  # too few pairs for two pieces
    assert gpu._pieces(0, 0).tolist() == [0, 0]
    for pairs, streamed in [(40000, 320_000_000), (16384, 64 << 20), (1 << 20, 4 << 30), (40000, 1 << 20)]:
        bounds = gpu._pieces(pairs, streamed)
        sizes = np.diff(bounds)
        assert bounds[0] == 0 and bounds[-1] == pairs and (sizes > 0).all()
        assert len(sizes) == min(max(-(-streamed // (16 << 20)), 2), pairs // 8192)
        assert abs(sizes[-1] - sizes[0] / 4) <= 1 and np.ptp(sizes[:-1]) <= 1


def test_deferred_unlocking_holds_the_array_and_blocks_only_callers_that_share_its_pages():
    # The background unlocking on its own, with a fake CUDA whose unregistering waits until the test lets it go.
    import threading
    import weakref

    from seqcompare.align import gpu

    release = threading.Event()

    class SlowDevice(_FakeDevice):
        def hostUnregister(self, start):  # noqa: N802 (CUDA's name)
            release.wait(10)
            if start == 0:
                raise self.CUDARuntimeError("cudaErrorHostMemoryNotRegistered")
            super().hostUnregister(start)

    fake = SlowDevice(4096)
    unlocker = gpu._DeferredUnlocking()
    side = np.zeros(8 * 4096, np.uint8)
    other = np.zeros(4096, np.uint8)
    fake.ranges[4096] = 8192
    unlocker.submit(fake, side, [[0, 4096, None], [4096, 8192, None]])  # the first range fails to unregister
    held = weakref.ref(side)
    view = side[100:200]
    del side
    assert held() is not None  # the job keeps the caller's memory alive

    def waited(array) -> bool:
        done = threading.Event()
        threading.Thread(target=lambda: (unlocker.wait_for(array), done.set()), daemon=True).start()
        return done.wait(0.3)

    assert waited(other)  # another array's pages: no wait
    assert not waited(view)  # a view of the side: waits for its pages
    release.set()
    unlocker.wait_for()
    assert fake.ranges == {4096: 8192} and len(unlocker.failures) == 1  # a failure stops only its own job
    assert waited(view)
    del view
    assert held() is None  # let go once unlocked
    unlocker.submit(fake, other, [[4096, 8192, None]])  # later jobs still run
    unlocker.wait_for()
    assert fake.ranges == {} and len(unlocker.failures) == 1
    unlocker.jobs.append([fake, other, [], 0])  # as a forked child finds its parent's pending job
    unlocker.forget()
    assert waited(other)


@pytest.mark.parametrize("spans_two", [False, True])
def test_a_side_locked_by_the_caller_goes_up_straight_from_it(rng, monkeypatch, spans_two):
    # Memory the caller has page-locked (seqcompare.cuda.locked_empty, say) is copied from where it lies, with no
    # staging and nothing registered or unregistered here; an array over two registrations, which CUDA will not
    # copy from in one piece, falls back to staging from the piece that CUDA refuses.
    from seqcompare.align import gpu

    page = 4096
    monkeypatch.setattr(gpu, "_PAGE", page)
    staged = []
    monkeypatch.setattr(gpu, "pinned_empty", lambda shape, dtype: staged.append(shape) or np.empty(shape, dtype))
    fake = _FakeDevice(page)
    buffer = np.zeros(20 * page, np.uint8)
    start = -(-buffer.ctypes.data // page) * page - buffer.ctypes.data
    values = buffer[start + 100 : start + 100 + 17 * page]
    values[...] = rng.integers(0, 256, values.size)
    region = buffer.ctypes.data + start
    if spans_two:
        fake.hostRegister(region, 9 * page, 0)
        fake.hostRegister(region + 9 * page, 9 * page, 0)
    else:
        fake.hostRegister(region, 18 * page, 0)
    callers = dict(fake.ranges)
    target = np.zeros_like(values)
    cuts = np.unique(np.r_[0, rng.integers(1, values.size, 6), values.size])
    route = gpu._route(fake, values, 2, int(np.diff(cuts).max()))
    assert isinstance(route, gpu._Locked)
    device = fake.array(target)
    for slot, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        route.upload(slot % 2, None, values[a:b], device[a:b])
    route.release()
    assert np.array_equal(target, values)
    assert fake.ranges == callers and fake.attempts == len(callers)  # the caller's, untouched; none added
    boundary = 9 * page - 100  # where the second registration begins, in values
    refused = spans_two and any(a < boundary < b for a, b in zip(cuts[:-1], cuts[1:]))
    assert refused == spans_two  # (the pieces drawn here do cross it)
    assert (route.fallback is not None) == refused and bool(staged) == refused
    assert all(locked for _, _, locked in fake.copies) != refused  # straight from locked memory, unless refused
    # an array in ordinary memory is not taken for locked
    assert not isinstance(gpu._route(fake, np.ones(10 * page, np.uint8), 2, page), gpu._Locked)


def test_plan_columns_are_recognised_and_stand_for_their_gathers(rng):
    # A search's fixed query column and a database in order are taken without gathering the plan's size of
    # lengths; every kind gives what the gather gives, and strip sizes from one broadcast length are the same.
    from seqcompare.align import gpu
    from seqcompare.align.plans import PlanColumn, uniform_step

    lengths = rng.integers(0, 3000, 50)
    cases = {"order": np.arange(50), "fixed": np.full(50, 7), "listed": rng.integers(0, 50, 50)}
    for kind, values in cases.items():
        column = PlanColumn(values, 50)
        assert column.kind == kind
        taken = column.take(lengths)
        assert np.array_equal(taken, lengths[values])
        assert np.array_equal(gpu.strips_for(taken), gpu.strips_for(lengths[values].copy()))
    assert PlanColumn(np.arange(49), 50).kind == "listed"  # in order, but not every series: not streamed whole
    assert PlanColumn(np.array([3]), 50).kind == "fixed"
    # offsets of series of one length (made on the device) and of any other
    assert uniform_step(np.arange(6) * 7) == 7 and uniform_step(np.zeros(3, np.int64)) == 0
    for offsets in ([0, 3, 5], [0], [0, 2, 4, 7], [0, 1, 3, 3], [1, 2, 3]):
        assert uniform_step(np.array(offsets)) is None


def test_long_strip_and_columns_follow_the_work():
    from seqcompare.align import gpu

    resident = 132 * 16  # an H200's warps at 16 a multiprocessor
    ten_thousand, hundred_thousand = np.full(20, 10_000), np.full(20, 100_000)
    # 400 chunks of 512 rows: an eighth of the resident warps and more
    assert [gpu.long_strip(ten_thousand, resident, kind=k) for k in (0, 1, 2, 3)] == [16, 16, 16, 16]
    assert gpu.long_strip(ten_thousand, resident, kind=1, value="float") == 16
    # 1,960 chunks of 1,024 rows: half the resident warps and more; DTW on 32-bit values stays at 16
    assert [gpu.long_strip(hundred_thousand, resident, kind=k) for k in (0, 2, 3)] == [32, 32, 32]
    assert gpu.long_strip(hundred_thousand, resident, kind=1, value="double") == 32
    assert gpu.long_strip(hundred_thousand, resident, kind=1, value="int") == 16
    assert gpu.long_strip(np.full(100, 5_000), resident, kind=0) == 16  # 500 chunks of 1,024 rows: too few for 32
    assert gpu.long_strip(np.full(2, 300), resident, kind=0) == 4  # too few units for any: the smallest
    # two columns a step: DTW on 32-bit values at strips up to 16; integers only with under 30% of the warps
    assert gpu.long_columns(1, "float", 16, 5_000, resident) == 2
    assert gpu.long_columns(1, "int", 16, 400, resident) == 2
    assert gpu.long_columns(1, "int", 16, 634, resident) == 1  # 634 of 2,112 warps: 30.0%
    assert gpu.long_columns(1, "int", 16, 633, resident) == 2
    assert [gpu.long_columns(1, v, 32, 100, resident) for v in ("int", "float")] == [1, 1]
    assert gpu.long_columns(1, "double", 16, 100, resident) == 1
    assert [gpu.long_columns(k, "int", 16, 100, resident) for k in (0, 2, 3)] == [1, 1, 1]
    # every choice names a kernel the call compiles
    for kind, value, stored in ((0, "int", "unsigned char"), (1, "int", "short"), (1, "float", "float"),
                                (1, "double", "double"), (2, "int", "unsigned char")):  # fmt: skip
        names = gpu._long_kernel_names(kind, value, stored)
        for rows in gpu.STRIPS:
            for units in (1, 400, 5_000):
                columns = gpu.long_columns(kind, value, rows, units, resident)
                assert f"dp_long<{rows},{kind},{value},{stored},{columns}>" in names
