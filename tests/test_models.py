"""Per-pair site counts and model distances (issue 18): comparable sites, p, JC69, K2P and TN93, and clusters.

Counts are checked exactly against the site-by-site oracle (``reference.model_counts_reference``, exact
fractions), distances against the oracle's own formulas, TN93 byte for byte against golden files veg/tn93 wrote
(tests/data/golden/tn93/make_golden.sh), and every backend (CPU tiles of any size, the GPU) against the CPU.
"""

import gzip
import os

import numpy as np
import pytest
from conftest import DATA, DEVICES

import seqcompare
from seqcompare.cli import main
from seqcompare.errors import InputError
from seqcompare.hamming import models
from seqcompare.hamming.api import encode_site_codes, run_model
from seqcompare.hamming.reference import model_counts_reference, model_distance_reference
from seqcompare.simulate import simulate_pol, write_fasta

GOLDEN = os.path.join(os.path.dirname(__file__), "data", "golden", "tn93")
TN93_ALPHABET = np.frombuffer(b"ACGTACGTACGTACGTURYSWKMBDHVN?-acgtn", dtype=np.uint8)


def related(rng, n, m, alphabet=TN93_ALPHABET, noise=0.08):
    """Related sequences over ``alphabet`` (a root with per-sequence noise), as strings."""
    root = alphabet[rng.integers(0, alphabet.size, m)]
    rows = np.repeat(root[None, :], n, axis=0)
    hit = rng.random((n, m)) < noise
    rows[hit] = alphabet[rng.integers(0, alphabet.size, int(hit.sum()))]
    return [row.tobytes().decode() for row in rows]


class Counts:
    """A reduction that keeps the raw count blocks (the work's blocks before the model), for exact checks."""

    kind = "matrix"
    accepts = ("matrix",)

    def __init__(self, n, p):
        self.symmetric = n == p
        self.counts = np.full((len(models.QUANTITIES), n, p), -1, dtype=np.int64)

    def reduce(self, tile, block):
        return tile, block

    def merge(self, partial):
        tile, block = partial
        self.counts[:, tile.row_start : tile.row_stop, tile.col_start : tile.col_stop] = block
        if self.symmetric and not tile.diagonal:  # the lower triangle's tiles, mirrored
            self.counts[:, tile.col_start : tile.col_stop, tile.row_start : tile.row_stop] = block.transpose(0, 2, 1)

    def finish(self):
        return self.counts


