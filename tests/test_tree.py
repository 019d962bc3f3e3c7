"""Neighbour-joining trees and PHYLIP output (issue 18, item 6).

The compiled join is checked bit for bit against the plain oracle (``reference.nj_reference``), and both against
the property that defines the method: on an additive (tree) metric, neighbour joining returns that tree, so the
path lengths of the Newick it writes give back every input distance.
"""

import os

import numpy as np
import pytest
from conftest import DATA

import seqcompare
from seqcompare.cli import main
from seqcompare.errors import InputError
from seqcompare.hamming.reference import nj_reference
from seqcompare.hamming.tree import nj_tree


def parse_newick(text):
    """``(parent, length, leaf name)`` per node of a Newick string (node 0 the root); quoted names allowed."""
    parent, length, name = [-1], [0.0], [None]
    stack, position, current = [0], 0, 0
    assert text.endswith(";")
    while position < len(text) - 1:
        character = text[position]
        if character == "(":
            parent.append(stack[-1]), length.append(0.0), name.append(None)
            stack.append(len(parent) - 1)
            position += 1
        elif character in ",)":
            if character == ")":
                current = stack.pop()
            position += 1
        elif character == ":":
            end = position + 1
            while text[end] not in ",);":
                end += 1
            length[current] = float(text[position + 1 : end])
            position = end
        else:  # a leaf name, quoted or bare
            if character == "'":
                end, label = position + 1, ""
                while True:
                    if text[end] == "'" and text[end + 1 : end + 2] == "'":
                        label, end = label + "'", end + 2
                    elif text[end] == "'":
                        break
                    else:
                        label, end = label + text[end], end + 1
                position = end + 1
            else:
                end = position
                while text[end] not in ":,);":
                    end += 1
                label, position = text[position:end], end
            parent.append(stack[-1]), length.append(0.0), name.append(label)
            current = len(parent) - 1
    # The outer parentheses are the root; the first "(" made node 1 under the placeholder 0: make it the root.
    return parent, length, name


def path_lengths(text, names):
    parent, length, label = parse_newick(text)
    index = {name: k for k, name in enumerate(label) if name is not None}
    assert sorted(index) == sorted(names)

    def to_root(node):
        path, total = {}, 0.0
        while node > 0:
            path[node] = total
            total += length[node]
            node = parent[node]
        path[0] = total
        return path

    result = np.zeros((len(names), len(names)))
    for a, first in enumerate(names):
        up = to_root(index[first])
        for b, second in enumerate(names):
            node, total = index[second], 0.0
            while node not in up:
                total += length[node]
                node = parent[node]
            result[a, b] = total + up[node]
    return result


def random_tree_metric(rng, n):
    """Path lengths between the leaves of a random binary tree with whole-number branch lengths 1..9."""
    edges, nodes = [], list(range(n))
    label = n
    while len(nodes) > 1:
        a, b = rng.choice(len(nodes), 2, replace=False)
        for child in (nodes[a], nodes[b]):
            edges.append((label, child, int(rng.integers(1, 10))))
        nodes = [x for k, x in enumerate(nodes) if k not in (a, b)] + [label]
        label += 1
    neighbours = {}
    for u, v, w in edges:
        neighbours.setdefault(u, []).append((v, w))
        neighbours.setdefault(v, []).append((u, w))
    metric = np.zeros((n, n))
    for start in range(n):
        seen, frontier = {start: 0}, [start]
        while frontier:
            node = frontier.pop()
            for other, w in neighbours[node]:
                if other not in seen:
                    seen[other] = seen[node] + w
                    frontier.append(other)
        metric[start] = [seen[k] for k in range(n)]
    return metric


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 9, 60, 140])
def test_join_equals_the_plain_oracle_bit_for_bit(rng, n):
    for decimals in (0, 3):  # whole numbers tie often; three decimals rarely
        matrix = np.round(rng.random((n, n)) * 20, decimals)
        matrix = matrix + matrix.T
        np.fill_diagonal(matrix, 0)
        names = [f"s{k}" for k in range(n)]
        expected = nj_reference(matrix, names)
        for threads in (1, 2):
            assert nj_tree(matrix, names, threads=threads) == expected


