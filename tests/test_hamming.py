"""Every Hamming method equals the oracles, on random, edge-case and real inputs."""

import numpy as np
import pytest
from conftest import random_alignment
from hypothesis import given
from hypothesis import strategies as st

import seqcompare
from seqcompare.hamming.reference import snp_dists_distance

FAST_METHODS = ["bitpack", "tiled", "matrix"]
ALL_METHODS = ["vector", *FAST_METHODS, "auto"]


def char_level(rows, other=None, **semantics):
    """The character-level oracle, straight from the definition."""
    left = [bytes(r).decode("latin-1") for r in rows]
    right = left if other is None else [bytes(r).decode("latin-1") for r in other]
    return np.array([[snp_dists_distance(a, b, **semantics) for b in right] for a in left], dtype=np.int64)


@pytest.mark.parametrize("method", ALL_METHODS)
@pytest.mark.parametrize("n", [1, 2, 3, 9])
@pytest.mark.parametrize("m", [1, 63, 64, 65, 130])
def test_methods_equal_definition(rng, method, n, m):
    rows = random_alignment(rng, n, m)
    expected = char_level(rows)
    got = seqcompare.hamming(rows.view("S1"), method=method)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_all_chars_and_keep_case(rng, method):
    rows = random_alignment(rng, 12, 97)
    for all_chars, keep_case in [(True, False), (False, True), (True, True)]:
        alphabet = "all" if all_chars else "acgt"
        got = seqcompare.hamming(rows.view("S1"), method=method, alphabet=alphabet, keep_case=keep_case)
        np.testing.assert_array_equal(got, char_level(rows, all_chars=all_chars, keep_case=keep_case))


IUPAC = {"A": "A", "C": "C", "G": "G", "T": "T", "U": "T", "R": "AG", "Y": "CT", "S": "CG", "W": "AT",
         "K": "GT", "M": "AC", "B": "CGT", "D": "AGT", "H": "ACT", "V": "ACG", "N": "ACGT"}  # fmt: skip


def iupac_oracle(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a.upper(), b.upper()):
        sx, sy = set(IUPAC.get(x, "")), set(IUPAC.get(y, ""))
        if sx and sy and not (sx & sy):
            count += 1
    return count


@pytest.mark.parametrize("method", ALL_METHODS)
def test_iupac_sets(rng, method):
    rows = random_alignment(rng, 10, 150, alphabet=b"ACGTURYSWKMBDHVN-acgtnry*")
    text = [bytes(r).decode() for r in rows]
    expected = np.array([[iupac_oracle(a, b) for b in text] for a in text])
    got = seqcompare.hamming(rows.view("S1"), method=method, alphabet="iupac")
    np.testing.assert_array_equal(got, expected)
    pair = seqcompare.hamming(["A", "R", "Y", "N", "-"], alphabet="iupac", method=method)
    assert pair[0, 1] == 0 and pair[0, 2] == 1 and pair[1, 2] == 1 and pair[3].sum() == 0 and pair[4].sum() == 0


@pytest.mark.parametrize("method", ALL_METHODS)
def test_missing_characters(rng, method):
    rows = random_alignment(rng, 8, 70)
    got = seqcompare.hamming(rows.view("S1"), method=method, alphabet="all", missing="N-")
    text = [bytes(r).decode().upper() for r in rows]
    expected = [[sum(x != y and x not in "N-" and y not in "N-" for x, y in zip(a, b)) for b in text] for a in text]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_rectangular_query_reference(rng, method):
    query = random_alignment(rng, 7, 129)
    ref = random_alignment(rng, 5, 129)
    got = seqcompare.hamming(query.view("S1"), ref.view("S1"), method=method)
    assert got.shape == (7, 5)
    np.testing.assert_array_equal(got, char_level(query, ref))


