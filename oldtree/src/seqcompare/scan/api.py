"""Public scan API: which signatures occur in which samples, where, and with what confidence."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

import numpy as np

from .. import validation
from ..errors import InputError
from ..io.sequences import COMPLEMENT_CODES, NumberedNames, SequenceSet, iupac_codes, reverse_complement
from .common import DEFAULT_COVERAGE_KMER, DEFAULT_K, MAX_K, METHODS, REPORTS

# Signatures of at most this many bases (strands included) get their CPU index only when a scan needs it: a
# scan of a few short samples compares them outright (.sweep) and never loads the compiled index kernels.
DEFERRED_INDEX_BASES = 1 << 14

INTEGRITY_MODULUS = 97


@dataclass
class ScanResult:
    """Matches of a scan, one row each, sorted by sample, signature, offset and strand.

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
        The sample bases the occurrence spans (the window the score is averaged over): the signature's length,
        or for edits the aligned span.
    sample_names, signature_names : list of str
    integrity : ndarray of int64 (property)
        Per match: the sum of all the matched sample's Phred scores modulo 97 (a check that two runs read the same
        qualities). Computed on first use, from the matched samples' qualities, which the result holds until then.
    distance : ndarray of int64
        Mismatches or edits of each occurrence (0 for an exact scan).
    end : ndarray of int64 (property)
        Where each occurrence ends in the sample (exclusive): ``offset + length``.
    metric : {"exact", "mismatches", "edits"}
    """

    sample: np.ndarray
    signature: np.ndarray
    strand: np.ndarray
    offset: np.ndarray
    quality_sum: np.ndarray
    length: np.ndarray
    sample_names: list
    signature_names: list
    # The integrity array, or until its first use a function that computes it: most runs never show it, and
    # summing the matched samples' qualities took 0.2 s of a 1.8 s GPU scan of 1 Gbp (bench/RESULTS.md, session 39).
    _integrity: object = field(repr=False)
    both_strands: bool = False
    report: str = "first"
    distance: np.ndarray | None = None
    metric: str = "exact"

    def __post_init__(self):
        if self.distance is None:
            self.distance = np.zeros(self.sample.size, dtype=np.int64)

    @property
    def integrity(self) -> np.ndarray:
        """Per match: the sum of all the matched sample's Phred scores modulo 97."""
        if callable(self._integrity):
            self._integrity = self._integrity()
        return self._integrity

    @property
    def end(self) -> np.ndarray:
        """Where each occurrence ends in the sample (exclusive)."""
        return self.offset + self.length

    def __len__(self) -> int:
        return int(self.sample.size)

    @property
    def score(self) -> np.ndarray:
        """Confidence: mean Phred score of the sample's bases over the occurrence (``offset .. end``)."""
        return self.quality_sum / np.maximum(self.length, 1)

    def lines(self, *, tsv: bool = False, integrity: bool = False):
        """Yield output lines (str, no newline).

        The default format is ``sample: signature (score)`` with 3 decimals, then
        `` [integrity]`` when asked, `` mismatches=N`` or `` edits=N`` for an approximate scan, `` offset=N``
        (and `` end=N`` for edits) for ``report="all"`` and `` strand=-`` for reverse-strand matches; ``tsv``
        gives a header and columns sample, signature, offset, score (+ end and mismatches or edits, strand,
        integrity).
        """
        approximate = self.metric != "exact"
        if tsv:
            header = ["sample", "signature", "offset", "score"] + ["end", self.metric] * approximate
            header += ["strand"] * self.both_strands + ["integrity"] * integrity
            yield "\t".join(header)
        # Columns as Python lists, read once: indexing NumPy arrays row by row costs 10 times more.
        samples = [self.sample_names[i] for i in self.sample.tolist()]
        signatures = [self.signature_names[i] for i in self.signature.tolist()]
        scores = [f"{score:.3f}" for score in self.score.tolist()]
        offsets, ends, distances = self.offset.tolist(), self.end.tolist(), self.distance.tolist()
        strands = self.strand.tolist()
        integrities = self.integrity.tolist() if integrity else None
        for row in range(len(self)):
            sample, signature, score = samples[row], signatures[row], scores[row]
            if tsv:
                fields = [sample, signature, str(offsets[row]), score]
                if approximate:
                    fields += [str(ends[row]), str(distances[row])]
                if self.both_strands:
                    fields.append("-" if strands[row] else "+")
                if integrity:
                    fields.append(str(integrities[row]))
                yield "\t".join(fields)
                continue
            line = f"{sample}: {signature} ({score})"
            if integrity:
                line += f" [{integrities[row]}]"
            if approximate:
                line += f" {self.metric}={distances[row]}"
            if self.report == "all":
                line += f" offset={offsets[row]}"
                if self.metric == "edits":
                    line += f" end={ends[row]}"
            if strands[row]:
                line += " strand=-"
            yield line


