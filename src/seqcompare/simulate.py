"""Seeded simulators of realistic inputs, for benchmarks and tests."""

from __future__ import annotations

import numpy as np

_BASES = np.frombuffer(b"ACGT", dtype=np.uint8)


def simulate_alignment(n: int, m: int, *, seed: int = 0, substitution_rate: float = 0.015,
                       n_rate: float = 0.005, gap_runs: int = 3, gap_length: int = 30,
                       lineages: int = 8, private_rate: float | None = None):  # fmt: skip
    """A DNA alignment of related sequences, like an outbreak's genomes against one reference.

    A random root gains ``substitution_rate / 2`` substitutions per site in each of ``lineages`` founder
    lineages, then each sequence copies a random founder and gains ``private_rate`` (default
    ``substitution_rate / 2``) of its own (so by default a sequence carries about ``substitution_rate`` per site
    relative to the root). Many lineages with a small ``private_rate`` give clusters of close sequences. A fraction
    ``n_rate`` of its sites becomes N, and ``gap_runs`` runs of ``gap_length`` '-' are placed at random.

    Returns
    -------
    names : list of str
    sequences : ndarray of uint8, shape (n, m)
    """
    rng = np.random.default_rng(seed)
    root = _BASES[rng.integers(0, 4, m)]

    def sites(rows: np.ndarray, rate: float) -> np.ndarray:
        # As many sites as Bernoulli(rate) trials would hit, drawn directly: a billion-site alignment
        # then costs a few million draws instead of a billion.
        return rng.integers(0, rows.size, rng.binomial(rows.size, rate))

    def mutate(rows: np.ndarray, rate: float) -> None:
        flat = rows.reshape(-1)
        hits = sites(rows, rate)
        # A substitution always changes the base: add 1..3 modulo 4 in base index space.
        index = np.searchsorted(_BASES, flat[hits])
        flat[hits] = _BASES[(index + rng.integers(1, 4, index.size)) % 4]

    founders = np.repeat(root[None, :], max(1, lineages), axis=0)
    mutate(founders, substitution_rate / 2)
    sequences = founders[rng.integers(0, founders.shape[0], n)]
    mutate(sequences, substitution_rate / 2 if private_rate is None else private_rate)
    sequences.reshape(-1)[sites(sequences, n_rate)] = ord("N")
    if m > gap_length and gap_runs > 0:
        starts = rng.integers(0, m - gap_length, (n, gap_runs))
        rows = np.arange(n)[:, None]
        for offset in range(gap_length):
            sequences[rows, starts + offset] = ord("-")
    names = [f"seq{i + 1}" for i in range(n)]
    return names, sequences


def format_fasta(names, sequences, *, width: int = 0):
    """Yield FASTA text in chunks of bytes; ``width > 0`` wraps sequence lines at that many characters."""
    for name, row in zip(names, sequences):
        data = row.tobytes()
        if width > 0:
            data = b"\n".join(data[start : start + width] for start in range(0, len(data), width))
        yield b">" + name.encode() + b"\n" + data + b"\n"


def write_fasta(path, names, sequences, *, width: int = 0) -> None:
    """Write sequences as a FASTA file (see :func:`format_fasta`)."""
    with open(path, "wb") as handle:
        for chunk in format_fasta(names, sequences, width=width):
            handle.write(chunk)
