"""``seqcompare plot heatmap`` (issue 18, item 6): the single-linkage order against a plain agglomerative
oracle, the matrix readers against the outputs that ``seqcompare hamming`` writes, and the pictures themselves
(PNG and SVG, names when they fit, missing values, bad input)."""

import os

import numpy as np
import pytest
from conftest import DATA

import seqcompare
from seqcompare.cli import main
from seqcompare.plot.api import heatmap, read_matrix, single_linkage_order

pytest.importorskip("matplotlib")  # the [plot] extra; CI installs it with [test]


def agglomerative_order(matrix):
    """Single linkage the long way: merge the two closest groups (least distance between members) until one is
    left; the group holding the earlier item goes first."""
    groups = [[k] for k in range(len(matrix))]
    while len(groups) > 1:
        _, x, y = min((min(matrix[a][b] for a in first for b in second), x, y)
                      for x, first in enumerate(groups) for y, second in enumerate(groups) if x < y)  # fmt: skip
        first, second = sorted((groups[x], groups[y]), key=min)
        groups = [g for k, g in enumerate(groups) if k not in (x, y)] + [first + second]
    return groups[0]


@pytest.mark.parametrize("n", [1, 2, 5, 17, 60])
def test_order_equals_agglomerative_single_linkage(rng, n):
    matrix = rng.random((n, n))
    matrix = matrix + matrix.T  # distinct distances: no ties
    np.fill_diagonal(matrix, 0)
    assert single_linkage_order(matrix).tolist() == agglomerative_order(matrix.tolist())


def test_clusters_are_contiguous_in_the_order(sarscov2, sarscov2_oracle):
    order = single_linkage_order(sarscov2_oracle)
    for threshold in (0, 1, 2, 5):
        labels = seqcompare.clusters(sarscov2, max_dist=threshold)[order]
        runs = labels[np.r_[True, labels[1:] != labels[:-1]]]
        assert runs.size == np.unique(labels).size  # each cluster one run
    missing = sarscov2_oracle[:30, :30].astype(float)
    missing[3, 7] = missing[7, 3] = np.nan
    assert sorted(single_linkage_order(missing).tolist()) == list(range(30))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, sarscov2_oracle, sarscov2):
    folder = tmp_path_factory.mktemp("plot")
    fasta = os.path.join(DATA, "sarscov2_338.fasta.gz")
    for name, options in (("m.tsv", []), ("m.csv", ["-c"]), ("m.phy", ["--format", "phylip"]),
                          ("p.tsv", ["--model", "p"])):  # fmt: skip
        assert main(["hamming", fasta, "-q", "-o", str(folder / name), *options]) == 0
    assert main(["hamming", fasta, "-q", "--npy", str(folder / "m.npy")]) == 0
    return folder


def test_readers_give_back_the_matrix(outputs, sarscov2_oracle, sarscov2):
    for name in ("m.tsv", "m.csv", "m.phy", "m.npy"):
        matrix, rows, columns = read_matrix(outputs / name)
        assert np.array_equal(matrix, sarscov2_oracle) and rows == columns == sarscov2.names
    p, rows, _ = read_matrix(outputs / "p.tsv")
    assert np.allclose(p, seqcompare.model_distances(sarscov2, model="p"), rtol=1e-5, atol=0)


def test_pictures(outputs, tmp_path, sarscov2):
    assert main(["plot", "heatmap", str(outputs / "m.tsv"), "-q", "-o", str(tmp_path / "all.png")]) == 0
    assert (tmp_path / "all.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    matrix, names, _ = read_matrix(outputs / "m.npy")
    small = matrix[:25, :25].astype(float)
    small[2, 5] = small[5, 2] = np.nan
    with open(tmp_path / "small.svg", "wb") as out:
        order = heatmap(small, names[:25], out, file_format="svg", label="SNPs")
    svg = (tmp_path / "small.svg").read_text()
    assert all(name in svg for name in names[:25]) and "grey: missing" in svg
    assert order.tolist() == single_linkage_order(small).tolist()
    # Past --max-labels no name is written.
    assert main(["plot", "heatmap", str(outputs / "m.npy"), "-q", "--max-labels", "10", "-o",
                 str(tmp_path / "unlabelled.svg")]) == 0  # fmt: skip
    assert names[0] not in (tmp_path / "unlabelled.svg").read_text()


@pytest.mark.parametrize("content, output, message", [
    ("2\na 0 1\n", "out.png", "PHYLIP says 2 sequences but has 1 rows"),
    ("\ta\tb\na\t0\tx\nb\t1\t0\n", "out.png", "line 2: 'x' is not a number"),
    ("\ta\tb\na\t0\t1\nb\t1\t0\n", "out.jpg", "suffix"),
])  # fmt: skip
def test_bad_input_gets_one_line(tmp_path, capsys, content, output, message):
    (tmp_path / "m.tsv").write_text(content)
    assert main(["plot", "heatmap", str(tmp_path / "m.tsv"), "-q", "-o", str(tmp_path / output)]) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tsv"]
