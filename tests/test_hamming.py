"""Every Hamming method, on the CPU and the GPU, equals the oracles on random, edge-case and real inputs.

One test body serves both devices: ``variant`` is ``(device, variant, gpu_packer)``, and the GPU variants are
marked ``gpu`` (skipped where no GPU is usable).
"""

import gzip
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATA, DEVICES, random_alignment
from hypothesis import given
from hypothesis import strategies as st

import seqcompare
from seqcompare.allpairs import KnnReduction, MatrixReduction, PairsReduction
from seqcompare.hamming.api import encode_inputs, run_hamming
from seqcompare.hamming.reference import snp_dists_distance

CPU_METHODS = ["vector", "bitpack", "sparse", "tiled", "matrix", "auto"]
GPU_METHODS = [("bitmma", "planes"), ("bitmma", "ballot"), ("bitmma", "shared"), ("bitmma", "naive"),
               ("matrix", "planes"), ("matrix", "auto"), ("bitpack", "planes"), ("auto", "auto")]  # fmt: skip
VARIANTS = [pytest.param(("cpu", method, "planes"), id=f"cpu-{method}") for method in CPU_METHODS] + [
    pytest.param(("cuda", method, packer), id=f"cuda-{method}-{packer}", marks=pytest.mark.gpu)
    for method, packer in GPU_METHODS
]
FAST_VARIANTS = [v for v in VARIANTS if v.values[0][1] not in ("vector", "auto")]


def as_sequences(rows):
    """Byte rows from :func:`random_alignment` as sequences (a uint8 array alone would be categorical values)."""
    return rows.view("S1") if isinstance(rows, np.ndarray) and rows.dtype == np.uint8 else rows


def distances(variant, X, Y=None, *, alphabet="acgt", keep_case=False, missing=None, max_count=None, **options):
    """The matrix by ``variant`` (through the one path every public function takes)."""
    device, method, packer = variant
    X, Y = as_sequences(X), as_sequences(Y)
    encoded = encode_inputs(X, Y, alphabet=alphabet, keep_case=keep_case, missing=missing)
    shape = (encoded.n_left, encoded.n_left if encoded.symmetric else encoded.n_right)
    return run_hamming(encoded, MatrixReduction(shape, encoded.symmetric), method=method, device=device,
                       gpu_packer=packer, cap=max_count, **options)  # fmt: skip


def char_level(rows, other=None, **semantics):
    """The character-level oracle, straight from the definition."""
    left = [bytes(r).decode("latin-1") for r in rows]
    right = left if other is None else [bytes(r).decode("latin-1") for r in other]
    return np.array([[snp_dists_distance(a, b, **semantics) for b in right] for a in left], dtype=np.int64)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", [1, 2, 3, 9])
@pytest.mark.parametrize("m", [1, 63, 64, 65, 130])
def test_methods_equal_definition(rng, variant, n, m):
    rows = random_alignment(rng, n, m)
    expected = char_level(rows)
    got = distances(variant, rows.view("S1"))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", VARIANTS)
def test_all_chars_and_keep_case(rng, variant):
    rows = random_alignment(rng, 12, 97)
    for all_chars, keep_case in [(True, False), (False, True), (True, True)]:
        alphabet = "all" if all_chars else "acgt"
        got = distances(variant, rows.view("S1"), alphabet=alphabet, keep_case=keep_case)
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


@pytest.mark.parametrize("variant", VARIANTS)
def test_iupac_sets(rng, variant):
    rows = random_alignment(rng, 10, 150, alphabet=b"ACGTURYSWKMBDHVN-acgtnry*")
    text = [bytes(r).decode() for r in rows]
    expected = np.array([[iupac_oracle(a, b) for b in text] for a in text])
    got = distances(variant, rows.view("S1"), alphabet="iupac")
    np.testing.assert_array_equal(got, expected)
    pair = distances(variant, ["A", "R", "Y", "N", "-"], alphabet="iupac")
    assert pair[0, 1] == 0 and pair[0, 2] == 1 and pair[1, 2] == 1 and pair[3].sum() == 0 and pair[4].sum() == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_missing_characters(rng, variant):
    rows = random_alignment(rng, 8, 70)
    got = distances(variant, rows.view("S1"), alphabet="all", missing="N-")
    text = [bytes(r).decode().upper() for r in rows]
    expected = [[sum(x != y and x not in "N-" and y not in "N-" for x, y in zip(a, b)) for b in text] for a in text]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rectangular_query_reference(rng, variant):
    query = random_alignment(rng, 7, 129)
    ref = random_alignment(rng, 5, 129)
    got = distances(variant, query.view("S1"), ref.view("S1"))
    assert got.shape == (7, 5)
    np.testing.assert_array_equal(got, char_level(query, ref))