def _as_samples(samples, iupac_as_n: bool, threads, iupac: bool = False) -> SequenceSet:
    if isinstance(samples, SequenceSet):
        if samples.quality is None:
            raise InputError("samples need Phred qualities (read them from FASTQ)")
        return samples
    if isinstance(samples, (str, os.PathLike)):
        from ..io.fastq import read_fastq

        return read_fastq(samples, iupac_as_n=iupac_as_n, threads=threads, alphabet=iupac_codes() if iupac else None)
    raise TypeError("samples must be a FASTQ path or a SequenceSet with qualities")


def _as_signatures(signatures, iupac_as_n: bool, iupac: bool = False) -> SequenceSet:
    alphabet = iupac_codes() if iupac else None
    if isinstance(signatures, SequenceSet):
        result = signatures
    elif isinstance(signatures, (str, os.PathLike)):
        from ..io.fasta import read_sequences

        result = read_sequences(signatures, iupac_as_n=iupac_as_n, alphabet=alphabet)
    elif isinstance(signatures, (list, tuple)):
        result = SequenceSet.from_strings(signatures, iupac_as_n=iupac_as_n, source="signatures", alphabet=alphabet)
    else:
        raise TypeError("signatures must be a FASTA path, a list of strings or a SequenceSet")
    empty = np.flatnonzero(result.lengths == 0)
    if empty.size:
        index = int(empty[0])
        raise InputError(f"{result.source}: signature #{index + 1} '{result.names[index]}' is empty")
    return result


@dataclass
class PreparedSignatures:
    """Signatures ready to scan many sample sets (see :func:`prepare_signatures`)."""

    signatures: SequenceSet
    codes: np.ndarray  # with the reverse complements appended when both_strands
    offsets: np.ndarray
    k: int
    both_strands: bool
    device: str | None
    index: object = None
    timings: dict | None = None  # seconds of preparation steps, where measured
    iupac: bool = False  # codes 5..14 are IUPAC codes, matched as base sets

    def cpu_index(self):
        """The signatures' CPU index, built on first need (small signatures get none until a scan needs it)."""
        if self.index is None:
            from .index import SignatureIndex

            self.index = SignatureIndex(self.codes, self.offsets, self.k)
        return self.index


def prepare_signatures(signatures, *, k: int = DEFAULT_K, both_strands: bool = False, iupac_as_n: bool = False,
                       device: str | None = "cpu", iupac: bool = False) -> PreparedSignatures:  # fmt: skip
    """Read signatures and build their index once (on the GPU for ``device="cuda"``), for :func:`scan`.

    Parameters
    ----------
    signatures : path, list of str, or SequenceSet
    k, both_strands, iupac_as_n, iupac
        As for :func:`scan` (with ``iupac`` no index is built: the scan indexes the signatures' pieces).
    device : {"cpu", "cuda", "auto"} or None
        Where the index will be used; None builds no index (for the reference method).
    """
    signatures = _as_signatures(signatures, iupac_as_n, iupac)
    if iupac:
        device = None
    codes, offsets = signatures.codes, signatures.offsets
    if both_strands:
        codes = np.concatenate([codes, _reverse_complements(codes, offsets)])
        offsets = np.concatenate([offsets, offsets[1:] + offsets[-1]])
    index = None
    if device is not None:
        from ..cuda.runtime import resolve_device

        device = resolve_device(device)
        if device == "cuda":
            from .gpu import device_index

            index = device_index(codes, offsets, k)
        elif codes.size > DEFERRED_INDEX_BASES:
            from .index import SignatureIndex

            index = SignatureIndex(codes, offsets, k)
    return PreparedSignatures(signatures, codes, offsets, k, both_strands, device, index, iupac=iupac)


