"""Duplicates (issue 18, item 4): each distinct sequence computed once, then expanded to the uncollapsed result.

The groups are checked against a dictionary of the sequences as the comparison reads them (an oracle that shares
no code with the hash-then-verify path), the verification against hashes that all collide, and every collapsed
result (matrices, pairs, clusters, long and text outputs; every model and ambiguity rule; CPU tiles of any size
and the GPU) against the same run without ``--collapse``.
"""

import numpy as np
import pytest
from conftest import DEVICES

import seqcompare
from seqcompare.allpairs import duplicates as duplicates_module
from seqcompare.allpairs.duplicates import Duplicates
from seqcompare.cli import main
from seqcompare.hamming import models
from seqcompare.simulate import simulate_pol, write_fasta


def with_duplicates(rng, n_distinct=40, n=110, m=300, ambiguity_rate=0.03):
    """``n`` pol-like sequences drawn from ``n_distinct`` with repeats, some upper- and some lower-case."""
    _, rows = simulate_pol(n_distinct, m, seed=int(rng.integers(1 << 30)), ambiguity_rate=ambiguity_rate)
    picks = rng.integers(0, n_distinct, n)
    texts = [rows[k].tobytes().decode() for k in picks]
    return [t.lower() if k % 5 == 0 else t for k, t in enumerate(texts)]


def first_occurrence_oracle(sequences, read):
    """Each sequence's representative: the first one that reads the same under ``read`` (a character map)."""
    first, result = {}, []
    for k, sequence in enumerate(sequences):
        key = "".join(read(c) for c in sequence)
        result.append(first.setdefault(key, k))
    return np.array(result)


def snp_dists_character(c):
    return c.upper() if c.upper() in "ACGT" else "-"


def tn93_character(c):
    return c.upper()


def same(got, expected):
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    else:
        assert got.dtype == expected.dtype and np.array_equal(got, expected, equal_nan=True)


def test_groups_equal_the_first_occurrence_oracle(rng):
    sequences = with_duplicates(rng)
    sequences += ["ACGT" * 75, "acgn" * 75, "ACG-" * 75]  # N and - read alike under snp-dists' alphabet
    assert np.array_equal(seqcompare.duplicates(sequences), first_occurrence_oracle(sequences, snp_dists_character))
    assert np.array_equal(seqcompare.duplicates(sequences, model="tn93"),
                          first_occurrence_oracle(sequences, tn93_character))  # fmt: skip
    assert np.array_equal(seqcompare.duplicates(sequences, keep_case=True, alphabet="all"),
                          first_occurrence_oracle(sequences, str))  # fmt: skip
    assert Duplicates.of_rows(np.zeros((0, 5), np.uint8)).n_groups == 0


def test_rows_whose_hashes_collide_are_verified(rng, monkeypatch):
    monkeypatch.setattr(duplicates_module, "_hash_parameters", lambda: (7, 0))  # every hash is the same
    distinct = rng.integers(0, 3, (30, 11), dtype=np.uint8)
    rows = distinct[rng.integers(0, 30, 200)]  # every hash equal; 30 different rows at most
    hashes = np.empty(len(rows), dtype=np.uint64)
    duplicates_module._hash_all(rows, np.arange(256, dtype=np.uint8), hashes)
    assert np.unique(hashes).size == 1
    groups = Duplicates.of_rows(rows)
    expected = first_occurrence_oracle([bytes(r).decode("latin-1") for r in rows], str)
    assert np.array_equal(groups.representative_of(), expected)
    assert groups.n_groups == len(set(expected.tolist())) and groups.any


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("tile_size", [None, 7])
def test_collapsed_models_equal_uncollapsed(rng, device, tile_size):
    sequences = with_duplicates(rng)
    options = dict(device=device, tile_size=tile_size)
    for model in models.MODELS:
        rules = models.AMBIGUITIES if model == "tn93" else ("resolve",)
        for ambiguities in rules:
            for fraction in (1.0, 0.02) if model == "tn93" and ambiguities == "resolve" else (1.0,):
                settings = dict(model=model, ambiguities=ambiguities, fraction=fraction, **options)
                full = seqcompare.model_distances(sequences, sites=True, min_overlap=285, **settings)
                same(seqcompare.model_distances(sequences, sites=True, min_overlap=285, collapse=True, **settings),
                     full)  # fmt: skip
                finite = full[0][np.isfinite(full[0]) & (full[0] > 0)]
                threshold = float(np.quantile(finite, 0.1)) if model != "snp" else 4
                pairs = seqcompare.model_pairs(sequences, max_dist=threshold, sites=True, **settings)
                assert len(pairs[0]) > 50
                same(seqcompare.model_pairs(sequences, max_dist=threshold, sites=True, collapse=True, **settings),
                     pairs)  # fmt: skip
                same(seqcompare.clusters(sequences, max_dist=threshold, collapse=True, **settings),
                     seqcompare.clusters(sequences, max_dist=threshold, **settings))  # fmt: skip
    left, right = sequences[:70], sequences[60:]
    same(seqcompare.model_pairs(left, right, model="tn93", max_dist=0.05, collapse=True, **options),
         seqcompare.model_pairs(left, right, model="tn93", max_dist=0.05, **options))  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("alphabet", ["acgt", "all", "iupac"])
