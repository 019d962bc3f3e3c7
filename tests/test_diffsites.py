"""Which sites differ (issue 18, item 5): the sites listed for a pair are those a character-level oracle finds,
as many as the pair's distance, with the two characters as the file holds them."""

import numpy as np
import pytest
from conftest import DEVICES

import seqcompare
from seqcompare.cli import main
from seqcompare.simulate import write_fasta

ALPHABET = np.frombuffer(b"ACGTACGTACGTacgtNRY-?WSKM", dtype=np.uint8)
SETS = {"A": "A", "C": "C", "G": "G", "T": "T", "U": "T", "R": "AG", "Y": "CT", "S": "CG", "W": "AT", "K": "GT",
        "M": "AC", "B": "CGT", "D": "AGT", "H": "ACT", "V": "ACG", "N": "ACGT", "?": "ACGT"}  # fmt: skip


def sequences_of(rng, n=30, m=120):
    root = ALPHABET[rng.integers(0, ALPHABET.size, m)]
    rows = np.repeat(root[None], n, axis=0)
    hit = rng.random(rows.shape) < 0.1
    rows[hit] = ALPHABET[rng.integers(0, ALPHABET.size, int(hit.sum()))]
    return [row.tobytes().decode() for row in rows]


def oracle_differs(x: str, y: str, rules: str) -> bool:
    """One site, character by character."""
    a, b = x.upper(), y.upper()
    if rules == "acgt":
        return a != b and a in "ACGT" and b in "ACGT"
    if rules == "all":
        return a != b
    if rules == "iupac":
        return a in SETS and b in SETS and a != "?" and b != "?" and not set(SETS[a]) & set(SETS[b])
    if a == "-" or b == "-":
        return False
    if rules == "tn93-resolve":  # an ambiguity resolves to a shared base: only disjoint sets differ
        return not set(SETS[a]) & set(SETS[b])
    return not (SETS[a] == SETS[b] and len(SETS[a]) == 1 and "U" not in (a, b))  # average: only a base pair


def oracle(sequences, pairs, rules):
    return [(i, j, c) for i, j in pairs for c, (x, y) in enumerate(zip(sequences[i], sequences[j]))
            if oracle_differs(x, y, rules)]  # fmt: skip


@pytest.mark.parametrize("alphabet", ["acgt", "all", "iupac"])
def test_sites_equal_the_oracle_and_count_the_distance(rng, alphabet):
    sequences = sequences_of(rng)
    if alphabet == "iupac":  # "?" is not an IUPAC code; the iupac alphabet reads it as missing
        sequences = [s.replace("?", "N") for s in sequences]
    matrix = seqcompare.hamming(sequences, alphabet=alphabet)
    median = int(np.median(matrix[np.triu_indices(len(sequences), 1)]))
    i, j, d = seqcompare.hamming_pairs(sequences, max_dist=median, alphabet=alphabet)
    assert 100 < i.size < 435
    got = seqcompare.differing_sites(sequences, i, j, alphabet=alphabet)
    assert list(zip(*(a.tolist() for a in got))) == oracle(sequences, list(zip(i.tolist(), j.tolist())), alphabet)
    assert np.array_equal(np.bincount(np.searchsorted(i * 1000 + j, got[0] * 1000 + got[1]), minlength=i.size), d)


@pytest.mark.parametrize("ambiguities", ["resolve", "average"])
def test_tn93_sites_follow_its_ambiguity_rules(rng, ambiguities):
    sequences = [s.replace("?", "N") for s in sequences_of(rng)]
    pairs = [(a, b) for a in range(len(sequences)) for b in range(a + 1, len(sequences))][::7]
    i, j = (np.array(column) for column in zip(*pairs))
    got = seqcompare.differing_sites(sequences, i, j, model="tn93", ambiguities=ambiguities)
    assert list(zip(*(a.tolist() for a in got))) == oracle(sequences, pairs, f"tn93-{ambiguities}")


@pytest.mark.parametrize("device", DEVICES)
def test_command_lists_the_sites_of_its_pairs_and_of_given_pairs(tmp_path, rng, device):
    sequences = sequences_of(rng)
    names = [f"seq {k}" if k % 9 == 0 else f"s{k}" for k in range(len(sequences))]  # a name CSV must quote
    fasta = tmp_path / "a.fa"
    write_fasta(fasta, [n.replace(" ", "_") for n in names],
                np.frombuffer("".join(sequences).encode(), np.uint8).reshape(len(sequences), -1))  # fmt: skip
    names = [n.replace(" ", "_") for n in names]
    common = ["hamming", str(fasta), "-q", "--device", device]
    assert main([*common, "--max-dist", "15", "-o", str(tmp_path / "pairs.tsv"),
                 "--diff-sites", str(tmp_path / "sites.tsv")]) == 0  # fmt: skip
    lines = (tmp_path / "sites.tsv").read_text().splitlines()
    assert lines[0] == "sequence_1\tsequence_2\tcolumn\tbase_1\tbase_2"
    i, j, _ = seqcompare.hamming_pairs(sequences, max_dist=15)
    expected = [f"{names[a]}\t{names[b]}\t{c + 1}\t{sequences[a][c]}\t{sequences[b][c]}"
                for a, b, c in oracle(sequences, list(zip(i.tolist(), j.tolist())), "acgt")]  # fmt: skip
    assert lines[1:] == expected and len(expected) > 100
    # The same pairs read back from the pairs output, and from veg/tn93's CSV of TN93 links.
    assert main([*common, "--diff-pairs", str(tmp_path / "pairs.tsv"), "--diff-sites", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again").read_text() == (tmp_path / "sites.tsv").read_text()
    assert main([*common, "--model", "tn93", "--max-dist", "0.2", "--csv", "-o", str(tmp_path / "links.csv"),
                 "--diff-sites", str(tmp_path / "tn93.csv")]) == 0  # fmt: skip
    assert main([*common, "--model", "tn93", "--csv", "--diff-pairs", str(tmp_path / "links.csv"),
                 "--diff-sites", str(tmp_path / "tn93_again.csv")]) == 0  # fmt: skip
    assert (tmp_path / "tn93_again.csv").read_text() == (tmp_path / "tn93.csv").read_text()
    assert len((tmp_path / "tn93.csv").read_text().splitlines()) > 10


@pytest.mark.parametrize("arguments, message", [
    (["--diff-sites", "OUT"], "add --max-dist D or --diff-pairs"),
    (["--diff-pairs", "PAIRS"], "add it"),
    (["--diff-pairs", "PAIRS", "--diff-sites", "OUT", "-o", "X"], "cannot be combined with -o"),
    (["--diff-pairs", "BAD", "--diff-sites", "OUT"], "line 3: second name 'nope' is not a sequence"),
])  # fmt: skip
def test_bad_diff_sites_options_get_one_line(tmp_path, capsys, arguments, message):
    fasta = tmp_path / "a.fa"
    fasta.write_text(">s1\nACGT\n>s2\nACGA\n")
    (tmp_path / "PAIRS").write_text("s1\ts2\n")
    (tmp_path / "BAD").write_text("ID1,ID2\ns1,s2\ns1,nope\n")
    arguments = [str(tmp_path / a) if a in ("OUT", "PAIRS", "BAD", "X") else a for a in arguments]
    assert main(["hamming", str(fasta), "-q", *arguments]) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["BAD", "PAIRS", "a.fa"]
