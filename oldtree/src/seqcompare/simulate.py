"""Seeded simulators of realistic inputs, for benchmarks and tests."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass
class ScanData:
    """Simulated scan inputs (see :func:`simulate_scan`) and where the signatures were planted."""

    signatures: object  # SequenceSet
    samples: object  # SequenceSet with qualities
    planted: list  # (sample index, signature index, offset)


def simulate_scan(*, n_signatures: int = 1000, signature_length=(3000, 10000), n_clean: int = 2000,
                  n_infected: int = 20, max_per_sample: int = 2, sample_length=(100_000, 200_000),
                  phred=(10, 30), n_ratio: float = 0.1, seed: int = 0, stamp: str | None = None) -> ScanData:  # fmt: skip
    """Signatures and FASTQ samples built the way the course's generators build them (our own code).

    Signatures: lengths uniform in ``signature_length``, bases uniform over ACGT, each then N with probability
    ``n_ratio``. Samples: ``n_clean`` virus-free and ``n_infected`` carrying 1..``max_per_sample`` signatures
    chosen uniformly with replacement, in random order; length uniform in ``sample_length`` (raised to hold
    what is planted); signatures inserted verbatim, with their own Ns, between uniform ACGT flanks that have N
    at ``n_ratio``. Qualities: per sample a mean uniform in ``phred``, each base Normal(mean, 3) rounded and
    clamped to 0..93; N bases get Phred 0. Names ``signature_<stamp>_<k>`` and ``sample_<stamp>_<k>``.
    """
    from .io.sequences import SequenceSet

    rng = np.random.default_rng(seed)
    stamp = str(seed) if stamp is None else stamp

    def random_bases(count: int) -> np.ndarray:
        codes = rng.integers(0, 4, count).astype(np.uint8)
        codes[rng.random(count) < n_ratio] = 4
        return codes

    sig_lengths = rng.integers(signature_length[0], signature_length[1] + 1, n_signatures)
    sig_offsets = np.zeros(n_signatures + 1, dtype=np.int64)
    np.cumsum(sig_lengths, out=sig_offsets[1:])
    sig_codes = random_bases(int(sig_offsets[-1]))
    signatures = SequenceSet([f"signature_{stamp}_{k}" for k in range(n_signatures)], sig_codes, sig_offsets,
                             source="simulated signatures")  # fmt: skip

    infected = np.zeros(n_clean + n_infected, dtype=bool)
    infected[:n_infected] = True
    rng.shuffle(infected)
    rows, quals, planted = [], [], []
    for i, carries in enumerate(infected):
        chosen = rng.integers(0, n_signatures, rng.integers(1, max_per_sample + 1)) if carries else []
        inserts = [sig_codes[sig_offsets[s] : sig_offsets[s + 1]] for s in chosen]
        length = int(rng.integers(sample_length[0], sample_length[1] + 1))
        length = max(length, sum(len(x) for x in inserts))
        flank = length - sum(len(x) for x in inserts)
        cuts = np.sort(rng.integers(0, flank + 1, len(inserts)))
        parts, at, previous = [], 0, 0
        for s, insert, cut in zip(chosen, inserts, cuts):
            parts.append(random_bases(int(cut - previous)))
            at += int(cut - previous)
            planted.append((i, int(s), at))
            parts.append(insert)
            at += insert.size
            previous = cut
        parts.append(random_bases(int(flank - previous)))
        row = np.concatenate(parts) if parts else np.empty(0, np.uint8)
        mean = rng.uniform(phred[0], phred[1])
        quality = np.clip(np.rint(rng.normal(mean, 3.0, row.size)), 0, 93).astype(np.uint8)
        quality[row == 4] = 0
        rows.append(row)
        quals.append(quality)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([r.size for r in rows], out=offsets[1:])
    samples = SequenceSet([f"sample_{stamp}_{k}" for k in range(len(rows))], np.concatenate(rows),
                          offsets, np.concatenate(quals), source="simulated samples")  # fmt: skip
    return ScanData(signatures, samples, planted)


def _open_for_writing(target):
    import contextlib

    if hasattr(target, "write"):
        return contextlib.nullcontext(target)
    return open(target, "wb")


def write_fastq(target, samples) -> None:
    """Write a :class:`~seqcompare.io.sequences.SequenceSet` with qualities as 4-line FASTQ (Phred+33) to a
    path or a binary file object."""
    from .io.sequences import BASES

    letters = np.frombuffer(BASES, dtype=np.uint8)
    with _open_for_writing(target) as handle:
        for i, name in enumerate(samples.names):
            lo, hi = samples.offsets[i], samples.offsets[i + 1]
            handle.write(b"@" + name.encode() + b"\n" + letters[samples.codes[lo:hi]].tobytes() + b"\n+\n"
                         + (samples.quality[lo:hi] + 33).tobytes() + b"\n")  # fmt: skip


def write_sequences_fasta(target, sequences, *, width: int = 0) -> None:
    """Write a :class:`~seqcompare.io.sequences.SequenceSet` as FASTA (``width > 0`` wraps lines) to a path or
    a binary file object."""
    from .io.sequences import BASES

    letters = np.frombuffer(BASES, dtype=np.uint8)
    with _open_for_writing(target) as handle:
        for chunk in format_fasta(sequences.names, (letters[sequences.sequence(i)] for i in range(len(sequences))),
                                  width=width):  # fmt: skip
            handle.write(chunk)


_AMBIGUOUS_WITH = {ord("A"): b"RMWN", ord("C"): b"YMSN", ord("G"): b"RKSN", ord("T"): b"YKWN"}


def simulate_pol(n: int = 5000, m: int = 9000, *, seed: int = 0, ambiguity_rate: float = 0.003,
                 cluster_size: int = 10, divergence: float = 0.06, within: float = 0.004):  # fmt: skip
    """An alignment like HIV-1 pol sequences from surveillance: A-rich, clusters of close sequences, IUPAC codes.

    A root with pol's base composition (A 0.38, C 0.17, G 0.23, T 0.22) gains ``divergence`` substitutions per
    site on the way to each cluster's founder (about ``n / cluster_size`` founders), and each sequence gains
    ``within`` more of its own, so pairs inside a cluster sit near HIV-TRACE's 0.015 and pairs across clusters
    far beyond it. A fraction ``ambiguity_rate`` of the sites becomes an IUPAC code that contains the base (the
    mixtures of population sequencing: mostly two-base codes, some N), and a few sequences carry gap runs at
    their ends (shorter reads).

    Returns
    -------
    names : list of str
    sequences : ndarray of uint8, shape (n, m)
    """
    rng = np.random.default_rng(seed)
    root = _BASES[rng.choice(4, m, p=[0.38, 0.17, 0.23, 0.22])]
    n_founders = max(1, n // cluster_size)

    def mutate(rows: np.ndarray, rate: float) -> None:
        flat = rows.reshape(-1)
        hits = rng.integers(0, flat.size, rng.binomial(flat.size, rate))
        index = np.searchsorted(_BASES, flat[hits])
        flat[hits] = _BASES[(index + rng.integers(1, 4, index.size)) % 4]

    founders = np.repeat(root[None, :], n_founders, axis=0)
    mutate(founders, divergence)
    sequences = founders[rng.integers(0, n_founders, n)]
    mutate(sequences, within)
    flat = sequences.reshape(-1)
    hits = rng.integers(0, flat.size, rng.binomial(flat.size, ambiguity_rate))
    choice = rng.choice(4, hits.size, p=[0.3, 0.3, 0.3, 0.1])  # a two-base code holding the base, or N
    bases = flat[hits]
    for base, codes in _AMBIGUOUS_WITH.items():
        at = bases == base
        flat[hits[at]] = np.frombuffer(codes, dtype=np.uint8)[choice[at]]
    short = rng.random(n) < 0.2
    for row in np.flatnonzero(short):
        sequences[row, : rng.integers(1, 300)] = ord("-")
        sequences[row, m - rng.integers(1, 300) :] = ord("-")
    names = [f"pol{i + 1}" for i in range(n)]
    return names, sequences