def test_collapsed_hamming_equals_uncollapsed(rng, device, alphabet):
    sequences = with_duplicates(rng)
    options = dict(alphabet=alphabet, device=device)
    same(seqcompare.hamming(sequences, collapse=True, **options), seqcompare.hamming(sequences, **options))
    same(seqcompare.hamming(sequences[:50], sequences[40:], collapse=True, **options),
         seqcompare.hamming(sequences[:50], sequences[40:], **options))  # fmt: skip
    same(seqcompare.hamming_pairs(sequences, max_dist=5, collapse=True, **options),
         seqcompare.hamming_pairs(sequences, max_dist=5, **options))  # fmt: skip
    same(seqcompare.clusters(sequences, max_dist=3, collapse=True, **options),
         seqcompare.clusters(sequences, max_dist=3, **options))  # fmt: skip


def test_duplicates_far_from_themselves_stay_apart():
    # Under TN93's "average" rule an ambiguity code against itself is not a match, so these three identical
    # sequences are at a positive distance from each other: at 0 each is a singleton, collapsed or not.
    sequences = ["ACGTRYACGTAC"] * 3 + ["ACGTACGTACGT", "ACGTACGTACGT"]
    expected = [0, 1, 2, 3, 3]
    for collapse in (False, True):
        labels = seqcompare.clusters(sequences, model="tn93", ambiguities="average", max_dist=0.0, collapse=collapse)
        assert labels.tolist() == expected
        i, j, d = seqcompare.model_pairs(sequences, model="tn93", ambiguities="average", max_dist=0.0,
                                         collapse=collapse)  # fmt: skip
        assert list(zip(i.tolist(), j.tolist())) == [(3, 4)]


def test_pairs_with_sites_keep_their_columns_when_none_is_within_reach():
    sequences = ["ACGTACGTAC", "TTTTACGTAC", "ACGTACGTAC"]
    for collapse in (False, True):
        far = seqcompare.model_pairs(sequences[:2], max_dist=0.01, sites=True, collapse=collapse)
        assert len(far) == 4 and all(column.size == 0 for column in far)
        # Only the pair of duplicates is within reach: the representatives' run finds no pair at all.
        i, j, d, sites = seqcompare.model_pairs(sequences, max_dist=0.01, sites=True, collapse=collapse)
        assert (i.tolist(), j.tolist(), d.tolist(), sites.tolist()) == ([0], [2], [0.0], [10])


def test_expand_labels_renumbers_split_groups_by_first_member():
    groups = Duplicates(np.array([0, 1, 0, 2, 1, 0]))  # items 0, 2 and 5 identical; 1 and 4
    # Representatives 0 and 2 (groups 1 and 2) linked; group 0 alone and not linked to itself: it splits.
    labels = groups.expand_labels(np.array([0, 1, 1]), self_linked=np.array([False, True, True]))
    assert labels.tolist() == [0, 1, 2, 1, 1, 3]


