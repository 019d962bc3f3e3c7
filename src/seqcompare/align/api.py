"""Public batched DP API: :func:`align` (Needleman-Wunsch) and :func:`dtw` over many pairs in one call.

Both prepare their inputs and a scorer (:mod:`.batch`) and run a :class:`~seqcompare.align.work.PairWork` through
the engine: on the CPU's threads, the GPU, or a Dask cluster (``client``), with the same results.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .. import validation
from ..allpairs import Concatenation, GpuExecutor, SerialExecutor, executor_for_client, run
from ..errors import InputError
from .batch import DTW_MODES, DTWScorer, NWScorer, match_mismatch
from .costs import BIG, Costs
from .modes import MODE_CODES, ModeScorer, ModeScoring
from .plans import pair_lengths
from .work import PairWork

MODES = tuple(MODE_CODES)

_LIMIT = 1 << 59  # no score may come near int64's range: refuse, never wrap


@dataclass
class PairScores:
    """Scores of a batch.

    Attributes
    ----------
    pairs : numpy.ndarray, shape (k, 2)
        (target index, query index) of each pair.
    scores : numpy.ndarray, shape (k,)
    cells : int
        DP cells computed (for GCUPS).
    cigars : list of str, optional
        The alignments, when asked for (M, I: target letter against a gap, D: query letter against a gap).
    positions : numpy.ndarray of int64, shape (k, 4), optional
        Alignment modes: target start, target end, query start, query end; 0-based and inclusive (an empty
        alignment starts one past its end). On the reverse strand, positions on the query as given. The starts
        come with ``stats``, ``cigar`` or ``both_strands`` (they follow the alignment's path), else are -1.
    counts : numpy.ndarray of int64, shape (k, 4), optional
        Alignment modes: matches, similar (pairs of positive score), aligned pairs and length (columns; as in
        parasail's ``_stats`` functions, leading gaps along the first row or column are not counted).
    reverse : numpy.ndarray of bool, shape (k,), optional
        With ``both_strands``: True where the query's reverse complement aligned better.
    maximized : bool
        Whether a higher score is better (scores of :meth:`Costs.scores` and matrices), rather than a lower cost.
    """

    pairs: np.ndarray
    scores: np.ndarray
    cells: int
    cigars: list | None = None
    positions: np.ndarray | None = None
    counts: np.ndarray | None = None
    reverse: np.ndarray | None = None
    maximized: bool = False

    def _count(self, column: int) -> np.ndarray:
        if self.counts is None:
            raise ValueError("statistics come with alignment modes: call align() with stats=True")
        return self.counts[:, column]

    @property
    def matches(self) -> np.ndarray:
        """Aligned pairs of the same letter."""
        return self._count(0)

    @property
    def mismatches(self) -> np.ndarray:
        """Aligned pairs of different letters."""
        return self._count(2) - self._count(0)

    @property
    def gap_columns(self) -> np.ndarray:
        """Columns of a letter against a gap (leading gaps along the first row or column excluded)."""
        return self._count(3) - self._count(2)

    @property
    def length(self) -> np.ndarray:
        """Alignment columns, as parasail's ``_stats`` count them."""
        return self._count(3)

    @property
    def identity(self) -> np.ndarray:
        """``matches / length`` (parasail's identity); 0 for an empty alignment."""
        length = self.length
        return np.divide(self.matches, length, out=np.zeros(len(length)), where=length > 0)

    def take(self, indices) -> PairScores:
        """These pairs only, in the order of ``indices`` (every per-pair field taken alike)."""
        indices = np.asarray(indices, dtype=np.int64)
        picked = {name: None if getattr(self, name) is None else getattr(self, name)[indices]
                  for name in ("positions", "counts", "reverse")}  # fmt: skip
        cigars = None if self.cigars is None else [self.cigars[i] for i in indices.tolist()]
        return PairScores(self.pairs[indices], self.scores[indices], self.cells, cigars=cigars,
                          maximized=self.maximized, **picked)  # fmt: skip

    def best(self, n: int, per: str = "query") -> PairScores:
        """The ``n`` best pairs of every query (or target): a database search's top hits.

        Parameters
        ----------
        n : int
            Hits kept per query (fewer where a query has fewer pairs).
        per : {"query", "target"}
            Whose hits: each query's best targets (the default), or each target's best queries.

        Returns
        -------
        PairScores
            Those pairs, ordered by query (or target) index, then best first: the highest score where
            :attr:`maximized`, else the lowest cost; ties go to the smaller index of the other side, then to the
            earlier pair. ``cells`` stays the whole run's.
        """
        n = validation.integer(n, "n", minimum=1)
        validation.choice(per, "per", ("query", "target"))
        return self.take(best_pairs(self.pairs, self.scores, n, self.maximized, 1 if per == "query" else 0))


def best_pairs(pairs: np.ndarray, scores: np.ndarray, n: int, maximized: bool, group_column: int) -> np.ndarray:
    """Indices of the ``n`` best pairs of each group (the items of ``pairs[:, group_column]``), ordered by group,
    then best score first, then by the other side's index, then by pair index.

    A full three-key sort of a search's millions of pairs takes most of a second; so the groups' ``n``-th best
    scores are found first, by one sort of single integer keys (group, score), and only the pairs that reach
    them (the hits, and any ties with the last) are sorted on all keys."""
    groups = pairs[:, group_column].astype(np.int64, copy=False)  # (strided views of the plan: read, not copied)
    others = pairs[:, 1 - group_column].astype(np.int64, copy=False)
    rank_key = -scores if maximized else scores  # lower is better (distances may be floats; inf sorts last)
    if len(scores) == 0:
        return np.empty(0, dtype=np.int64)
    largest_group, low = int(groups.max()), rank_key.min()
    if rank_key.dtype.kind == "i" and int(rank_key.max()) - int(low) < (1 << 32) and largest_group < (1 << 31):
        low = int(low)
        combined = np.sort((groups << 32) | (rank_key.astype(np.int64, copy=False) - low))
        sorted_groups, sorted_keys = combined >> 32, (combined & 0xFFFFFFFF) + low
    else:  # wide integers, floats
        by_group = np.lexsort((rank_key, groups))
        sorted_groups, sorted_keys = groups[by_group], rank_key[by_group]
    first = _run_starts(sorted_groups)
    counts = np.diff(np.append(first, len(sorted_groups)))
    threshold = np.zeros(largest_group + 1, dtype=sorted_keys.dtype)
    threshold[sorted_groups[first]] = sorted_keys[first + np.minimum(counts, n) - 1]  # each group's n-th best key
    candidates = np.flatnonzero(rank_key <= threshold[groups])
    order = candidates[np.lexsort((candidates, others[candidates], rank_key[candidates], groups[candidates]))]
    return order[run_ranks(groups[order]) <= n]


def run_ranks(values: np.ndarray) -> np.ndarray:
    """Each item's place (1, 2, ...) in its run of equal values: the ranks of :meth:`PairScores.best`'s pairs
    from their query (or target) column."""
    starts = _run_starts(values)
    return np.arange(1, len(values) + 1) - np.repeat(starts, np.diff(np.append(starts, len(values))))


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal values begins in ``values``."""
    return np.flatnonzero(np.r_[True, values[1:] != values[:-1]]) if len(values) else np.empty(0, np.int64)


def _concatenated(items, dtype=None):
    arrays = [np.asarray(x, dtype=dtype) for x in items]
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([a.size for a in arrays], out=offsets[1:])
    values = np.concatenate([a.ravel() for a in arrays]) if arrays else np.empty(0, dtype=dtype or np.float64)
    return values, offsets


def _as_sequences(items, what: str):
    """Base codes (A C G T N = 0..4) and offsets of strings, a SequenceSet, a FASTA path, or a 2-D uint8 array
    of codes (one sequence per row, used in place); and whether the codes are known to be valid (an array's
    are checked where they are read)."""
    from ..io.sequences import NumberedNames, SequenceSet

    if isinstance(items, np.ndarray) and items.ndim == 2:
        if items.dtype != np.uint8:
            raise InputError(f"{what}s: a 2-D array of sequences must hold uint8 base codes (0..4 for A, C, G, T, "
                             f"N), not {items.dtype}")  # fmt: skip
        rows, width = items.shape
        return np.ascontiguousarray(items).reshape(-1), np.arange(rows + 1, dtype=np.int64) * width, False
    if isinstance(items, (str, os.PathLike)):
        from ..io.fastq import read_fasta_or_fastq

        items = read_fasta_or_fastq(items, iupac_as_n=True)
    if isinstance(items, SequenceSet):
        return items.codes, items.offsets, True
    items = list(items)
    sequences = SequenceSet.from_strings(items, NumberedNames(what, len(items)), iupac_as_n=True, source=what)
    return sequences.codes, sequences.offsets, True


def _check_codes(codes: np.ndarray, what: str) -> None:
    if codes.size and int(codes.max()) > 4:
        at = int(np.flatnonzero(codes > 4)[0])
        raise InputError(f"{what}s: base code {int(codes[at])} at value #{at + 1}; codes are 0..4 (A, C, G, T, N)")


def pair_plan(n_targets: int, n_queries: int | None, pairs) -> np.ndarray:
    """``(k, 2)`` pairs: given; by order (equal counts); one series against every series of the other side (a
    search: either side may hold the one); or all-vs-all ``i < j`` when there are no queries. ``pairs="all"``:
    every target against every query, query by query (without queries, every ordered pair of different
    series), the pairs a search ranks (:meth:`PairScores.best`)."""
    if isinstance(pairs, str):
        validation.choice(pairs, "pairs", ("all",))
        return every_pair(n_targets, n_queries)
    if pairs is not None:
        plan = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        limits = (n_targets, n_queries if n_queries is not None else n_targets)
        for column, (name, limit) in enumerate(zip(("target", "query"), limits)):
            if not len(plan) or (plan[:, column].min() >= 0 and plan[:, column].max() < limit):
                continue
            bad = (plan[:, column] < 0) | (plan[:, column] >= limit)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise InputError(f"pair #{row + 1} names {name} {plan[row, column]}, but there are {limit}")
        return plan
    if n_queries is None:
        i, j = np.triu_indices(n_targets, 1)
        return np.stack([i, j], axis=1).astype(np.int64)
    if n_queries != n_targets and 1 in (n_queries, n_targets):
        count = max(n_targets, n_queries)
        plan = np.zeros((count, 2), dtype=np.int64)  # filled in place: a search's plan can be 2^20 pairs
        plan[:, 0 if n_queries == 1 else 1] = np.arange(count)
        return plan
    if n_queries != n_targets:
        raise InputError(f"pairs by order need as many queries as targets (or one of either): {n_targets} targets, "
                         f"{n_queries} queries")  # fmt: skip
    return np.arange(n_targets, dtype=np.int64).repeat(2).reshape(-1, 2)  # two arrays made, not four


def every_pair(n_targets: int, n_queries: int | None) -> np.ndarray:
    """Every (target, query) pair, query by query; without queries (one set), every ordered pair of different
    series (both orders: the modes' ends and ties need not mirror)."""
    count = n_targets if n_queries is None else n_queries
    plan = np.empty((n_targets * count, 2), dtype=np.int64)  # filled in place: a search's plan is millions of pairs
    plan.reshape(count, n_targets, 2)[:, :, 0] = np.arange(n_targets)
    plan.reshape(count, n_targets, 2)[:, :, 1] = np.arange(count)[:, None]
    return plan[plan[:, 0] != plan[:, 1]] if n_queries is None else plan


def _use_gpu(device: str, eligible: bool, why: str, client=None) -> bool:
    """Whether to score on GPUs (``client``: the workers'), refusing ``device="cuda"`` for what they cannot run."""
    from ..cuda.runtime import resolve_device

    if device == "cpu":
        return False
    if device == "cuda" and not eligible:
        raise InputError(f"on the GPU, {why}; use device='cpu'")
    if client is not None:
        return eligible and device == "cuda"
    return eligible and resolve_device(device) == "cuda"


def align(targets, queries=None, *, costs: Costs | None = None, mode: str = "global", matrix=None,
          gap_open: int | None = None, gap_extend: int | None = None, alphabet: str | None = None,
          both_strands: bool = False, stats: bool = False, pairs=None, cigar: bool = False, positions: bool = True,
          threads: int | None = None, device: str = "cpu", progress=False, client=None) -> PairScores:  # fmt: skip
    """Alignment scores of many pairs in one call: global (Needleman-Wunsch, Gotoh's affine gaps), local
    (Smith-Waterman), semi-global, infix and prefix, with positions, statistics and CIGARs.

    Parameters
    ----------
    targets, queries : FASTA or FASTQ path, SequenceSet, list of str, or 2-D uint8 array of base codes
        Pairs are ``targets[i]`` against ``queries[i]`` by order, or one sequence against every one of the other
        side; without ``queries``, every pair ``i < j`` of ``targets`` (all-vs-all); with ``pairs``, those
        ``(target, query)`` indices, or with ``pairs="all"`` every target against every query (a search; rank it
        with :meth:`PairScores.best`). A 2-D uint8 array holds one sequence per row as codes 0..4 (A, C, G, T,
        N); it is read in place (the GPU checks the codes where it reads them).
    costs : Costs
        :meth:`Costs.seed` (costs C, X, I, D to minimise), :meth:`Costs.edit` (the default), or :meth:`Costs.scores`
        (maximised scores: match/mismatch or a matrix, affine gaps). With ``alphabet="protein"`` or ``"bytes"``
        its match and mismatch apply to every letter.
    mode : {"global", "local", "semi-global", "infix", "prefix"}
        ``global``: both sequences end to end; ``local``: the best-scoring pair of substrings (Smith-Waterman; 0
        at worst); ``semi-global``: gaps before and after either sequence are free (parasail's ``sg``);
        ``infix``: the whole query anywhere in the target (edlib's HW); ``prefix``: the whole query against a
        prefix of the target (edlib's SHW). Ties between end cells are broken as parasail breaks them (global,
        local: the smallest target end, then query end; semi-global: the last row before the last column), and
        at the leftmost target end in infix and prefix (edlib's first location). With a cost form, a mode reports
        the least cost: ``mode="infix"`` with the default gives edlib's HW edit distance.
    matrix : str, path or SubstitutionMatrix, optional
        A substitution matrix (BLOSUM45/50/62/80/90, PAM250, NUC.4.4 by name, or an NCBI-format file) of scores
        to maximise, ``matrix[target letter, query letter]``; the sequences' alphabet is its letters. Needs
        ``gap_open`` and ``gap_extend``, and is not combined with ``costs``.
    gap_open, gap_extend : int
        With ``matrix``: a gap of length L costs ``gap_open + (L - 1) * gap_extend`` (parasail's convention; both
        at least 0, ``gap_open >= gap_extend``). CUDASW++'s default with BLOSUM62 is 11 and 1; BLAST's "11, 1"
        (existence and extension: 11 + L) is 12 and 1 here.
    alphabet : {"dna", "protein", "bytes"}, optional
        How letters are read when no matrix gives them: ``dna`` (A, C, G, T, N; other IUPAC codes as N; the
        default), ``protein`` (20 amino acids, B, Z, X, ``*``) or ``bytes`` (any byte but 0xff, case-sensitive).
        A letter outside it is an error naming the record and position.
    both_strands : bool
        DNA: also align each query's reverse complement, and keep the better strand (the forward one on ties);
        ``reverse`` says which.
    stats : bool
        Return the statistics (``counts``; ``matches``, ``mismatches``, ``gap_columns``, ``length``,
        ``identity``) and the start positions, which follow the same path as the CIGAR. Without them (or
        ``cigar``, or ``both_strands``) a faster pass gives the scores and end positions only.
    cigar : bool
        Also return each alignment as a CIGAR (M, I: target letter against a gap, D: query letter against a gap),
        from its start to its end positions.
    positions : bool
        False: the scores alone, ``positions`` None (not with ``stats``, ``cigar`` or ``both_strands``). A database
        search's fastest pass: on the GPU, local scores without ends run about 12% faster. Rank them with
        :meth:`PairScores.best`, then align the hits again (``pairs=hits.pairs``) for their positions, as the
        command line's ``--top`` does.
    threads : int, optional
        CPU threads (default: all cores).
    device : {"cpu", "cuda", "auto"}
        The GPU runs every cost form (scores below 2**29).
    progress : bool or callable
        Report progress over the pairs (see :mod:`seqcompare.progress`).
    client : dask.distributed.Client, optional
        Score batches of pairs on this Dask cluster (``device`` is the workers'); the result is identical.

    Returns
    -------
    PairScores
        ``scores`` are costs (minimised) for cost forms and scores (maximised) for :meth:`Costs.scores` and
        matrices. Any mode option (a mode other than global, ``matrix``, ``alphabet``, ``both_strands`` or
        ``stats``) also gives ``positions`` (and ``counts``, ``reverse``).

    Raises
    ------
    InputError
        A letter outside the alphabet, an unknown matrix, gaps that are not a valid scheme, a mode the options
        cannot run, scores that could pass the exact range.
    """
    validation.choice(mode, "mode", MODES)
    if not positions and (stats or cigar or both_strands):
        raise InputError("positions=False leaves out the alignments' positions, which stats, cigar and both_strands "
                         "report")  # fmt: skip
    if (mode != "global" or matrix is not None or alphabet is not None or both_strands or stats
            or gap_open is not None or gap_extend is not None):  # fmt: skip
        return _align_in_mode(targets, queries, costs, mode, matrix, gap_open, gap_extend, alphabet, both_strands,
                              stats, pairs, cigar, positions, threads, device, progress, client)  # fmt: skip
    costs = Costs.edit() if costs is None else costs
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a Costs (Costs.edit(), Costs.seed(...), Costs.scores(...)), not {costs!r}")
    threads = validation.threads(threads)
    validation.choice(device, "device", ("cpu", "cuda", "auto"))
    t_codes, t_off, t_checked = _as_sequences(targets, "target")
    if queries is None:
        q_codes, q_off, q_checked = t_codes, t_off, t_checked
    else:
        q_codes, q_off, q_checked = _as_sequences(queries, "query")
    plan = pair_plan(len(t_off) - 1, None if queries is None else len(q_off) - 1, pairs)
    t_len, q_len = pair_lengths(plan, t_off, q_off)
    longest = int((t_len + q_len).max()) if len(plan) else 0
    if longest * costs.bound >= _LIMIT:
        raise InputError(f"alignment scores could reach {longest * costs.bound}, beyond the exact 64-bit range")
    gpu = _use_gpu(device, longest * costs.bound < (1 << 29), "alignment scores must stay below 2**29", client)
    checked = t_checked and q_checked
    if not checked and (client is not None or not gpu or cigar):
        # Codes from an array are checked where they are read: by the GPU's kernels in one process, here otherwise.
        _check_codes(t_codes, "target")
        _check_codes(q_codes, "query")
        checked = True
    scorer = NWScorer(t_codes, t_off, q_codes, q_off, costs, cigar, checked)
    raw, found = run(PairWork(scorer, plan), Concatenation(), _executor(client, device, gpu, threads), progress,
                     "align")  # fmt: skip
    result = PairScores(plan, costs.sign * np.asarray(raw, dtype=np.int64), int(np.sum(t_len * q_len)),
                        maximized=costs.sign == -1)  # fmt: skip
    if cigar:
        result.cigars = list(found)
    return result


def _mode_scoring(mode, costs, matrix, gap_open, gap_extend, alphabet) -> ModeScoring:
    """What a mode maximises, from a matrix and gaps or from a cost form, and the letters' alphabet."""
    from .alphabets import from_letters, named
    from .matrices import SubstitutionMatrix, substitution_matrix

    if matrix is not None:
        if costs is not None:
            raise InputError("give either a matrix (with gap_open and gap_extend) or costs, not both")
        if gap_open is None or gap_extend is None:
            raise InputError("a matrix needs gap_open and gap_extend (a gap of L costs open + (L - 1) x extend; "
                             "11 and 1 are CUDASW++'s default with BLOSUM62; BLAST's 11/1 is 12 and 1 here)")  # fmt: skip
        if not isinstance(matrix, SubstitutionMatrix):
            matrix = substitution_matrix(matrix)
        gap_open = validation.integer(gap_open, "gap_open", minimum=0)
        gap_extend = validation.integer(gap_extend, "gap_extend", minimum=0)
        if gap_open < gap_extend:
            raise InputError(f"gap_open ({gap_open}) must be at least gap_extend ({gap_extend}): opening a gap "
                             f"costs its first letter")  # fmt: skip
        letters = from_letters(matrix.name, matrix.letters)
        if alphabet is not None:
            validation.choice(alphabet, "alphabet", ("dna", "protein", "bytes"))
            nucleotide = set(matrix.letters) <= set("ACGTURYKMSWBDHVN")
            if alphabet == "bytes" or (alphabet == "dna") != nucleotide:
                raise InputError(f"matrix {matrix.name} reads its own letters ({matrix.letters}); it cannot score "
                                 f"the {alphabet} alphabet")  # fmt: skip
        return ModeScoring(mode, np.asarray(matrix.scores, dtype=np.int64), gap_open, gap_extend, letters)
    if gap_open is not None or gap_extend is not None:
        raise InputError("gap_open and gap_extend go with a matrix; with costs, the gaps are the Costs' own")
    costs = Costs.edit() if costs is None else costs
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a Costs (Costs.edit(), Costs.seed(...), Costs.scores(...)), not {costs!r}")
    if (costs.insert_open, costs.insert_extend) != (costs.delete_open, costs.delete_extend):
        raise InputError("alignment modes take one gap model: insertions and deletions must cost the same")
    if costs.insert_open < 0:
        raise InputError("a gap opening cannot be a bonus: gap_open must not be positive in Costs.scores")
    chosen = named(alphabet or "dna")
    table = -np.asarray(costs.substitution, dtype=np.int64)
    if chosen.name != "dna":
        simple = match_mismatch(table)
        if simple is None:
            raise InputError(f"a matrix over A, C, G, T, N scores DNA only; for the {chosen.name} alphabet give "
                             f"match and mismatch, or a matrix of its letters")  # fmt: skip
        table = np.full((chosen.size, chosen.size), simple[1], dtype=np.int64)
        np.fill_diagonal(table, simple[0])
    opening = costs.insert_open + costs.insert_extend
    return ModeScoring(mode, table, opening, costs.insert_extend, chosen, sign=-costs.sign)


def _as_coded(items, what: str, alphabet):
    """Codes and offsets of sequences in ``alphabet``: a FASTA path, a list of str or bytes, a SequenceSet (its
    DNA letters re-read in the alphabet), or a 2-D uint8 array of codes (checked against the alphabet)."""
    from ..io.sequences import NumberedNames, SequenceSet

    if isinstance(items, np.ndarray) and items.ndim == 2:
        if items.dtype != np.uint8:
            raise InputError(f"{what}s: a 2-D array of sequences must hold uint8 codes, not {items.dtype}")
        codes = np.ascontiguousarray(items).reshape(-1)
        if codes.size and int(codes.max()) >= alphabet.size:
            at = int(np.flatnonzero(codes >= alphabet.size)[0])
            raise InputError(f"{what}s: code {int(codes[at])} at value #{at + 1}; the {alphabet.name} alphabet has "
                             f"codes 0..{alphabet.size - 1}")  # fmt: skip
        rows, width = items.shape
        return codes, np.arange(rows + 1, dtype=np.int64) * width
    if isinstance(items, (str, os.PathLike)):
        from ..io.fastq import read_fasta_or_fastq

        found = read_fasta_or_fastq(items, alphabet=alphabet)
        return found.codes, found.offsets
    if isinstance(items, SequenceSet):
        if items.alphabet == alphabet.name:
            return items.codes, items.offsets
        if items.alphabet != "dna":
            raise InputError(f"{what}s were read in the {items.alphabet} alphabet; these options score the "
                             f"{alphabet.name} alphabet")  # fmt: skip
        items = [items.text(i) for i in range(len(items))]
    items = list(items)
    found = SequenceSet.from_strings(items, NumberedNames(what, len(items)), source=what, alphabet=alphabet)
    return found.codes, found.offsets


def reverse_complements(codes: np.ndarray, offsets: np.ndarray, complement: np.ndarray) -> np.ndarray:
    """Each record of ``codes`` reversed and complemented through ``complement`` (a code-to-code table)."""
    lengths = np.diff(offsets)
    record = np.repeat(np.arange(len(lengths)), lengths)
    mirrored = offsets[record] + offsets[record + 1] - 1 - np.arange(codes.size)
    return complement[codes[mirrored]] if codes.size else codes.copy()


def _align_in_mode(targets, queries, costs, mode, matrix, gap_open, gap_extend, alphabet, both_strands, stats,
                   pairs, cigar, positions, threads, device, progress, client) -> PairScores:  # fmt: skip
    """:func:`align` with any mode option: through :class:`~seqcompare.align.modes.ModeScorer`."""
    threads = validation.threads(threads)
    validation.choice(device, "device", ("cpu", "cuda", "auto"))
    scoring = _mode_scoring(mode, costs, matrix, gap_open, gap_extend, alphabet)
    t_codes, t_off = _as_coded(targets, "target", scoring.alphabet)
    q_codes, q_off = (t_codes, t_off) if queries is None else _as_coded(queries, "query", scoring.alphabet)
    q_reverse = None
    if both_strands:
        complement = scoring.alphabet.complement()
        if complement is None:
            raise InputError(f"both strands need a nucleotide alphabet; {scoring.alphabet.name} has letters "
                             f"without a complement")  # fmt: skip
        q_reverse = reverse_complements(q_codes, q_off, complement)
    plan = pair_plan(len(t_off) - 1, None if queries is None else len(q_off) - 1, pairs)
    t_len, q_len = np.diff(t_off)[plan[:, 0]], np.diff(q_off)[plan[:, 1]]
    reach = (int((t_len + q_len).max()) if len(plan) else 0) * (scoring.bound + 1)
    if reach >= _LIMIT:
        raise InputError(f"alignment scores could reach {reach}, beyond the exact 64-bit range")
    gpu = _use_gpu(device, reach < (1 << 29), "alignment scores must stay below 2**29", client)
    scorer = ModeScorer(t_codes, t_off, q_codes, q_off, scoring, cigar, q_reverse, paths=stats or both_strands,
                        ends=positions)  # fmt: skip
    scores, ends, counts, reverse, found = run(PairWork(scorer, plan), Concatenation(),
                                               _executor(client, device, gpu, threads), progress, "align")  # fmt: skip
    scores = np.asarray(scores, dtype=np.int64)
    result = PairScores(plan, scores if scoring.sign == 1 else scoring.sign * scores, int(np.sum(t_len * q_len)),
                        positions=np.asarray(ends, dtype=np.int64).reshape(-1, 4) if positions else None,
                        counts=np.asarray(counts, dtype=np.int64).reshape(-1, 4) if stats else None,
                        reverse=np.asarray(reverse, dtype=bool), maximized=scoring.sign == 1)  # fmt: skip
    if cigar:
        result.cigars = list(found)
    return result


def _executor(client, device: str, gpu: bool, threads):
    if client is not None:
        return executor_for_client(client, device="cuda" if gpu else "cpu")
    return GpuExecutor([0]) if gpu else SerialExecutor(threads)


# The dtypes the kernels read signals in, for each dtype a caller may hold (narrow ones widened once here).
_SIGNAL_DTYPES = {"b": np.int16, "B": np.int16, "h": np.int16, "H": np.int32, "i": np.int32, "I": np.int64,
                  "l": np.int64, "q": np.int64, "e": np.float32, "f": np.float32, "d": np.float64}  # fmt: skip


def _signal_dtype(dtype: np.dtype, what: str) -> np.dtype:
    if dtype.kind == "b":
        return np.dtype(np.int16)
    if dtype.kind not in "iuf":
        raise InputError(f"{what}: signals must be numeric, not {dtype}")
    found = _SIGNAL_DTYPES.get(dtype.char)
    if found is None:  # uint64, longdouble
        return np.dtype(np.int64 if dtype.kind == "u" else np.float64)
    return np.dtype(found)


def _as_signals(items, what: str):
    """Flat values and offsets of signals: a 2-D array (one series per row, used in place when it is contiguous
    in a dtype the kernels read), a 1-D array (one series), or a list of 1-D arrays."""
    if isinstance(items, np.ndarray) and items.ndim in (1, 2):
        series = items.reshape(1, -1) if items.ndim == 1 else items
        dtype = _signal_dtype(series.dtype, what)
        if series.dtype == np.uint64 and series.size and int(series.max()) >= 1 << 63:
            raise InputError(f"{what}: values from 2**63 up do not fit the exact 64-bit DP")
        values = np.ascontiguousarray(series, dtype=dtype).reshape(-1)
        rows, width = series.shape
        return values, np.arange(0, (rows + 1) * width, width, dtype=np.int64) if width else np.zeros(rows + 1, np.int64)
    items = [np.asarray(x).ravel() for x in items]
    if not items:
        return np.empty(0, np.int64), np.zeros(1, np.int64)
    dtypes = [_signal_dtype(x.dtype, what) for x in items]
    dtype = np.result_type(*dtypes)
    return _concatenated(items, dtype)


def _common_signal_dtype(a: np.dtype, b: np.dtype) -> np.dtype:
    """One dtype for both sides: integers the wider integer; floats float32 when both sides are float32 (or one
    is a 16-bit integer, which float32 holds exactly), else float64."""
    if a == b:
        return a
    if a.kind == "i" and b.kind == "i":
        return max(a, b, key=lambda d: d.itemsize)
    pair = {a, b}
    if pair <= {np.dtype(np.float32), np.dtype(np.int16)}:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _spread(t_values, q_values) -> int:
    low = min(int(t_values.min(initial=0)), int(q_values.min(initial=0)))
    return max(int(t_values.max(initial=0)), int(q_values.max(initial=0))) - low


def _checked_on_host(t_values, q_values, t_len, q_len, gpu: bool) -> bool:
    """Whether every DTW distance of these pairs provably fits 32 bits (the narrow kernels), after refusing
    integers that could pass the exact 64-bit range (or, for the GPU, 2**29) and floats that are not finite."""
    if t_values.dtype.kind != "i":
        if not (np.isfinite(t_values).all() and np.isfinite(q_values).all()):
            raise InputError("signals contain NaN or infinity")
        return False
    if not len(t_len):
        return False
    reach = int((t_len + q_len).max()) * _spread(t_values, q_values)
    if reach >= _LIMIT:
        raise InputError("DTW distances of these integer signals could pass the exact 64-bit range; give floats")
    if gpu and reach >= (1 << 29):
        raise InputError("on the GPU, DTW needs integer signals whose distances stay below 2**29; use "
                         "device='cpu' (exact in 64 bits) or give floats")  # fmt: skip
    return reach < (1 << 29)


def dtw(a, b=None, *, mode: str = "full", window: int | None = None, pairs=None,
        threads: int | None = None, device: str = "cpu", progress=False, client=None) -> PairScores:  # fmt: skip
    """Dynamic time warping with |x - y| cost of many pairs of signals in one call.

    Parameters
    ----------
    a, b : 2-D array (one series per row), 1-D array (one series) or list of 1-D arrays
        Pairs ``a[i]`` against ``b[i]``; one series against every series of the other side
        (``dtw(query, database)``: a search, the query sent to the GPU once); without ``b`` every pair
        ``i < j`` of ``a``; or ``pairs`` indices (``"all"``: every series of ``a`` against every series of
        ``b``). A 2-D array in int16, int32, int64, float32 or float64 is
        read in place, in its own dtype (on the GPU, too: no widening on the host).
        Integer signals give exact int64 distances. float32 signals give float32 distances, each cell one
        float32 rounding of ``min + |x - y|``, bit-equal on the CPU and the GPU (as cuDTW++ computes); float64
        signals float64. A float32 side met with a float64 one (or with int32 or int64) is computed in float64.
    mode : {"full", "open-end", "subsequence"}
        ``full``: M[n][m]; ``open-end``: minimum over the last row, so the target may end early;
        ``subsequence``: the query may match any stretch of the target (free start and end).
    window : int, optional
        Sakoe-Chiba band. With the query's ``n`` values down the rows (``i``) and the signal's ``m`` across the
        columns (``j``), only cells with ``-(window + max(0, n - m)) <= j - i <= window + max(0, m - n)`` are
        used: ``window`` cells on each side of the diagonal, and the band widened by the length difference on
        the longer series' side only, so that the last cell is always reached. This is dtaidistance's
        ``window=window + 1`` (``dtw.distance(a, b, window=window + 1, inner_dist="euclidean")``) and tslearn's
        ``sakoe_chiba_radius=window``, for equal and unequal lengths alike.
    threads : int, optional
        CPU threads (default: all cores).
    device : {"cpu", "cuda", "auto"}
        The GPU runs every mode without a window, on integer signals whose distances stay below 2**29 (checked
        as the GPU path reads them; ``"auto"`` then runs wider ones on the CPU) and on float signals. A 2-D array
        held in page-locked memory (:func:`seqcompare.cuda.locked_empty`) goes to the GPU straight from it, at the
        link's rate; an ordinary array is copied through page-locked buffers on the way (a database of 4.3 GB:
        0.25 s against about 0.32 s on an H200, bench/RESULTS.md, session 20).
    progress : bool or callable
        Report progress over the pairs (see :mod:`seqcompare.progress`).
    client : dask.distributed.Client, optional
        Score batches of pairs on this Dask cluster (``device`` is the workers'); the result is identical.

    Returns
    -------
    PairScores
        ``scores``: int64 for integer signals (exact), float32 or float64 as the signals otherwise.
    """
    validation.choice(mode, "mode", tuple(DTW_MODES))
    window = validation.optional_integer(window, "window", minimum=0)
    threads = validation.threads(threads)
    validation.choice(device, "device", ("cpu", "cuda", "auto"))
    t_values, t_off = _as_signals(a, "signals")
    if b is None:
        q_values, q_off = t_values, t_off
    else:
        q_values, q_off = _as_signals(b, "query signals")
        common = _common_signal_dtype(t_values.dtype, q_values.dtype)
        t_values, q_values = t_values.astype(common, copy=False), q_values.astype(common, copy=False)
    plan = pair_plan(len(t_off) - 1, None if b is None else len(q_off) - 1, pairs)
    # each pair's lengths (views for a search or pairs by order; read only)
    t_len, q_len = pair_lengths(plan, t_off, q_off)
    integer = t_values.dtype.kind == "i"
    mode_code, band = DTW_MODES[mode], -1 if window is None else window
    gpu = _use_gpu(device, window is None, "DTW needs no window", client)
    # In one process the GPU checks the values where it reads them (range, or finiteness), and refuses what its
    # 32-bit integer DP cannot hold exactly; elsewhere they are checked here first.
    narrow = None if gpu and client is None else _checked_on_host(t_values, q_values, t_len, q_len, gpu)
    scorer = DTWScorer(t_values, t_off, q_values, q_off, mode_code, band, narrow)
    try:
        raw = run(PairWork(scorer, plan), Concatenation(), _executor(client, device, gpu, threads), progress, "dtw")
    except InputError:
        if device != "auto" or narrow is not None:
            raise
        # "auto": what the GPU's 32-bit DP refused runs exactly on the CPU (after the CPU's own checks).
        scorer.narrow = _checked_on_host(t_values, q_values, t_len, q_len, False)
        raw = run(PairWork(scorer, plan), Concatenation(), SerialExecutor(threads), progress, "dtw")
    result_dtype = np.int64 if integer else t_values.dtype
    raw = np.asarray(raw, dtype=result_dtype)
    if integer:
        undefined = raw >= BIG
        if undefined.any():
            row = int(np.flatnonzero(undefined)[0])
            raise InputError(f"pair #{row + 1}: DTW of an empty signal against a non-empty one is undefined")
    return PairScores(plan, raw, int(np.dot(t_len, q_len)))