@pytest.mark.parametrize("variant", VARIANTS)
def test_all_n_and_empty(variant):
    all_n = distances(variant, ["NNNN", "NNNN", "ACGT"])
    np.testing.assert_array_equal(all_n, np.zeros((3, 3)))
    zero_sites = distances(variant, np.zeros((3, 0), dtype=np.int64))
    np.testing.assert_array_equal(zero_sites, np.zeros((3, 3)))
    no_items = distances(variant, np.zeros((0, 5), dtype=np.int64))
    assert no_items.shape == (0, 0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_categorical_arrays(rng, variant):
    values = rng.integers(-3, 4, size=(11, 77))
    expected = (values[:, None, :] != values[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(distances(variant, values), expected)
    # Huge values and many categories (more than 8 bit planes).
    wide = rng.integers(0, 2**62, size=(6, 40)) * rng.integers(0, 2, size=(6, 40))
    wide[:, ::3] = rng.integers(0, 600, size=(6, 14))
    expected = (wide[:, None, :] != wide[None, :, :]).sum(axis=2)
    if variant[0] == "cuda" and variant[1] in ("bitmma", "matrix"):  # tensor-core methods: 32 values at most
        with pytest.raises(ValueError, match="at most 32 distinct values; use 'bitpack'"):
            distances(variant, wide)
    else:
        np.testing.assert_array_equal(distances(variant, wide), expected)
    # Missing values and NaN never count.
    floats = rng.integers(0, 3, size=(5, 30)).astype(float)
    floats[rng.random(floats.shape) < 0.2] = np.nan
    floats[0, :4] = -1.0
    present = ~np.isnan(floats) & (floats != -1.0)
    both = present[:, None, :] & present[None, :, :]
    expected = (both & (floats[:, None, :] != floats[None, :, :])).sum(axis=2)
    np.testing.assert_array_equal(distances(variant, floats, missing=-1.0), expected)


@pytest.mark.parametrize("sites", [1, 63, 64, 65, 200, 640])
def test_bit_planes_hold_each_sites_pattern_bits(rng, sites):
    """``pack_planes`` against NumPy's ``packbits``: bit ``k`` of word ``w`` of plane ``p`` is bit ``p`` of the
    pattern of site ``64 w + k``, for one-byte input through a table (the multiply gather, 3 planes for DNA) and
    for codes of more than 8 planes (the bit-by-bit loop); padding bits are zero."""
    from seqcompare.hamming.encoding import pack_planes, plane_patterns

    def packed_by_numpy(values, patterns, n_plane_bits):
        bits = patterns[values]
        words = -(-values.shape[1] // 64)
        padded = np.zeros((len(values), words * 64), np.uint64)
        padded[:, : values.shape[1]] = bits
        planes = [np.packbits(((padded >> np.uint64(p)) & 1).astype(np.uint8), axis=1, bitorder="little")
                  for p in range(n_plane_bits)]  # fmt: skip
        return np.stack([plane.view("<u8") for plane in planes], axis=1)

    dna = rng.choice(np.frombuffer(b"ACGTNacgt-RY", np.uint8), size=(9, sites))
    encoded = encode_inputs(dna.view("S1"), missing="N-")
    got = pack_planes(dna, encoded.space, encoded.table, threads=2)
    assert got.shape[1] == encoded.space.n_value_planes + 1
    expected = packed_by_numpy(dna, plane_patterns(encoded.space, encoded.table), got.shape[1])
    np.testing.assert_array_equal(got, expected)
    many = encode_inputs(rng.integers(0, 5000, size=(600, sites)))
    got = pack_planes(many.left, many.space, threads=3)
    assert got.shape[1] > 8
    np.testing.assert_array_equal(got, packed_by_numpy(many.left, plane_patterns(many.space), got.shape[1]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_max_count_caps(rng, variant):
    rows = random_alignment(rng, 9, 200)
    full = char_level(rows)
    np.testing.assert_array_equal(distances(variant, rows.view("S1"), max_count=7),
                                  np.minimum(full, 7))  # fmt: skip


@pytest.mark.parametrize("tile_size", [1, 2, 3, 5, 8, 64, 1000])
def test_tile_size_and_threads_do_not_change_results(rng, tile_size):
    rows = random_alignment(rng, 23, 140)
    expected = char_level(rows)
    for threads in (1, 3):
        for method in ("bitpack", "tiled", "vector"):
            got = distances(("cpu", method, "planes"), rows.view("S1"), tile_size=tile_size, threads=threads)
            np.testing.assert_array_equal(got, expected)
        got = seqcompare.hamming(rows.view("S1"), rows[:7].view("S1"), tile_size=tile_size, threads=threads)
        np.testing.assert_array_equal(got, expected[:, :7])


SHAPES = [(1, 1), (2, 31), (3, 32), (5, 33), (7, 63), (16, 64), (17, 65), (40, 255), (41, 256), (127, 257),
          (128, 511), (129, 512), (130, 513), (33, 1000)]  # fmt: skip


@pytest.mark.parametrize("variant", FAST_VARIANTS)
@pytest.mark.parametrize("alphabet", ["acgt", "all", "iupac"])
def test_shapes_around_every_kernel_edge(rng, variant, alphabet):
    # Sizes on both sides of the CPU's 64-site words and the GPU's 32/128/256/512 tiles and words.
    for n, m in SHAPES:
        X = random_alignment(rng, n, m)
        oracle = distances(("cpu", "vector", "planes"), X, alphabet=alphabet)
        np.testing.assert_array_equal(distances(variant, X, alphabet=alphabet), oracle, err_msg=f"n={n} m={m}")
    for n, p, m in [(1, 1, 64), (70, 130, 300), (129, 3, 513)]:
        X, Y = random_alignment(rng, n, m), random_alignment(rng, p, m)
        np.testing.assert_array_equal(distances(variant, X, Y), char_level(X, Y) if n * p < 200 else
                                      distances(("cpu", "vector", "planes"), X, Y))  # fmt: skip


@pytest.mark.parametrize("variant", FAST_VARIANTS)
def test_many_tiles_and_caps(rng, variant):
    X = random_alignment(rng, 700, 190, alphabet=b"ACGTN-")
    reference = distances(("cpu", "vector", "planes"), X)
    np.testing.assert_array_equal(distances(variant, X, tile_size=256), reference)
    np.testing.assert_array_equal(distances(variant, X, tile_size=128, max_count=40), np.minimum(reference, 40))


@pytest.mark.parametrize("variant", FAST_VARIANTS)
def test_real_alignment_equals_the_oracle(variant, sarscov2_oracle, sarscov2):
    np.testing.assert_array_equal(distances(variant, sarscov2), sarscov2_oracle)


def test_real_alignment_oracle_and_other_alphabets(sarscov2, sarscov2_oracle):
    # The peer's matrix on the first rows against the character-level definition.
    np.testing.assert_array_equal(sarscov2_oracle[:25, :25], char_level(sarscov2.sequences[:25]))
    rows = sarscov2.sequences[:60]
    for alphabet in ("all", "iupac"):
        expected = seqcompare.hamming(rows, method="vector", alphabet=alphabet)
        np.testing.assert_array_equal(seqcompare.hamming(rows, method="bitpack", alphabet=alphabet), expected)


@pytest.mark.parametrize("variant", FAST_VARIANTS)
@pytest.mark.parametrize("symmetric", [True, False])
def test_pairs_and_knn_equal_the_matrix(rng, variant, symmetric):
    device, method, packer = variant
    X = random_alignment(rng, 300, 400, alphabet=b"ACGTN-")
    Y = None if symmetric else random_alignment(rng, 170, 400, alphabet=b"ACGTN-")
    encoded = encode_inputs(as_sequences(X), as_sequences(Y))
    full = distances(("cpu", "vector", "planes"), X, Y)
    threshold = int(np.percentile(full, 3))
    options = {"method": method, "device": device, "gpu_packer": packer}
    for cap in (None, threshold + 1, threshold - 5):
        got = run_hamming(encoded, PairsReduction(threshold, symmetric), cap=cap, **options)
        # The engine selects on the capped distance: a cap at or below the threshold admits every pair.
        capped = full if cap is None else np.minimum(full, cap)
        hits = [(a, b) for a in range(full.shape[0]) for b in range(full.shape[1])
                if capped[a, b] <= threshold and (not symmetric or a < b)]  # fmt: skip
        assert list(zip(*(x.tolist() for x in got))) == [(a, b, capped[a, b]) for a, b in hits]
    n_right = None if symmetric else Y.shape[0]
    indices, dist = run_hamming(encoded, KnnReduction(5, X.shape[0], n_right), tile_size=128, **options)
    for a in range(X.shape[0]):
        order = sorted((full[a, b], b) for b in range(full.shape[1]) if not (symmetric and a == b))[:5]
        assert list(zip(dist[a].tolist(), indices[a].tolist())) == order


def test_gpu_host_side_sends_sequences_as_read():
    # The GPU's default packer builds operands from the rows as read, so the host side of a GPU run packs no
    # planes, copies no bytes and compiles nothing (Numba is never imported: its start-up was most of the host
    # time of a fresh GPU run). Rows packed already, and the popcount method, keep the planes.
    from seqcompare.hamming.gpu import HostProblem, resolve_packer

    script = (
        "import sys, numpy as np, seqcompare\n"
        "from seqcompare.hamming.api import encode_inputs\n"
        "from seqcompare.hamming.gpu import HostProblem\n"
        f"encoded = encode_inputs(seqcompare.read_alignment({os.path.join(DATA, 'sarscov2_338.fasta.gz')!r}),"
        " alphabet='iupac')\n"
        "host = HostProblem(encoded, 'bitmma', 'auto')\n"
        "print(host.packer, np.shares_memory(host.host['left'], encoded.left),"
        " np.array_equal(host.table, encoded.table), 'numba' in sys.modules, 'cupy' in sys.modules)\n"
    )  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["ballot", "True", "True", "False", "False"]
    assert resolve_packer("auto", "bitmma", "values") == "ballot"
    assert resolve_packer("auto", "matrix", "values") == "ballot"
    assert resolve_packer("naive", "bitmma", "values") == "naive"
    assert resolve_packer("auto", "bitmma", "planes") == "planes"
    assert resolve_packer("ballot", "bitpack", "values") == "planes"
    with pytest.raises(ValueError, match="packer must be one of"):
        HostProblem(encode_inputs(["ACGT", "ACGA"]), "bitmma", "bytes")


@pytest.mark.parametrize("device", DEVICES)
def test_cli_output_equals_snp_dists_on_every_device(device):
    path = os.path.join(DATA, "sarscov2_338.fasta.gz")
    got = subprocess.run([sys.executable, "-m", "seqcompare", "hamming", "-q", "--device", device, path],
                         capture_output=True, check=True).stdout  # fmt: skip
    # the real snp-dists' output (tests/data/golden/README.md)
    golden = os.path.join(os.path.dirname(__file__), "data", "golden", "snp-dists", "sarscov2_338.tsv.gz")
    with gzip.open(golden, "rb") as handle:
        assert got == handle.read()


@pytest.mark.gpu
@pytest.mark.parametrize("flags", [["-L"], ["--max-dist", "15"], ["--knn", "3"]])
def test_gpu_cli_outputs_identical_to_the_cpus(flags):
    # (The CPU's outputs of these options are held to the oracle and to snp-dists in test_cli and test_peers.)
    path = os.path.join(DATA, "sarscov2_338.fasta.gz")
    base = [sys.executable, "-m", "seqcompare", "hamming", "-q", *flags, path]
    cpu = subprocess.run(base, capture_output=True, check=True).stdout
    gpu = subprocess.run(base + ["--device", "cuda"], capture_output=True, check=True).stdout
    assert gpu == cpu and len(cpu) > 100


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


# -- the GPU's own paths: on-device pair selection, several devices, every 1-bit kernel shape ------------------


def pairs_oracle(X, Y, threshold):
    full = distances(("cpu", "vector", "planes"), X, Y)
    symmetric = Y is None
    return [(a, b, full[a, b]) for a in range(full.shape[0]) for b in range(full.shape[1])
            if full[a, b] <= threshold and (not symmetric or a < b)]  # fmt: skip


@pytest.mark.gpu
def test_gpu_pair_buffer_overflow_is_recounted(rng):
    from seqcompare.hamming.gpu import device_pairs

    X = random_alignment(rng, 200, 100, alphabet=b"ACGT")
    expected = pairs_oracle(X, None, 70)
    assert len(expected) > 1000
    got = device_pairs(encode_inputs(as_sequences(X)), 70, capacity=7)
    assert list(zip(*(x.tolist() for x in got))) == expected


@pytest.mark.gpu
@pytest.mark.parametrize("sorted_on_host_up_to", [0, 1 << 20])  # sorted by Thrust on the device, or by NumPy
def test_gpu_tiles_dealt_to_several_devices_give_the_same_pairs(rng, monkeypatch, sorted_on_host_up_to):
    import cupy

    import seqcompare.hamming.gpu
    from seqcompare.hamming.gpu import device_pairs

    monkeypatch.setattr(seqcompare.hamming.gpu, "HOST_SORT_PAIRS_UP_TO", sorted_on_host_up_to)
    X = random_alignment(rng, 900, 300, alphabet=b"ACGTN-")
    encoded = encode_inputs(as_sequences(X))
    expected = pairs_oracle(X, None, 150)
    visible = list(range(cupy.cuda.runtime.getDeviceCount()))
    for devices in ([0, 0, 0], visible, visible * 2):
        got = device_pairs(encoded, 150, devices=devices, chunks=3)
        assert list(zip(*(x.tolist() for x in got))) == expected


@pytest.mark.gpu
@pytest.mark.parametrize("symmetric", [True, False])
def test_gpu_pairs_with_every_kernel_shape(rng, symmetric):
    from seqcompare.cuda.bitgemm import CONFIGS
    from seqcompare.hamming.gpu import device_pairs

    X = random_alignment(rng, 777, 900, alphabet=b"ACGTN-")
    Y = None if symmetric else random_alignment(rng, 301, 900, alphabet=b"ACGTN-")
    encoded = encode_inputs(as_sequences(X), as_sequences(Y))
    threshold = int(np.percentile(distances(("cpu", "bitpack", "planes"), X, Y), 4))
    expected = run_hamming(encoded, PairsReduction(threshold, symmetric))
    assert 0 < expected[0].size < 777 * 301 // 10
    for config in CONFIGS:
        got = device_pairs(encoded, threshold, config=config, chunks=5)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b, err_msg=config)


@pytest.mark.gpu
def test_gpu_few_thousand_sequences(rng):
    X = random_alignment(rng, 3000, 700, alphabet=b"ACGTN-")
    np.testing.assert_array_equal(distances(("cuda", "auto", "planes"), X), distances(("cpu", "bitpack", "planes"), X))


def test_informative_sites_and_the_method_auto_takes(rng, sarscov2):
    from seqcompare.hamming.work import choose_method, informative_sites

    rows = random_alignment(rng, 30, 200, alphabet=b"ACGTN-acgt")
    rows[:, ::7] = ord("A")  # invariant sites
    rows[:5, 3::7] = ord("N")  # invariant but for missing data
    for alphabet in ("acgt", "all", "iupac"):
        encoded = encode_inputs(rows.view("S1"), alphabet=alphabet)
        codes = encoded.codes("left")
        expected = [s for s in range(codes.shape[1]) if len(set(codes[:, s].tolist()) - {0}) >= 2]
        assert informative_sites(encoded).tolist() == expected
    # auto: the matrix method on informative sites for a small problem, bitpack when the GEMMs would be long
    assert choose_method(encode_inputs(sarscov2), "auto", "cpu") == "matrix"
    larger = encode_inputs(random_alignment(rng, 2000, 3000))
    assert choose_method(larger, "auto", "cpu") == "sparse"
    assert choose_method(larger, "auto", "cpu", capped=True) == "bitpack"  # the planes stop counting at a cap
    assert choose_method(encode_inputs(sarscov2), "bitpack", "cpu") == "bitpack"


@pytest.fixture(params=[0.0, None, np.inf], ids=["every-deviating-site-in-planes", "measured-share", "all-lists"])
def heavy_share(request, monkeypatch):
    """The sparse method's split between planes and lists: forced to each extreme, and as shipped."""
    from seqcompare.hamming import sparse

    if request.param is not None:
        monkeypatch.setattr(sparse, "HEAVY_PAIR_SHARE", request.param)
    return request.param


def close_genomes(seed, n, m):
    """Related sequences as :func:`seqcompare.simulate.simulate_alignment` makes them, with lower-case letters,
    ambiguity codes and a column whose majority is an ambiguity code (a consensus that two different bases are
    both compatible with under ``iupac``)."""
    from seqcompare.simulate import simulate_alignment

    rng = np.random.default_rng(seed)
    _, rows = simulate_alignment(n, m, seed=seed, substitution_rate=0.08, n_rate=0.03, gap_length=7)
    rows = rows.copy()
    odd = rng.random(rows.shape) < 0.01
    rows[odd] = np.frombuffer(b"acgtRYKMnN*", np.uint8)[rng.integers(0, 11, int(odd.sum()))]
    rows[:, 3] = ord("R")
    rows[: n // 3, 3] = np.frombuffer(b"AGCT", np.uint8)[rng.integers(0, 4, n // 3)]
    return rows


@pytest.mark.parametrize("threads", [1, 2])
def test_sparse_split_equals_definition(heavy_share, threads):
    """Both parts of the sparse method (sites of few deviating rows as lists, the others as planes), alone and
    together, equal the character-level oracles: every alphabet, case kept or folded, a rectangle, a cap, tile
    edges that cut the lists into bands (and a site count that is not a multiple of the 8 sites read at once)."""
    from seqcompare.hamming.sparse import SparseOperands

    rows = close_genomes(threads, 45, 203)
    text = [bytes(r).decode() for r in rows]
    encoded = encode_inputs(rows.view("S1"))
    operands = SparseOperands([encoded.left], encoded.space, encoded.table)
    if heavy_share is None:  # as shipped, these rows put sites both ways
        assert 0 < operands.heavy_sites.size < 203 and operands.lists[0].entries.size > 0
    options = {"method": "sparse", "threads": threads, "tile_size": 16}
    for alphabet, keep_case in [("acgt", False), ("all", False), ("all", True), ("acgt", True)]:
        got = distances(("cpu", "sparse", "planes"), rows, alphabet=alphabet, keep_case=keep_case, tile_size=16,
                        threads=threads)  # fmt: skip
        np.testing.assert_array_equal(got, char_level(rows, all_chars=alphabet == "all", keep_case=keep_case))
    expected = np.array([[iupac_oracle(a, b) for b in text] for a in text])
    np.testing.assert_array_equal(distances(("cpu", "sparse", "planes"), rows, alphabet="iupac", tile_size=16,
                                            threads=threads), expected)  # fmt: skip
    np.testing.assert_array_equal(seqcompare.hamming(text[:30], text[30:], **options), char_level(rows[:30], rows[30:]))
    capped = distances(("cpu", "sparse", "planes"), rows, max_count=9, tile_size=16, threads=threads)
    np.testing.assert_array_equal(capped, np.minimum(char_level(rows), 9))


def test_sparse_passes_in_one_block_of_rows(heavy_share, monkeypatch):
    """Long alignments run the passes over fewer blocks of rows (each block counts every site): one block alone
    gives the same lists."""
    from seqcompare.hamming import sparse

    monkeypatch.setattr(sparse, "_BLOCK_COUNT_BYTES", 1)
    rows = close_genomes(3, 40, 150)
    got = distances(("cpu", "sparse", "planes"), rows, tile_size=16, threads=2)
    np.testing.assert_array_equal(got, char_level(rows))


def test_sparse_categorical_and_wide_values(heavy_share, rng):
    """Value arrays: codes with no byte table go into lists as they are; more than 256 categories keep every site
    in planes."""
    values = np.repeat(rng.integers(-3, 4, size=(1, 90)), 40, axis=0)
    flip = rng.random(values.shape) < 0.05
    values[flip] = rng.integers(-3, 4, size=int(flip.sum()))
    expected = (values[:, None, :] != values[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(seqcompare.hamming(values, method="sparse", tile_size=7), expected)
    wide = np.repeat(rng.integers(0, 600, size=(1, 50)), 30, axis=0)
    wide[rng.random(wide.shape) < 0.1] = 7
    expected = (wide[:, None, :] != wide[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(seqcompare.hamming(wide, method="sparse"), expected)


def test_sparse_on_the_simulated_outbreak_equals_bitpack(rng):
    """A larger simulated outbreak (a clade's sites in planes, the rest in lists) through the lower-triangle and
    pairs reductions: equal to the bitpack kernel, which shares no code with the lists."""
    from seqcompare.simulate import simulate_alignment

    _, rows = simulate_alignment(700, 2011, seed=5)
    text = [bytes(r).decode() for r in rows]
    matrix = seqcompare.hamming(text, method="sparse", threads=2)
    np.testing.assert_array_equal(matrix, seqcompare.hamming(text, method="bitpack", threads=2))
    i, j = np.nonzero(np.triu(matrix <= 30, 1))
    got = seqcompare.hamming_pairs(text, max_dist=30, method="sparse")
    assert i.size > 100
    for values, wanted in zip(got, (i, j, matrix[i, j]), strict=True):
        np.testing.assert_array_equal(values, wanted)