@pytest.mark.parametrize("n", [4, 7, 30, 90])
def test_an_additive_metric_gives_back_its_tree(rng, n):
    metric = random_tree_metric(rng, n)
    names = [f"leaf{k}" for k in range(n)]
    assert np.allclose(path_lengths(nj_tree(metric, names), names), metric, rtol=0, atol=1e-9)


def test_names_are_quoted_for_newick():
    tree = nj_tree([[0, 1, 2], [1, 0, 2], [2, 2, 0]], ["a b", "it's", "c"])
    assert tree == "('a b':0.5,'it''s':0.5,c:1.5);"
    assert sorted(n for n in parse_newick(tree)[2] if n) == ["a b", "c", "it's"]


def test_command_writes_the_tree_and_phylip_of_the_bundled_genomes(tmp_path, sarscov2, sarscov2_oracle):
    sarscov2_fasta = os.path.join(DATA, "sarscov2_338.fasta.gz")
    assert main(["hamming", sarscov2_fasta, "-q", "--tree", "nj", "-o", str(tmp_path / "tree.nwk")]) == 0
    tree = (tmp_path / "tree.nwk").read_text()
    assert tree == nj_tree(sarscov2_oracle, sarscov2.names) + "\n"
    assert sorted(n for n in parse_newick(tree.strip())[2] if n) == sorted(sarscov2.names)
    assert main(["hamming", sarscov2_fasta, "-q", "--format", "phylip", "-o", str(tmp_path / "m.phy")]) == 0
    lines = (tmp_path / "m.phy").read_text().splitlines()
    assert lines[0] == str(len(sarscov2.names)) and len(lines) == len(sarscov2.names) + 1
    for line, name, row in zip(lines[1:], sarscov2.names, sarscov2_oracle):
        assert line.split(" ") == [name, *map(str, row)]
    # With a model, floats as the other outputs write them.
    assert main(["hamming", sarscov2_fasta, "-q", "--model", "p", "--format", "phylip", "-o",
                 str(tmp_path / "p.phy")]) == 0  # fmt: skip
    p = seqcompare.model_distances(sarscov2, model="p")
    first = (tmp_path / "p.phy").read_text().splitlines()[2].split(" ")
    assert first[0] == sarscov2.names[1] and first[1:] == ["%g" % v for v in p[1]]


def test_missing_distances_are_refused(tmp_path, capsys):
    fasta = tmp_path / "a.fa"
    fasta.write_text(">a\nACGT----\n>b\n----ACGT\n>c\nACGTACGT\n")
    for layout in (["--tree", "nj"], ["--format", "phylip"]):
        assert main(["hamming", str(fasta), "-q", "--model", "p", *layout, "-o", str(tmp_path / "out")]) != 0
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and "missing" in error[0]
    assert not (tmp_path / "out").exists()
    with pytest.raises(InputError, match="'a' and 'b'"):
        nj_tree(seqcompare.model_distances(str(fasta), model="p"), ["a", "b", "c"])


@pytest.mark.parametrize("arguments, message", [
    (["--tree", "nj", "--ref", "SELF"], "cannot be combined with --ref"),
    (["--format", "phylip", "--max-dist", "3"], "cannot be combined with --max-dist"),
    (["--format", "phylip", "--tree", "nj"], "choose one"),
])  # fmt: skip
def test_bad_tree_options_get_one_line(tmp_path, capsys, arguments, message):
    fasta = tmp_path / "a.fa"
    fasta.write_text(">a\nACGT\n>b\nACGA\n")
    arguments = [str(fasta) if a == "SELF" else a for a in arguments]
    assert main(["hamming", str(fasta), "-q", *arguments, "-o", str(tmp_path / "out")]) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0]
    assert not (tmp_path / "out").exists()