def each_unordered_pair(rows, oracle):
    """The square table of ``oracle(a, b)`` over ``rows``, computed once per unordered pair and mirrored: the
    models' oracles do not depend on the order of a pair (checked on its first pair here, and bit for bit on every
    pair of the tests' inputs when this was written), and they take 1-6 ms a pair."""
    assert np.array_equal(np.asarray(oracle(rows[0], rows[1])), np.asarray(oracle(rows[1], rows[0])), equal_nan=True)
    first = np.asarray(oracle(rows[0], rows[0]))
    table = np.empty((len(rows), len(rows), *first.shape), dtype=first.dtype)
    for i, a in enumerate(rows):
        for j in range(i + 1):
            table[i, j] = table[j, i] = oracle(a, rows[j])
    return table


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ambiguities", models.AMBIGUITIES)
def test_counts_equal_the_site_by_site_oracle(rng, device, ambiguities, monkeypatch):
    from seqcompare.hamming import pairstats

    # 33 rows: tiles of 16 leave one row, tiles of 13 leave seven; 14 right rows: one partial tile.
    left = related(rng, 33, 197)
    right = related(rng, 14, 197)
    left[3] = "-" * 197  # no comparable site
    left[4] = "N" * 197
    monkeypatch.setattr(pairstats.PairStatsWork, "finish_block", lambda self, counts: seqcompare.allpairs.to_host(counts[0]))
    codes = encode_site_codes(left, right, "tn93", False, "")
    got = run_model(codes, Counts(33, 14), model="tn93", ambiguities=ambiguities, tile_size=16, device=device)
    expected = np.array([[model_counts_reference(a, b, ambiguities) for b in right] for a in left])
    assert np.array_equal(got, expected.transpose(2, 0, 1))
    codes = encode_site_codes(left, None, "tn93", False, "")
    got = run_model(codes, Counts(33, 33), model="tn93", ambiguities=ambiguities, tile_size=13, device=device)
    expected = each_unordered_pair(left, lambda a, b: model_counts_reference(a, b, ambiguities))
    assert np.array_equal(got, expected.transpose(2, 0, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_counts_of_pairs_with_thousands_of_ambiguity_sites(rng, device, monkeypatch):
    # More ambiguity sites in a pair than a packed lane of the CPU kernel can sum at once (7,281): its lanes must
    # be emptied on the way, in the left row's walk and in the right row's (the last row is resolved bases only, so
    # its pairs take every site from the other row's list). Mostly IUPAC codes, against resolved bases and each other.
    from seqcompare.hamming import pairstats

    codes_of = np.frombuffer(b"RYSWKMBDHVNACGT-", dtype=np.uint8)
    rows = codes_of[rng.integers(0, codes_of.size - 4, (4, 16000))]
    rows[2, ::3] = ord("A")
    rows[3] = codes_of[rng.integers(11, 15, 16000)]
    sequences = [row.tobytes().decode() for row in rows]
    monkeypatch.setattr(pairstats.PairStatsWork, "finish_block", lambda self, counts: seqcompare.allpairs.to_host(counts[0]))
    codes = encode_site_codes(sequences, None, "tn93", False, "")
    got = run_model(codes, Counts(4, 4), model="tn93", ambiguities="resolve", device=device)
    for i in range(4):
        for j in range(4):
            if i != j:
                assert got[:, i, j].tolist() == model_counts_reference(sequences[i], sequences[j], "resolve")


@pytest.mark.parametrize("device", DEVICES)
def test_model_distances_equal_the_oracle(rng, device):
    sequences = related(rng, 11, 300, noise=0.03)  # tiles of 7: one whole, one of 4
    sequences[5] = "-" * 290 + sequences[5][290:]  # 10 sites: missing under min_overlap=20
    for model in models.MODELS:
        for ambiguities in (models.AMBIGUITIES if model == "tn93" else ["resolve"]):
            for fraction in ((1.0, 0.01) if ambiguities == "resolve" else (1.0,)):
                options = dict(model=model, ambiguities=ambiguities, fraction=fraction, min_overlap=20)
                got, sites = seqcompare.model_distances(sequences, sites=True, device=device, tile_size=7, **options)
                expected = each_unordered_pair(sequences, lambda a, b: model_distance_reference(a, b, **options))
                assert np.array_equal(np.isnan(got), np.isnan(expected))
                np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
                cpu = seqcompare.model_distances(sequences, **options)
                assert np.array_equal(got, cpu, equal_nan=True)  # every backend bit for bit
                counted_as = ambiguities if model == "tn93" else "skip"
                counts = each_unordered_pair(sequences, lambda a, b: model_counts_reference(a, b, counted_as)[0] // 144)
                if model != "tn93":  # the snp-dists alphabet: comparable = both A/C/G/T
                    counts = [[sum(x in "ACGT" and y in "ACGT" for x, y in zip(a.upper(), b.upper())) for b in sequences]
                              for a in sequences]  # fmt: skip
                assert np.array_equal(sites, np.array(counts))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("model, ambiguities, fraction", [("tn93", "resolve", 1.0), ("tn93", "resolve", 0.02),
                                                         ("tn93", "gapmm", 1.0), ("k2p", "resolve", 1.0)])  # fmt: skip
def test_screened_pairs_and_clusters_equal_exact_ones(rng, device, model, ambiguities, fraction, monkeypatch):
    # Pairs within a distance are chosen from the model made where the counts are, then made again exactly near
    # the threshold. A stand-in for a device whose log rounds differently (every distance one part in 1e12 off,
    # up or down) must change nothing: neither which pairs are kept nor their bits.
    from seqcompare.cuda import runtime as cuda_runtime
    from seqcompare.hamming import pairstats, statsgpu

    sequences = related(rng, 70, 400, noise=0.02)
    options = dict(model=model, ambiguities=ambiguities, fraction=fraction)
    exact = seqcompare.model_distances(sequences, **options)
    finite = np.sort(exact[np.triu_indices(70, 1)])
    threshold = float(finite[finite.size // 3])  # a distance some pair has exactly: ties at the threshold
    expected = seqcompare.model_pairs(sequences, max_dist=threshold, sites=True, **options)
    expected_clusters = seqcompare.clusters(sequences, max_dist=threshold, **options)
    finish = pairstats.PairStatsWork.finish_block
    made = []

    def rounding_differently(self, counts):
        block = finish(self, counts)
        distances = block[0] if isinstance(block, tuple) else block
        wobble = 1 + 1e-12 * (seqcompare.allpairs.array_module(distances).arange(distances.size) % 3 - 1)
        distances *= wobble.reshape(distances.shape)
        made.append(distances.size)
        return block

    monkeypatch.setattr(pairstats.PairStatsWork, "finish_block", rounding_differently)
    codes = encode_site_codes(sequences, None, "tn93" if model == "tn93" else "acgt", False, "")
    work = pairstats.PairStatsWork(codes, screen=threshold, with_sites=True, **options)
    # The CPU's counts through the screening itself (as a device's would go), block by block.
    kernel = pairstats.PairStatsWork(codes, with_sites=True, **options)
    monkeypatch.setattr(pairstats.PairStatsWork, "finish_block", lambda self, c: c)
    from seqcompare.allpairs import Tile

    counts = kernel.cpu_kernel(1)(Tile(0, 70, 0, 70, False))
    monkeypatch.setattr(pairstats.PairStatsWork, "finish_block", rounding_differently)
    distances, sites = work.screened_block(counts)
    hit = np.triu(distances <= threshold, 1)
    i, j = np.nonzero(hit)
    assert np.array_equal(i, expected[0]) and np.array_equal(j, expected[1])
    assert np.array_equal(distances[i, j], expected[2]) and np.array_equal(sites[i, j], expected[3])
    assert made and not np.array_equal(distances, exact, equal_nan=True)  # far pairs keep the stand-in's values
    # And through the engine on the device under test; the lists of pairs near the threshold are made too short
    # for them, so that a tile's kernel must run again with more room.
    monkeypatch.setattr(pairstats.PairStatsWork, "finish_block", finish)
    monkeypatch.setattr(statsgpu, "_NEAR_CAPACITY", 3)
    monkeypatch.setattr(pairstats, "_NEAR_CAPACITY", 3)
    monkeypatch.setattr(cuda_runtime, "_UPLOAD_PIECE_BYTES", 4096)  # codes go up in pieces through staging
    got = seqcompare.model_pairs(sequences, max_dist=threshold, sites=True, device=device, tile_size=32, **options)
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(seqcompare.clusters(sequences, max_dist=threshold, device=device, **options),
                          expected_clusters)  # fmt: skip


def test_snp_model_and_sites_agree_with_hamming(sarscov2, sarscov2_oracle):
    snps, sites = seqcompare.model_distances(sarscov2, model="snp", sites=True)
    assert np.array_equal(snps, sarscov2_oracle)
    valid = np.isin(np.char.upper(sarscov2.sequences.view("S1")), [b"A", b"C", b"G", b"T"])
    as_float = valid.astype(np.float64)  # BLAS: every count is an exact float (NumPy's int64 product takes 5 s)
    assert np.array_equal(sites, (as_float @ as_float.T).astype(np.int64))
    i, j, d, s = seqcompare.model_pairs(sarscov2, model="p", max_dist=0.0001, sites=True)
    assert np.all(i < j) and np.array_equal(s, sites[i, j])
    assert np.array_equal(d, sarscov2_oracle[i, j] / sites[i, j])
    assert np.array_equal(np.flatnonzero(sarscov2_oracle[i[0]] / sites[i[0]] <= 0.0001), np.sort(np.concatenate(
        [[i[0]], j[i == i[0]], i[j == i[0]]])))  # fmt: skip


def _golden(name: str) -> bytes:
    with gzip.open(os.path.join(GOLDEN, name + ".csv.gz")) as handle:
        return handle.read()


@pytest.fixture(scope="module")
def sarscov2_fasta(tmp_path_factory):
    path = tmp_path_factory.mktemp("tn93") / "sarscov2_338.fasta"
    with gzip.open(os.path.join(DATA, "sarscov2_338.fasta.gz")) as handle:
        path.write_bytes(handle.read())
    return str(path)


TN93_CASES = [
    ("gene_515.t0.015", "gene_515.fasta", ["--max-dist", "0.015"]),
    *[(f"sarscov2_338.{a}", "sarscov2", ["--max-dist", "0.0003", "--ambiguities", a]) for a in models.AMBIGUITIES],
    ("sarscov2_338.resolve_g0.02", "sarscov2", ["--max-dist", "0.0003", "--fraction", "0.02"]),
]


@pytest.mark.parametrize("golden, alignment, options", TN93_CASES, ids=[c[0] for c in TN93_CASES])
def test_byte_identical_to_tn93(capsysbinary, sarscov2_fasta, golden, alignment, options):
    path = sarscov2_fasta if alignment == "sarscov2" else os.path.join(DATA, alignment)
    # veg/tn93's -l 1 keeps pairs with more than 1 comparable site.
    assert main(["hamming", "-q", "--model", "tn93", "--csv", "--min-overlap", "2", *options, path]) == 0
    assert capsysbinary.readouterr().out == _golden(golden)


def test_byte_identical_to_tn93_on_a_simulated_pol_alignment(tmp_path, capsysbinary):
    path = tmp_path / "pol.fasta"
    names, sequences = simulate_pol(5000, 9000, seed=0)
    write_fasta(path, names[:2000], sequences[:2000])  # 2 million pairs, 3,851 within the threshold
    assert main(["hamming", "-q", "--model", "tn93", "--csv", "--min-overlap", "501", "--max-dist", "0.015",
                 str(path)]) == 0  # fmt: skip
    assert capsysbinary.readouterr().out == _golden("pol_2000x9000.l500")


def _components(n, edges):
    """Connected components by a plain union-find: labels by first member."""
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = [find(x) for x in range(n)]
    numbering = {}
    return np.array([numbering.setdefault(r, len(numbering)) for r in roots])


@pytest.mark.parametrize("device", DEVICES)
def test_clusters_are_the_components_of_the_pairs(rng, device, sarscov2, sarscov2_oracle):
    for threshold in (0, 2, 5):
        edges = np.argwhere(np.tril(sarscov2_oracle <= threshold, -1))
        expected = _components(sarscov2.n_sequences, edges.tolist())
        assert np.array_equal(seqcompare.clusters(sarscov2, max_dist=threshold, device=device, tile_size=64), expected)
    sequences = related(rng, 60, 300, noise=0.02)
    distances = seqcompare.model_distances(sequences, model="tn93")
    edges = np.argwhere(np.tril(distances <= 0.03, -1))
    got = seqcompare.clusters(sequences, model="tn93", max_dist=0.03, device=device, tile_size=16)
    assert np.array_equal(got, _components(60, edges.tolist()))
    assert got[0] == 0 and np.all(np.diff(np.maximum.accumulate(got)) <= 1)  # numbered by first member


def test_cluster_command_writes_names_and_clusters(tmp_path, capsys, sarscov2, sarscov2_oracle):
    out = tmp_path / "clusters.tsv"
    assert main(["hamming", "--clusters", "2", os.path.join(DATA, "sarscov2_338.fasta.gz"), "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "name\tcluster" and len(lines) == 339
    labels = np.array([int(line.split("\t")[1]) for line in lines[1:]])
    expected = _components(338, np.argwhere(np.tril(sarscov2_oracle <= 2, -1)).tolist()) + 1
    assert np.array_equal(labels, expected)
    assert [line.split("\t")[0] for line in lines[1:]] == sarscov2.names
    sizes = np.bincount(expected)[1:]
    assert (f"{sizes.size} clusters at distance <= 2: largest {sizes.max()}, {(sizes == 1).sum()} singletons"
            in capsys.readouterr().err)  # fmt: skip


@pytest.mark.parametrize("arguments, message", [
    (["--clusters", "-1"], "--clusters must be at least 0"),
    (["--clusters", "1.5"], "--clusters counts SNPs"),
    (["--model", "tn93", "--all-chars"], "--all-chars cannot be combined with --model tn93"),
    (["--model", "k2p", "--iupac"], "--iupac cannot be combined"),
    (["--ambiguities", "skip"], "--ambiguities apply to --model tn93 only"),
    (["--model", "tn93", "--fraction", "2"], "--fraction must lie in [0, 1]"),
    (["--sites"], "--sites adds a column to long output"),
    (["--normalise", "--model", "k2p"], "--normalise writes the p distance"),
    (["--model", "p", "--max-dist", "x"], "--max-dist takes a number"),
])  # fmt: skip
def test_bad_model_options_get_one_line(capsys, tmp_path, arguments, message):
    out = tmp_path / "out.tsv"
    assert main(["hamming", *arguments, os.path.join(DATA, "gene_515.fasta"), "-o", str(out)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not out.exists()


def test_tn93_names_the_record_and_column_of_a_foreign_character(tmp_path, capsys):
    path = tmp_path / "bad.fasta"
    path.write_text(">a\nACGTACGT\n>b\nACGTAXGT\n")
    assert main(["hamming", "--model", "tn93", str(path)]) != 0
    assert f"{path}: record 'b', column 6: 'X' is not a nucleotide code of TN93" in capsys.readouterr().err
    with pytest.raises(InputError, match="record 'b', column 6"):
        seqcompare.model_distances(str(path), model="tn93")


def test_sites_and_normalise_in_long_output(tmp_path, sarscov2, sarscov2_oracle):
    path = os.path.join(DATA, "sarscov2_338.fasta.gz")
    out = tmp_path / "pairs.tsv"
    assert main(["hamming", "-q", "--sites", "--max-dist", "1", path, "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "sequence_1\tsequence_2\tdistance\tsites"
    _, sites = seqcompare.model_distances(sarscov2, model="snp", sites=True)
    index = {name: k for k, name in enumerate(sarscov2.names)}
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == int(np.tril(sarscov2_oracle <= 1, -1).sum())
    for a, b, d, s in rows:
        assert int(float(d)) == sarscov2_oracle[index[a], index[b]] and int(s) == sites[index[a], index[b]]
    assert main(["hamming", "-q", "--normalise", "--min-overlap", "29000", path, "-o", str(out)]) == 0
    matrix = [line.split("\t") for line in out.read_text().splitlines()]
    p = sarscov2_oracle / np.maximum(sites, 1)
    for i in (0, 17, 200):
        for j in (3, 100):
            text = matrix[i + 1][j + 1]
            assert text == ("NA" if sites[i, j] < 29000 else "%g" % p[i, j])