@pytest.mark.parametrize("method", ALL_METHODS)
def test_all_n_and_empty(method):
    all_n = seqcompare.hamming(["NNNN", "NNNN", "ACGT"], method=method)
    np.testing.assert_array_equal(all_n, np.zeros((3, 3)))
    zero_sites = seqcompare.hamming(np.zeros((3, 0), dtype=np.int64), method=method)
    np.testing.assert_array_equal(zero_sites, np.zeros((3, 3)))
    no_items = seqcompare.hamming(np.zeros((0, 5), dtype=np.int64), method=method)
    assert no_items.shape == (0, 0)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_categorical_arrays(rng, method):
    values = rng.integers(-3, 4, size=(11, 77))
    expected = (values[:, None, :] != values[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(seqcompare.hamming(values, method=method), expected)
    # Huge values and many categories (more than 8 bit planes).
    wide = rng.integers(0, 2**62, size=(6, 40)) * rng.integers(0, 2, size=(6, 40))
    wide[:, ::3] = rng.integers(0, 600, size=(6, 14))
    expected = (wide[:, None, :] != wide[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(seqcompare.hamming(wide, method=method), expected)
    # Missing values and NaN never count.
    floats = rng.integers(0, 3, size=(5, 30)).astype(float)
    floats[rng.random(floats.shape) < 0.2] = np.nan
    floats[0, :4] = -1.0
    present = ~np.isnan(floats) & (floats != -1.0)
    both = present[:, None, :] & present[None, :, :]
    expected = (both & (floats[:, None, :] != floats[None, :, :])).sum(axis=2)
    np.testing.assert_array_equal(seqcompare.hamming(floats, method=method, missing=-1.0), expected)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_max_count_caps(rng, method):
    rows = random_alignment(rng, 9, 200)
    full = char_level(rows)
    np.testing.assert_array_equal(seqcompare.hamming(rows.view("S1"), method=method, max_count=7),
                                  np.minimum(full, 7))  # fmt: skip


@pytest.mark.parametrize("tile_size", [1, 2, 3, 5, 8, 64, 1000])
def test_tile_size_and_threads_do_not_change_results(rng, tile_size):
    rows = random_alignment(rng, 23, 140)
    expected = char_level(rows)
    for threads in (1, 3):
        for method in ("bitpack", "tiled", "vector"):
            got = seqcompare.hamming(rows.view("S1"), method=method, tile_size=tile_size, threads=threads)
            np.testing.assert_array_equal(got, expected)
        got = seqcompare.hamming(rows.view("S1"), rows[:7].view("S1"), tile_size=tile_size, threads=threads)
        np.testing.assert_array_equal(got, expected[:, :7])


def test_real_alignment_all_methods_equal_oracle(sarscov2):
    expected = seqcompare.hamming(sarscov2, method="vector")
    for method in FAST_METHODS:
        np.testing.assert_array_equal(seqcompare.hamming(sarscov2, method=method), expected)
    # The first rows also against the character-level definition.
    np.testing.assert_array_equal(expected[:25, :25], char_level(sarscov2.sequences[:25]))
    for alphabet in ("all", "iupac"):
        expected = seqcompare.hamming(sarscov2, method="vector", alphabet=alphabet)
        np.testing.assert_array_equal(seqcompare.hamming(sarscov2, method="bitpack", alphabet=alphabet), expected)


def test_accepts_paths_lists_and_char_arrays(tmp_path):
    path = tmp_path / "x.fa"
    path.write_text(">a\nACGT\n>b\nACGA\n")
    expected = [[0, 1], [1, 0]]
    np.testing.assert_array_equal(seqcompare.hamming(str(path)), expected)
    np.testing.assert_array_equal(seqcompare.hamming(["ACGT", "ACGA"]), expected)
    np.testing.assert_array_equal(seqcompare.hamming(np.array([list("ACGT"), list("ACGA")])), expected)
    np.testing.assert_array_equal(seqcompare.hamming(np.array(["ACGT", "ACGA"])), expected)


def test_bad_api_input():
    with pytest.raises(seqcompare.InputError, match="sequence #2 has length 3"):
        seqcompare.hamming(["ACGT", "ACG"])
    with pytest.raises(seqcompare.InputError, match="sites but Y has"):
        seqcompare.hamming(["ACGT"], ["ACG"])
    with pytest.raises(ValueError, match="method must be one of"):
        seqcompare.hamming(["ACGT"], method="fast")
    with pytest.raises(ValueError, match="alphabet must be one of"):
        seqcompare.hamming(["ACGT"], alphabet="rna")


def test_out_npy_streams_to_disk(tmp_path, rng):
    rows = random_alignment(rng, 30, 90)
    path = tmp_path / "d.npy"
    got = seqcompare.hamming(rows.view("S1"), out=path, tile_size=7)
    np.testing.assert_array_equal(np.load(path), char_level(rows))
    np.testing.assert_array_equal(got, char_level(rows))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npy"]


def test_pairs_and_knn_match_the_matrix(rng):
    rows = random_alignment(rng, 40, 60, alphabet=b"ACGTN")
    full = char_level(rows)
    for tile_size in (3, 16, 64):
        i, j, d = seqcompare.hamming_pairs(rows.view("S1"), max_dist=30, tile_size=tile_size)
        expected = [(a, b, full[a, b]) for a in range(40) for b in range(a + 1, 40) if full[a, b] <= 30]
        assert list(zip(i.tolist(), j.tolist(), d.tolist())) == expected
        indices, distances = seqcompare.hamming_knn(rows.view("S1"), k=4, tile_size=tile_size)
        for a in range(40):
            order = sorted((full[a, b], b) for b in range(40) if b != a)[:4]
            assert list(zip(distances[a].tolist(), indices[a].tolist())) == order
    query = rows[:5]
    i, j, d = seqcompare.hamming_pairs(query.view("S1"), rows.view("S1"), max_dist=25, tile_size=8)
    expected = [(a, b, full[a, b]) for a in range(5) for b in range(40) if full[a, b] <= 25]
    assert list(zip(i.tolist(), j.tolist(), d.tolist())) == expected
    indices, distances = seqcompare.hamming_knn(query.view("S1"), rows.view("S1"), k=2)
    assert (indices[:, 0] == np.arange(5)).all() and (distances[:, 0] == 0).all()
    assert seqcompare.hamming_knn(["ACGT"], k=3)[0].shape == (1, 0)


def sequences(min_n=1, max_n=12, alphabet="ACGTN-"):
    return st.integers(1, 150).flatmap(
        lambda m: st.lists(st.text(alphabet, min_size=m, max_size=m), min_size=min_n, max_size=max_n)
    )


@given(sequences())
def test_property_symmetric_zero_diagonal_and_equal_to_oracle(seqs):
    got = seqcompare.hamming(seqs, tile_size=3)
    assert (got == got.T).all() and (np.diag(got) == 0).all()
    rows = np.array([list(s.encode()) for s in seqs], dtype=np.uint8)
    np.testing.assert_array_equal(got, char_level(rows))


@given(sequences(min_n=3, alphabet="ACGT"), st.integers(1, 9))
def test_property_triangle_inequality_and_tile_invariance(seqs, tile_size):
    # Without missing data Hamming distance is a metric; with N skipped it need not be.
    got = seqcompare.hamming(seqs, tile_size=tile_size)
    # d(a, c) <= d(a, b) + d(b, c), indexed [a, b, c]
    assert (got[:, None, :] <= got[:, :, None] + got[None, :, :]).all()
    np.testing.assert_array_equal(got, seqcompare.hamming(seqs, method="vector"))
