"""Public scan API: which signatures occur in which samples, where, and with what confidence."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..io.sequences import SequenceSet, record_sums, reverse_complement
from .index import DEFAULT_K, LADDER_RECIPE, SignatureIndex, scan_sample

REPORTS = ("first", "best", "all")
METHODS = ("auto", "index", "reference")
INTEGRITY_MODULUS = 97


@dataclass
class ScanResult:
    """Matches of a scan, one row each, sorted by sample, signature, strand and offset.

    Attributes
    ----------
    sample, signature : ndarray of int64
        Indices into ``sample_names`` and ``signature_names``.
    strand : ndarray of int8
        0: the signature as given; 1: its reverse complement (only with ``both_strands``).
    offset : ndarray of int64
        0-based start of the occurrence in the sample.
    quality_sum : ndarray of int64
        Sum of the sample's Phred scores over the occurrence (N bases count as 0).
    length : ndarray of int64
        Signature length (the window the score is averaged over).
    sample_names, signature_names : list of str
    integrity : ndarray of int64
        Per sample: the sum of all its Phred scores modulo 97 (the course's integrity field).
    """

    sample: np.ndarray
    signature: np.ndarray
    strand: np.ndarray
    offset: np.ndarray
    quality_sum: np.ndarray
    length: np.ndarray
    sample_names: list
    signature_names: list
    integrity: np.ndarray
    both_strands: bool = False
    report: str = "first"

    def __len__(self) -> int:
        return int(self.sample.size)

    @property
    def score(self) -> np.ndarray:
        """Confidence: mean Phred score of the sample over the occurrence."""
        return self.quality_sum / np.maximum(self.length, 1)

    def lines(self, *, tsv: bool = False, integrity: bool = False):
        """Yield output lines (str, no newline).

        The default is the course's format, ``sample: signature (score)`` with 3 decimals, then
        `` [integrity]`` when asked, `` offset=N`` for ``report="all"`` and `` strand=-`` for reverse-strand
        matches; ``tsv`` gives a header and columns sample, signature, offset, score (+ strand, integrity).
        """
        scores = self.score
        if tsv:
            header = ["sample", "signature", "offset", "score"]
            header += ["strand"] * self.both_strands + ["integrity"] * integrity
            yield "\t".join(header)
        for row in range(len(self)):
            sample = self.sample_names[self.sample[row]]
            signature = self.signature_names[self.signature[row]]
            score = f"{scores[row]:.3f}"
            if tsv:
                fields = [sample, signature, str(self.offset[row]), score]
                if self.both_strands:
                    fields.append("-" if self.strand[row] else "+")
                if integrity:
                    fields.append(str(self.integrity[self.sample[row]]))
                yield "\t".join(fields)
                continue
            line = f"{sample}: {signature} ({score})"
            if integrity:
                line += f" [{self.integrity[self.sample[row]]}]"
            if self.report == "all":
                line += f" offset={self.offset[row]}"
            if self.strand[row]:
                line += " strand=-"
            yield line


def _as_samples(samples, iupac_as_n: bool, threads) -> SequenceSet:
    if isinstance(samples, SequenceSet):
        if samples.quality is None:
            raise InputError("samples need Phred qualities (read them from FASTQ)")
        return samples
    if isinstance(samples, (str, os.PathLike)):
        from ..io.fastq import read_fastq

        return read_fastq(samples, iupac_as_n=iupac_as_n, threads=threads)
    raise TypeError("samples must be a FASTQ path or a SequenceSet with qualities")


def _as_signatures(signatures, iupac_as_n: bool) -> SequenceSet:
    if isinstance(signatures, SequenceSet):
        result = signatures
    elif isinstance(signatures, (str, os.PathLike)):
        from ..io.fasta import read_sequences

        result = read_sequences(signatures, iupac_as_n=iupac_as_n)
    elif isinstance(signatures, (list, tuple)):
        result = SequenceSet.from_strings(signatures, iupac_as_n=iupac_as_n, source="signatures")
    else:
        raise TypeError("signatures must be a FASTA path, a list of strings or a SequenceSet")
    empty = np.flatnonzero(result.lengths == 0)
    if empty.size:
        index = int(empty[0])
        raise InputError(f"{result.source}: signature #{index + 1} '{result.names[index]}' is empty")
    return result


def scan(samples, signatures, *, report: str = "first", min_score: float | None = None,
         both_strands: bool = False, iupac_as_n: bool = False, k: int = DEFAULT_K, method: str = "auto",
         device: str = "cpu", threads: int | None = None) -> ScanResult:  # fmt: skip
    """Find which signatures occur in which samples, exactly ('N' on either side matches any base).

    Parameters
    ----------
    samples : path or SequenceSet
        FASTQ file (plain or gzip), or sequences with Phred qualities.
    signatures : path, list of str, or SequenceSet
        FASTA file of signatures (e.g. viral genomes), or the sequences themselves.
    report : {"first", "best", "all"}
        Per (sample, signature): the leftmost occurrence, the one with the highest confidence (ties: the
        leftmost), or every occurrence.
    min_score : float, optional
        Occurrences whose confidence is below this do not count (``first`` is then the leftmost occurrence
        that reaches it).
    both_strands : bool
        Also look for the reverse complement of each signature. ``first``/``best`` then choose over both
        strands (ties: the signature as given).
    iupac_as_n : bool
        Read IUPAC codes other than N (R, Y, ...) as N instead of refusing them.
    k : int
        Index window length (1..13); the result does not depend on it, the speed does.
    method : {"auto", "index", "reference"}
        ``index``: k-mer index with the exact fallback (``auto``); ``reference``: brute force over every
        (sample, signature, offset), the oracle.
    device : {"cpu", "cuda", "auto"}
        Where to run the index method.
    threads : int, optional
        CPU threads (default: all available cores).

    Returns
    -------
    ScanResult
        Confidence = mean Phred score of the sample's bases over the occurrence.
    """
    from ..engine import default_threads

    if report not in REPORTS:
        raise ValueError(f"report must be one of {', '.join(REPORTS)}; got {report!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    threads = threads or default_threads()
    samples = _as_samples(samples, iupac_as_n, threads)
    signatures = _as_signatures(signatures, iupac_as_n)
    n_signatures = len(signatures)
    codes, offsets = signatures.codes, signatures.offsets
    if both_strands:
        reverse = np.empty_like(codes)
        reverse_complement(codes, offsets, reverse)
        codes = np.concatenate([codes, reverse])
        offsets = np.concatenate([offsets, offsets[1:] + offsets[-1]])
    report_all = report != "first"
    threshold = -1.0 if min_score is None else float(min_score)
    if method == "reference":
        rows = _reference_rows(samples, codes, offsets, report_all, threshold)
    else:
        from ..gpu._runtime import resolve_device

        if resolve_device(device) == "cuda":
            from ..gpu.scan import scan_on_gpu

            rows = scan_on_gpu(samples, codes, offsets, k, report_all, threshold, threads=threads)
        else:
            rows = _index_rows(samples, codes, offsets, k, report_all, threshold, threads)
    sample, index, offset, total = rows
    strand = (index >= n_signatures).astype(np.int8)
    signature = np.where(strand == 1, index - n_signatures, index)
    lengths = np.diff(signatures.offsets)[signature]
    keep = _select(report, sample, signature, strand, offset, total, lengths)
    integrity = _integrity(samples)
    return ScanResult(sample[keep], signature[keep], strand[keep], offset[keep], total[keep], lengths[keep],
                      samples.names, signatures.names, integrity, both_strands, report)  # fmt: skip


def _integrity(samples: SequenceSet) -> np.ndarray:
    return record_sums(samples.quality, samples.offsets) % INTEGRITY_MODULUS


def _select(report, sample, signature, strand, offset, total, lengths) -> np.ndarray:
    """Rows to keep, in output order: one per (sample, signature) for first/best, all otherwise."""
    if report == "best":
        # Highest mean quality (compared exactly as total_a * len_b vs total_b * len_a: same length here),
        # then leftmost, then the given strand.
        order = np.lexsort((strand, offset, -total, signature, sample))
    else:
        order = np.lexsort((strand, offset, signature, sample))
    if report == "all":
        key = np.stack([sample[order], signature[order], strand[order], offset[order]], axis=1)
        first_of = np.ones(order.size, dtype=bool)
        first_of[1:] = np.any(key[1:] != key[:-1], axis=1)
        return order[first_of]
    pair = np.stack([sample[order], signature[order]], axis=1)
    first_of = np.ones(order.size, dtype=bool)
    first_of[1:] = np.any(pair[1:] != pair[:-1], axis=1)
    chosen = order[first_of]
    return chosen[np.lexsort((signature[chosen], sample[chosen]))]


def _reference_rows(samples: SequenceSet, codes, offsets, report_all: bool, threshold: float):
    from .reference import occurrence_offsets

    rows = []
    for i in range(len(samples)):
        x = samples.sequence(i)
        prefix = np.zeros(x.size + 1, dtype=np.int64)
        np.cumsum(samples.quality[samples.offsets[i] : samples.offsets[i + 1]], out=prefix[1:])
        for s in range(offsets.size - 1):
            signature = codes[offsets[s] : offsets[s + 1]]
            for o in occurrence_offsets(x, signature):
                total = int(prefix[o + signature.size] - prefix[o])
                if total < threshold * signature.size:
                    continue
                rows.append((i, s, int(o), total))
                if not report_all:
                    break
    table = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return table[:, 0], table[:, 1], table[:, 2], table[:, 3]


def _index_rows(samples: SequenceSet, codes, offsets, k: int, report_all: bool, threshold: float, threads: int):
    index = SignatureIndex(codes, offsets, k)
    n_samples = len(samples)
    # Tasks of consecutive samples of about equal total length.
    cuts = np.searchsorted(samples.offsets, np.linspace(0, samples.offsets[-1], 8 * threads + 1))
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n_samples), [n_samples]]))

    def task(lo_hi):
        lo, hi = lo_hi
        parts = []
        candidates = np.empty(1 << 16, dtype=np.int64)
        out = [np.empty(max(64, 2 * len(index)), dtype=np.int64) for _ in range(3)]
        for i in range(lo, hi):
            sample = samples.sequence(i)
            quality = samples.quality[samples.offsets[i] : samples.offsets[i + 1]]
            while True:
                count = scan_sample(sample, quality, index.codes, index.offsets, index.lengths, k, index.bitmap,
                                    index.word_rank, index.key_start, index.entry_sig, index.entry_pos,
                                    index.run_offsets,
                                    index.run_starts, index.run_levels, index.max_level, LADDER_RECIPE, report_all,
                                    threshold, candidates, out[0], out[1], out[2])  # fmt: skip
                if count == -1:
                    candidates = np.empty(2 * candidates.size, dtype=np.int64)
                elif count == -2:
                    out = [np.empty(2 * out[0].size, dtype=np.int64) for _ in range(3)]
                else:
                    break
            if count:
                parts.append((np.full(count, i, dtype=np.int64), out[0][:count].copy(), out[1][:count].copy(),
                              out[2][:count].copy()))  # fmt: skip
        return parts

    with ThreadPoolExecutor(threads) as pool:
        pieces = [part for parts in pool.map(task, zip(bounds[:-1], bounds[1:])) for part in parts]
    if not pieces:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, empty
    return tuple(np.concatenate(column) for column in zip(*pieces))