def _reverse_complements(codes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Every record's reverse complement, laid out as ``codes`` (by NumPy for a few short records)."""
    reverse = np.empty_like(codes)
    if codes.size > DEFERRED_INDEX_BASES:
        reverse_complement(codes, offsets, reverse)
        return reverse
    complement = COMPLEMENT_CODES[codes]
    for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        reverse[lo:hi] = complement[lo:hi][::-1]
    return reverse


def scan(samples, signatures, *, report: str = "first", min_score: float | None = None,
         both_strands: bool = False, iupac_as_n: bool = False, k: int = DEFAULT_K, method: str = "auto",
         device: str = "cpu", threads: int | None = None, progress=False, client=None,
         max_mismatches: int | None = None, max_edits: int | None = None, iupac: bool = False) -> ScanResult:  # fmt: skip
    """Find which signatures occur in which samples: exactly ('N' on either side matches any base), or within
    a number of mismatches or edits.

    Parameters
    ----------
    samples : path or SequenceSet
        FASTQ file (plain or gzip), or sequences with Phred qualities.
    signatures : path, list of str, SequenceSet, or PreparedSignatures
        FASTA file of signatures (e.g. viral genomes), the sequences themselves, or their prepared index
        (:func:`prepare_signatures`, to scan many sample sets against one set of signatures).
    report : {"first", "best", "all"}
        Per (sample, signature): the occurrence ending leftmost; the best (fewest mismatches or edits, then the
        highest confidence, then leftmost); or every occurrence.
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
    iupac : bool
        Read IUPAC codes (R, Y, K, M, S, W, B, D, H, V) as the sets of bases they stand for: two letters match
        when their sets meet, on either side (N is all four, as always). Runs in one process (no ``client``).
    method : {"auto", "index", "reference"}
        ``index``: k-mer index with the exact fallback; ``auto``: the index, or for a few short samples and
        signatures every window compared outright (no compiled code to load); ``reference``: brute force over
        every (sample, signature, offset), the oracle.
    device : {"cpu", "cuda", "auto"}
        Where to run the index method.
    threads : int, optional
        CPU threads (default: all available cores).
    progress : bool or callable
        Report progress over the sample bases (see :mod:`seqcompare.progress`).
    client : dask.distributed.Client, optional
        Scan on this Dask cluster: chunks of samples over the workers, the signatures' index built once per
        worker (``device`` is the workers'). The result is identical.
    max_mismatches : int or float, optional
        Occurrences are the offsets where the signature differs from the sample in at most this many positions
        (substitutions only). Smaller than every signature's length. A float in ``[0, 1)`` is a fraction of
        each signature's length, rounded down (``0.05``: 5%).
    max_edits : int or float, optional
        Occurrences are the sample positions where an alignment of the whole signature with at most this many
        substitutions, insertions and deletions ends (edlib's HW mode, Sassy's every match); the start is that
        of the shortest such alignment of least cost. Exclusive with ``max_mismatches``.

    Returns
    -------
    ScanResult
        Confidence = mean Phred score of the sample's bases over the occurrence; ``distance`` the mismatches
        or edits. The approximate scans' filter and its proof: :mod:`seqcompare.scan.approximate`.
    """
    from ..allpairs import Concatenation, GpuExecutor, SerialExecutor, default_threads, executor_for_client, run
    from .work import ScanWork

    validation.choice(report, "report", REPORTS)
    validation.choice(method, "method", METHODS)
    k = validation.integer(k, "k", minimum=1, maximum=MAX_K)
    if min_score is not None:
        min_score = validation.real(min_score, "min_score")
    metric, errors = _approximation(max_mismatches, max_edits)
    if iupac and iupac_as_n:
        raise InputError("give --iupac (ambiguity codes as base sets) or --iupac-as-n, not both")
    if iupac and client is not None:
        raise InputError("--iupac runs in this process only; drop --cluster/--scheduler")
    threads = validation.threads(threads) or default_threads()
    if isinstance(signatures, PreparedSignatures):
        prepared = signatures
        if prepared.both_strands != both_strands or (method != "reference" and metric == "exact" and not iupac
                                                     and prepared.k != k):  # fmt: skip
            raise ValueError("signatures were prepared with other both_strands or k than this scan asks for")
        if prepared.iupac != iupac:
            raise ValueError("signatures were prepared with another iupac than this scan asks for")
    else:
        # On a cluster the workers build the index; here only the signatures are needed. An approximate scan
        # (and one of IUPAC codes) indexes the signatures' pieces instead.
        exact_index = method != "reference" and client is None and metric == "exact" and not iupac
        prepared = prepare_signatures(signatures, k=k, both_strands=both_strands, iupac_as_n=iupac_as_n,
                                      device=device if exact_index else None, iupac=iupac)  # fmt: skip
    samples = _as_samples(samples, iupac_as_n, threads, iupac)
    report_all = report != "first"
    threshold = -1.0 if min_score is None else float(min_score)
    if method == "reference":
        allowed = _allowances(prepared, metric, errors) if metric != "exact" else None
        rows = _reference_rows(samples, prepared.codes, prepared.offsets, report_all, threshold, metric, allowed)
        return scan_result(samples, prepared, rows, report, metric)
    if client is not None:
        executor = executor_for_client(client, device=device)
    if metric != "exact" or iupac:
        options = {"max_mismatches": max_mismatches, "max_edits": max_edits, "k": k, "min_score": min_score,
                   "threads": threads}  # fmt: skip
        work, work_signatures = _pieces_work(samples, prepared, options, device, client, method)
    else:
        work_signatures = prepared
        if method == "index" and prepared.device == "cpu" and client is None:
            prepared.cpu_index()  # asked for by name: never the sweep that "auto" takes for small scans
        work = ScanWork(samples, prepared, report_all, threshold)
    if client is None:
        executor = GpuExecutor([0]) if work_signatures.device == "cuda" else SerialExecutor(threads)
    rows = run(work, Concatenation(), executor, progress, "scan")
    if not len(rows):
        rows = tuple(np.empty(0, dtype=np.int64) for _ in range(4 if work.verifier is None else 6))
    return scan_result(samples, prepared, rows, report, metric)


@dataclass(frozen=True)
class PiecesPlan:
    """An approximate scan (or an exact one of IUPAC codes) as the exact engine runs it: ``pieces`` (prepared
    signatures, no index yet) scanned in ``engine_samples`` with every occurrence reported, and ``verifier``
    turning those rows into the scan's occurrence rows (see :mod:`.approximate`)."""

    pieces: PreparedSignatures
    engine_samples: SequenceSet
    verifier: object
    metric: str


def pieces_plan(samples: SequenceSet, prepared: PreparedSignatures, *, max_mismatches=None, max_edits=None,
                k: int = DEFAULT_K, min_score: float | None = None, threads: int = 1) -> PiecesPlan:  # fmt: skip
    """The :class:`PiecesPlan` of a scan of ``samples`` (read) against ``prepared`` (no index needed) within
    ``max_mismatches`` or ``max_edits`` (as :func:`scan` takes them), or of an exact scan of IUPAC codes.
    With IUPAC codes the engine reads each ambiguity code as N, which matches at least what the code's bases
    match, so it still misses nothing; the verifier compares base sets on the real codes."""
    from .approximate import Verifier, split_into_pieces

    metric, allowance = _approximation(max_mismatches, max_edits)
    threshold = -1.0 if min_score is None else float(min_score)
    if metric == "exact":
        allowed = np.zeros(prepared.offsets.size - 1, dtype=np.int64)
        verify = "mismatches"  # the exact scan is the scan within 0 mismatches
    else:
        allowed = _allowances(prepared, metric, allowance)
        verify = metric
    engine_codes, sample_codes, engine_samples = prepared.codes, None, samples
    if prepared.iupac:
        engine_codes = np.minimum(prepared.codes, 4)
        sample_codes = samples.codes
        engine_samples = SequenceSet(samples.names, np.minimum(samples.codes, 4), samples.offsets, samples.quality,
                                     samples.source)  # fmt: skip
    pieces = split_into_pieces(engine_codes, prepared.offsets, allowed, k)
    verifier = Verifier(verify, allowed, prepared.codes, prepared.offsets, pieces.owner, pieces.start, threshold,
                        threads, sample_codes)  # fmt: skip
    piece_set = SequenceSet(NumberedNames("piece", pieces.owner.size), pieces.codes, pieces.offsets,
                            source=prepared.signatures.source)  # fmt: skip
    return PiecesPlan(prepare_signatures(piece_set, k=pieces.k_index, device=None), engine_samples, verifier, metric)


def _pieces_work(samples, prepared, options: dict, device, client, method):
    """``(work, its signatures)`` of an approximate scan, or of an exact one with IUPAC codes: the exact engine
    over the signatures' pieces, its rows verified chunk by chunk (:class:`PiecesPlan`)."""
    from ..cuda.runtime import resolve_device
    from .work import ScanWork

    plan = pieces_plan(samples, prepared, **options)
    pieces = plan.pieces
    piece_device = None if client is not None else resolve_device(device)
    if piece_device == "cuda":
        from .gpu import device_index

        pieces.index, pieces.device = device_index(pieces.codes, pieces.offsets, pieces.k), "cuda"
    elif piece_device == "cpu":
        pieces.device = "cpu"
        if method == "index":
            pieces.cpu_index()
    return ScanWork(plan.engine_samples, pieces, True, -1.0, verifier=plan.verifier), pieces


def _approximation(max_mismatches, max_edits) -> tuple:
    """``(metric, allowance)`` of the scan asked for: ``("exact", 0)``, ``("mismatches", k)`` or
    ``("edits", k)``, ``k`` an int, or a float fraction of each signature's length."""
    if max_mismatches is not None and max_edits is not None:
        raise InputError("give --max-mismatches or --max-edits, not both")
    for metric, value in (("mismatches", max_mismatches), ("edits", max_edits)):
        if value is None:
            continue
        if isinstance(value, float):
            if not 0.0 <= value < 1.0:
                raise InputError(f"max_{metric} as a fraction of each signature's length must be in [0, 1), not {value}")
            return metric, value
        return metric, validation.integer(value, f"max_{metric}", minimum=0)
    return "exact", 0


def _allowances(prepared: PreparedSignatures, metric: str, allowance) -> np.ndarray:
    """Each signature row's mismatches or edits (reverse complements as their signatures), checked."""
    from .approximate import check_errors, errors_per_signature

    signatures = prepared.signatures
    allowed = errors_per_signature(allowance, signatures.lengths)
    check_errors(allowed, signatures.lengths, signatures.names, metric, signatures.source, _shown(allowance))
    return np.tile(allowed, 2) if prepared.both_strands else allowed


def _shown(allowance) -> str:
    """An allowance as the command line takes it: ``3`` or ``5%``."""
    return f"{allowance * 100:g}%" if isinstance(allowance, float) else str(allowance)


def scan_result(samples: SequenceSet, prepared: PreparedSignatures, rows, report: str,
                metric: str = "exact") -> ScanResult:  # fmt: skip
    """The :class:`ScanResult` of ``(sample, signature row, offset, quality sum)`` occurrence rows (plus
    ``distance, end`` for an approximate scan), where signature rows past the signatures' count are reverse
    complements: the report's rows, in output order."""
    signatures = prepared.signatures
    n_signatures = len(signatures)
    sample, index, offset, total = rows[:4]
    strand = (index >= n_signatures).astype(np.int8)
    signature = np.where(strand == 1, index - n_signatures, index)
    if len(rows) == 6:
        distance, end = rows[4], rows[5]
    else:
        distance, end = np.zeros(sample.size, dtype=np.int64), offset + np.diff(signatures.offsets)[signature]
    keep = _select(report, sample, signature, strand, offset, total, distance, end, metric == "edits")
    sample = sample[keep]
    # The partial holds the qualities and offsets only, not the samples' bases.
    integrity = functools.partial(_integrity, samples.quality, samples.offsets, sample)
    return ScanResult(sample, signature[keep], strand[keep], offset[keep], total[keep], (end - offset)[keep],
                      samples.names, signatures.names, integrity, prepared.both_strands, report, distance[keep],
                      metric)  # fmt: skip


def _integrity(quality: np.ndarray, offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The integrity field of each row's sample; only matched samples are summed (a pass over every quality
    of a 600 MB FASTQ would cost more than the GPU's whole scan)."""
    matched, inverse = np.unique(rows, return_inverse=True)
    starts, stops = offsets[matched], offsets[matched + 1]
    lengths = stops - starts
    sums = np.zeros(matched.size, dtype=np.int64)
    filled = np.flatnonzero(lengths > 0)
    if filled.size:
        # One sum per matched sample over its qualities gathered end to end, not a running sum of every gathered
        # quality (8 bytes a base: 1.6 GB for 100,000 matched reads of 2 kb). Empty samples are left out, as
        # ``reduceat`` would give them the next value.
        gathered = np.concatenate([quality[a:b] for a, b in zip(starts[filled], stops[filled])])
        firsts = np.zeros(filled.size, dtype=np.int64)
        np.cumsum(lengths[filled][:-1], out=firsts[1:])
        # Summed as uint64: NumPy's reduceat from uint8 to int64 takes a casting path 6x slower (0.23 s against
        # 0.04 s for 20 MB in 10,000 segments); sums of at most 2**56 bytes fit either way.
        sums[filled] = np.add.reduceat(gathered, firsts, dtype=np.uint64)
    sums %= INTEGRITY_MODULUS
    return sums[inverse.reshape(-1)] if rows.size else np.empty(0, dtype=np.int64)


def _select(report, sample, signature, strand, offset, total, distance, end, spans_differ) -> np.ndarray:
    """Rows to keep, in output order: one per (sample, signature) for first/best, all otherwise."""
    if report == "best":
        # Fewest mismatches or edits, then the highest mean quality, then the leftmost end, then the given strand.
        # Without edits every occurrence of a pair spans the signature's length, so the sums compare exactly.
        # With edits the means are compared as doubles, which order distinct means of spans under 2**20
        # bases exactly (they differ by at least 2**-40, far above a double's spacing near 93).
        quality = -total / np.maximum(end - offset, 1) if spans_differ else -total
        order = np.lexsort((strand, end, quality, distance, signature, sample))
    else:
        order = np.lexsort((strand, end, signature, sample))
    if report == "all":
        key = np.stack([sample[order], signature[order], strand[order], end[order]], axis=1)
        first_of = np.ones(order.size, dtype=bool)
        first_of[1:] = np.any(key[1:] != key[:-1], axis=1)
        return order[first_of]
    pair = np.stack([sample[order], signature[order]], axis=1)
    first_of = np.ones(order.size, dtype=bool)
    first_of[1:] = np.any(pair[1:] != pair[:-1], axis=1)
    chosen = order[first_of]
    return chosen[np.lexsort((signature[chosen], sample[chosen]))]


def _reference_rows(samples: SequenceSet, codes, offsets, report_all: bool, threshold: float, metric: str = "exact",
                    errors=None):  # fmt: skip
    """The oracle's occurrence rows (the reference method): every (sample, signature row, offset) brute force."""
    from .reference import edit_occurrences, mismatch_occurrences, occurrence_offsets

    rows = []
    for i in range(len(samples)):
        x = samples.sequence(i)
        prefix = np.zeros(x.size + 1, dtype=np.int64)
        np.cumsum(samples.quality[samples.offsets[i] : samples.offsets[i + 1]], out=prefix[1:])
        for s in range(offsets.size - 1):
            signature = codes[offsets[s] : offsets[s + 1]]
            if metric == "mismatches":
                found, counts = mismatch_occurrences(x, signature, errors[s])
                spans = zip(found.tolist(), (found + signature.size).tolist(), counts.tolist())
            elif metric == "edits":
                starts, ends, costs = edit_occurrences(x, signature, errors[s])
                spans = zip(starts.tolist(), ends.tolist(), costs.tolist())
            else:
                spans = ((int(o), int(o) + signature.size, 0) for o in occurrence_offsets(x, signature))
            for begin, end, distance in spans:
                total = int(prefix[end] - prefix[begin])
                if total < threshold * (end - begin):
                    continue
                rows.append((i, s, begin, total, distance, end))
                if not report_all and metric == "exact":
                    break
    table = np.array(rows, dtype=np.int64).reshape(-1, 6)
    columns = tuple(np.ascontiguousarray(table[:, c]) for c in range(6))
    return columns if metric != "exact" else columns[:4]


def coverage(samples, signatures, *, kmer: int = DEFAULT_COVERAGE_KMER, max_mismatches: int = 0,
             both_strands: bool = False, iupac_as_n: bool = False, threads: int | None = None,
             progress=False, client=None) -> CoverageResult:  # fmt: skip
    """Breadth and mean depth of each signature in the reads of one sample file, from k-mer hits.

    Parameters
    ----------
    samples : path or SequenceSet
        FASTQ file (plain or gzip), or the reads.
    signatures : path, list of str, or SequenceSet
        The signatures (e.g. viral genomes).
    kmer : int
        Length of the k-mers that are looked up (default 25).
    max_mismatches : int
        Mismatches allowed in a k-mer hit (default 0: exact k-mers).
    both_strands : bool
        Also count hits with the reverse complement of each signature (reads from either strand).
    iupac_as_n : bool
        Read IUPAC codes other than N as N instead of refusing them.
    threads : int, optional
        CPU threads (default: all available cores).
    progress : bool or callable
        Report progress over the read bases (see :mod:`seqcompare.progress`).
    client : dask.distributed.Client, optional
        Count on this Dask cluster: chunks of reads over the workers (on their CPUs), each building the
        signatures' index once. The result is identical.

    Returns
    -------
    CoverageResult
        The definitions and the proof that no hit is missed: :mod:`seqcompare.scan.kmer_coverage`.
    """
    from ..allpairs import Concatenation, SerialExecutor, default_threads, executor_for_client, run
    from .kmer_coverage import CoverageResult, check_coverage_options, depth_from_intervals, seed_length
    from .work import CoverageWork

    kmer = validation.integer(kmer, "kmer", minimum=1)
    max_mismatches = validation.integer(max_mismatches, "max_mismatches", minimum=0)
    check_coverage_options(kmer, max_mismatches)
    threads = validation.threads(threads) or default_threads()
    prepared = prepare_signatures(signatures, k=min(DEFAULT_K, seed_length(kmer, max_mismatches)),
                                  both_strands=both_strands, iupac_as_n=iupac_as_n, device=None)  # fmt: skip
    samples = _as_samples(samples, iupac_as_n, threads)
    work = CoverageWork(samples, prepared, kmer, max_mismatches)
    executor = SerialExecutor(threads) if client is None else executor_for_client(client, device="cpu")
    rows = run(work, Concatenation(), executor, progress, "coverage")
    read, signature, start, stop = rows if len(rows) else (np.empty(0, dtype=np.int64),) * 4
    lengths = prepared.signatures.lengths
    carried = np.zeros((len(samples), lengths.size), dtype=bool)
    carried[read, signature] = True
    return CoverageResult(samples.source, prepared.signatures.names, lengths,
                          depth_from_intervals(signature, start, stop, lengths), carried, kmer, max_mismatches)