CLI_LAYOUTS = [
    [], ["-m"], ["-L"], ["-L", "-m"], ["--max-dist", "4"], ["--clusters", "3"], ["--iupac", "--max-dist", "4"],
    ["--sites", "--max-dist", "3"], ["--model", "tn93", "--max-dist", "0.02", "--csv"],
    ["--model", "tn93", "--ambiguities", "average", "--molten", "--sites"],
    ["--model", "tn93", "--ambiguities", "gapmm", "--clusters", "0.02"],
]  # fmt: skip


@pytest.fixture
def pol_fasta(tmp_path, rng):
    sequences = with_duplicates(rng, n_distinct=30, n=90)
    path = tmp_path / "pol.fa"
    write_fasta(path, [f"s{k}" for k in range(len(sequences))],
                np.frombuffer("".join(sequences).encode(), np.uint8).reshape(len(sequences), -1))  # fmt: skip
    return path, sequences


@pytest.mark.parametrize("layout", CLI_LAYOUTS, ids=" ".join)
def test_collapse_writes_the_uncollapsed_output(tmp_path, pol_fasta, layout):
    path, _ = pol_fasta
    assert main(["hamming", str(path), "-q", "-o", str(tmp_path / "a"), *layout]) == 0
    assert main(["hamming", str(path), "-q", "-o", str(tmp_path / "b"), "--collapse", *layout]) == 0
    assert (tmp_path / "b").read_bytes() == (tmp_path / "a").read_bytes()


def test_collapse_npy_and_reference(tmp_path, pol_fasta):
    path, _ = pol_fasta
    for name, extra in (("a", []), ("b", ["--collapse"])):
        assert main(["hamming", str(path), "-q", "--npy", str(tmp_path / f"{name}.npy"), *extra]) == 0
        assert main(["hamming", str(path), "--ref", str(path), "-q", "-o", str(tmp_path / name), *extra]) == 0
    assert (tmp_path / "b.npy").read_bytes() == (tmp_path / "a.npy").read_bytes()
    assert (tmp_path / "b").read_bytes() == (tmp_path / "a").read_bytes()


def test_collapsed_out_writes_distinct_sequences_and_the_map(tmp_path, pol_fasta):
    path, sequences = pol_fasta
    representative = first_occurrence_oracle(sequences, tn93_character)
    distinct = sorted(set(representative.tolist()))
    names = [f"s{k}" for k in range(len(sequences))]
    assert main(["hamming", str(path), "-q", "--model", "tn93", "--max-dist", "0.03", "-o", str(tmp_path / "pairs"),
                 "--collapsed-out", str(tmp_path / "map")]) == 0  # fmt: skip
    lines = (tmp_path / "map").read_text().splitlines()
    assert lines == ["name\trepresentative"] + [f"{names[k]}\t{names[r]}" for k, r in enumerate(representative)]
    # The result is the plain run over the distinct sequences, named by their first occurrences.
    deduplicated = tmp_path / "distinct.fa"
    write_fasta(deduplicated, [names[k] for k in distinct],
                np.frombuffer("".join(sequences[k] for k in distinct).encode(), np.uint8).reshape(len(distinct), -1))
    assert main(["hamming", str(deduplicated), "-q", "--model", "tn93", "--max-dist", "0.03",
                 "-o", str(tmp_path / "expected")]) == 0  # fmt: skip
    assert (tmp_path / "pairs").read_bytes() == (tmp_path / "expected").read_bytes()
    assert len(distinct) < len(sequences)


@pytest.mark.parametrize("arguments, message", [
    (["--collapse", "--knn", "2"], "--knn cannot be combined with --collapse"),
    (["--collapse", "--collapsed-out", "m"], "choose one"),
    (["--collapsed-out", "m", "--ref", "REF"], "with --ref use --collapse"),
])  # fmt: skip
def test_bad_collapse_options_get_one_line(capsys, pol_fasta, tmp_path, arguments, message):
    path, _ = pol_fasta
    arguments = [str(path) if a == "REF" else str(tmp_path / a) if a == "m" else a for a in arguments]
    assert main(["hamming", str(path), "-o", str(tmp_path / "out"), *arguments]) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pol.fa"]
