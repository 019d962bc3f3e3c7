"""Alignment modes on the CPU: global, local, semi-global, infix and prefix, any alphabet and matrix, with end
and start positions, parasail's statistics and CIGARs.

The model (spec/dp.md's Gotoh recurrence, maximised; parasail's conventions): ``scores[a, b]`` scores target code
``a`` against query code ``b``; a gap of length L costs ``gap_open + (L - 1) * gap_extend``. The query runs down
the rows ``i``, the target along the columns ``j``. Ties are broken as parasail breaks them (see
:func:`~seqcompare.align.reference.mode_reference`), and the statistics follow the path parasail's ``_stats``
functions follow: at each cell the diagonal if it gives the best score, else the vertical gap, else the
horizontal one; a gap state extends unless opening is strictly better. That path is also the one the traceback
takes, so the CIGAR, the start positions and the statistics all describe one alignment.

Statistics, per pair (parasail's ``matches``, ``similar`` and ``length``, plus the aligned pairs): ``matches``
counts aligned pairs of the same code, ``similar`` pairs whose score is positive, ``pairs`` aligned pairs, and
``length`` the alignment's columns, where, as parasail counts them, gaps along the first row or column (leading
gaps of a global alignment) are not columns.

:class:`ModeScorer` is what :class:`~seqcompare.align.work.PairWork` runs: its ``cpu`` spreads pairs over threads,
its ``gpu`` runs :mod:`.modes_gpu`.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._jit import jit
from ..progress import SILENT
from .alphabets import Alphabet
from .batch import cigar_string

MODE_CODES = {"global": 0, "local": 1, "semi-global": 2, "infix": 3, "prefix": 4}
NEG = -(1 << 62)  # below every reachable score; far from overflow when a penalty is subtracted
# Columns of the positions and counts arrays.
POSITIONS = ("target_start", "target_end", "query_start", "query_end")
COUNTS = ("matches", "similar", "pairs", "length")


@dataclass(frozen=True)
class ModeScoring:
    """What a mode alignment maximises.

    Attributes
    ----------
    mode : str
        One of :data:`MODE_CODES`.
    scores : numpy.ndarray of int64, shape (K, K)
        ``scores[target code, query code]``.
    gap_open, gap_extend : int
        A gap of length L costs ``gap_open + (L - 1) * gap_extend`` (``gap_open >= gap_extend``).
    alphabet : Alphabet
        The codes' alphabet.
    sign : int
        The reported value is ``sign * score``: -1 turns the maximised score back into a cost.
    """

    mode: str
    scores: np.ndarray
    gap_open: int
    gap_extend: int
    alphabet: Alphabet
    sign: int = 1

    @property
    def bound(self) -> int:
        """The largest magnitude one column can add to a score."""
        return int(max(np.abs(self.scores).max(initial=0), abs(self.gap_open), abs(self.gap_extend)))


@jit
def _longest(offsets, index, first, last):
    longest = 0
    for p in range(first, last):
        longest = max(longest, offsets[index[p] + 1] - offsets[index[p]])
    return longest


@jit
def mode_pairs(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, by_query, gap_open, gap_extend, mode,
               scores_out, positions_out, counts_out):  # fmt: skip
    """Score, positions and statistics of pairs ``first:last`` in ``mode`` (a :data:`MODE_CODES` value), in one
    row of each quantity (linear space). ``by_query[b, a]`` is the score of target code ``a`` against query code
    ``b`` (the table transposed, so a query row's scores are contiguous)."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    longest = _longest(t_off, pair_t, first, last) + 1
    H = np.empty(longest, np.int64)
    F = np.empty(longest, np.int64)
    # Per column, the statistics and start of the path to H (h_*) and to F (f_*): matches, similar, pairs,
    # length, start row, start column.
    h_stats = np.empty((longest, 6), np.int64)
    f_stats = np.empty((longest, 6), np.int64)
    west = np.empty(6, np.int64)
    diag_stats = np.empty(6, np.int64)
    e_stats = np.empty(6, np.int64)
    best_stats = np.empty(6, np.int64)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        n = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        m = q_off[pair_q[p] + 1] - q0
        H[0] = 0
        h_stats[0, :] = 0
        for j in range(1, n + 1):
            H[j] = 0 if free_target_start else -(gap_open + (j - 1) * gap_extend)
            F[j] = NEG
            h_stats[j, :] = 0
            f_stats[j, :] = 0
            if free_target_start:
                h_stats[j, 5] = j
        best = NEG
        best_i = 0
        best_j = 0
        best_stats[:] = 0
        if local:
            best = 0
            best_i = 1
            best_j = 1
            best_stats[4] = 1
            best_stats[5] = 1
        for i in range(1, m + 1):
            diag = H[0]
            diag_stats[:] = h_stats[0]
            H[0] = 0 if free_query_start else -(gap_open + (i - 1) * gap_extend)
            h_stats[0, :] = 0
            if free_query_start:
                h_stats[0, 4] = i
            west_h = H[0]
            west[:] = h_stats[0]
            e = NEG
            e_stats[:] = 0
            b = q_codes[q0 + i - 1]
            row = by_query[b]
            for j in range(1, n + 1):
                north = H[j]
                f_open = north - gap_open
                f_extend = F[j] - gap_extend
                if f_open > f_extend:
                    F[j] = f_open
                    f_stats[j, :] = h_stats[j]
                else:
                    F[j] = f_extend
                f_stats[j, 3] += 1
                e_open = west_h - gap_open
                e_extend = e - gap_extend
                if e_open > e_extend:
                    e = e_open
                    e_stats[:] = west
                else:
                    e = e_extend
                e_stats[3] += 1
                a = t_codes[t0 + j - 1]
                substitution = row[a]
                h_diag = diag + substitution
                h = max(h_diag, max(e, F[j]))
                if local and h < 0:
                    h = 0
                # The cell's path: its statistics replace the northern cell's, which becomes the next diagonal.
                diag = north
                if h == h_diag:
                    for k in range(6):
                        west[k] = diag_stats[k]
                    west[0] += a == b
                    west[1] += substitution > 0
                    west[2] += 1
                    west[3] += 1
                elif h == F[j]:
                    for k in range(6):
                        west[k] = f_stats[j, k]
                else:
                    for k in range(6):
                        west[k] = e_stats[k]
                if local and h <= 0:
                    west[:4] = 0
                    west[4] = i
                    west[5] = j
                for k in range(6):
                    diag_stats[k] = h_stats[j, k]
                    h_stats[j, k] = west[k]
                H[j] = h
                west_h = h
                if local and (h > best or (h == best and j < best_j)):
                    best, best_i, best_j = h, i, j
                    best_stats[:] = west
            if mode == 2 and n > 0 and H[n] > best:  # semi-global: the last column, smallest row first
                best, best_i, best_j = H[n], i, n
                best_stats[:] = h_stats[n]
        if mode == 0 or (not local and (m == 0 or n == 0)):
            best, best_i, best_j = H[n], m, n
            best_stats[:] = h_stats[n]
        elif mode == 2:  # then the last row short of the last column: the smallest column wins ties
            for j in range(1, n):
                if H[j] > best or (H[j] == best and j < best_j):
                    best, best_i, best_j = H[j], m, j
                    best_stats[:] = h_stats[j]
        elif mode == 3 or mode == 4:  # the whole query, the leftmost best target end
            best, best_i, best_j = H[0], m, 0
            best_stats[:] = h_stats[0]
            for j in range(1, n + 1):
                if H[j] > best:
                    best, best_i, best_j = H[j], m, j
                    best_stats[:] = h_stats[j]
        elif local and (m == 0 or n == 0):
            best, best_i, best_j = 0, 0, 0
            best_stats[:] = 0
        scores_out[p] = best
        positions_out[p, 0] = best_stats[5]
        positions_out[p, 1] = best_j - 1
        positions_out[p, 2] = best_stats[4]
        positions_out[p, 3] = best_i - 1
        for k in range(4):
            counts_out[p, k] = best_stats[k]


@jit
def mode_scores(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, by_query, gap_open, gap_extend, mode,
                scores_out, positions_out):  # fmt: skip
    """:func:`mode_pairs` without the paths: the score and end positions only (start columns left as they are),
    the same cells and ties, several times faster."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    longest = _longest(t_off, pair_t, first, last) + 1
    H = np.empty(longest, np.int64)
    F = np.empty(longest, np.int64)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        n = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        m = q_off[pair_q[p] + 1] - q0
        H[0] = 0
        for j in range(1, n + 1):
            H[j] = 0 if free_target_start else -(gap_open + (j - 1) * gap_extend)
            F[j] = NEG
        best, best_i, best_j = NEG, 0, 0
        if local:
            best, best_i, best_j = 0, 1, 1
        for i in range(1, m + 1):
            diag = H[0]
            H[0] = 0 if free_query_start else -(gap_open + (i - 1) * gap_extend)
            west = H[0]
            e = NEG
            row = by_query[q_codes[q0 + i - 1]]
            for j in range(1, n + 1):
                north = H[j]
                f = max(north - gap_open, F[j] - gap_extend)
                e = max(west - gap_open, e - gap_extend)
                h = max(diag + row[t_codes[t0 + j - 1]], max(e, f))
                if local:
                    h = max(h, 0)
                    if h > best or (h == best and j < best_j):
                        best, best_i, best_j = h, i, j
                diag = north
                F[j] = f
                H[j] = h
                west = h
            if mode == 2 and n > 0 and H[n] > best:
                best, best_i, best_j = H[n], i, n
        if mode == 0 or (not local and (m == 0 or n == 0)):
            best, best_i, best_j = H[n], m, n
        elif mode == 2:
            for j in range(1, n):
                if H[j] > best or (H[j] == best and j < best_j):
                    best, best_i, best_j = H[j], m, j
        elif mode == 3 or mode == 4:
            best, best_i, best_j = H[0], m, 0
            for j in range(1, n + 1):
                if H[j] > best:
                    best, best_i, best_j = H[j], m, j
        elif local and (m == 0 or n == 0):
            best, best_i, best_j = 0, 0, 0
        scores_out[p] = best
        positions_out[p, 1] = best_j - 1
        positions_out[p, 3] = best_i - 1


# Traceback directions, one byte a cell: bits 0-1 where H came from, bit 2 F opened here, bit 3 E opened here.
_FROM_DIAGONAL, _FROM_F, _FROM_E, _STOP = 0, 1, 2, 3


@jit
def mode_traceback(t, q, by_query, gap_open, gap_extend, mode, end_i, end_j, ops):
    """The alignment of one pair ending at cell ``(end_i, end_j)`` (1-based rows of ``q``, columns of ``t``),
    along the path :func:`mode_pairs` follows: operation codes (0 M, 1 I: target letter against a gap, 2 D: query
    letter against a gap) at the end of ``ops``. Returns ``(first op index, start row, start column)``."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    m, n = end_i, end_j
    way = np.zeros((m + 1, n + 1), np.uint8)
    H = np.empty(n + 1, np.int64)
    F = np.empty(n + 1, np.int64)
    H[0] = 0
    for j in range(1, n + 1):
        H[j] = 0 if free_target_start else -(gap_open + (j - 1) * gap_extend)
        F[j] = NEG
    for i in range(1, m + 1):
        diag = H[0]
        H[0] = 0 if free_query_start else -(gap_open + (i - 1) * gap_extend)
        west_h = H[0]
        e = NEG
        row = by_query[q[i - 1]]
        for j in range(1, n + 1):
            north = H[j]
            code = 0
            f_open = north - gap_open
            f_extend = F[j] - gap_extend
            if f_open > f_extend:
                F[j] = f_open
                code |= 4
            else:
                F[j] = f_extend
            e_open = west_h - gap_open
            e_extend = e - gap_extend
            if e_open > e_extend:
                e = e_open
                code |= 8
            else:
                e = e_extend
            h_diag = diag + row[t[j - 1]]
            h = max(h_diag, max(e, F[j]))
            if local and h < 0:
                h = 0
            if local and h <= 0:
                code |= _STOP
            elif h == h_diag:
                code |= _FROM_DIAGONAL
            elif h == F[j]:
                code |= _FROM_F
            else:
                code |= _FROM_E
            way[i, j] = code
            diag = north
            H[j] = h
            west_h = h
    at = ops.size
    i, j, state = m, n, 0  # state 0 H, 1 F, 2 E
    while True:
        if state == 0:
            if i == 0 or j == 0:
                if (i == 0 and free_target_start) or (j == 0 and free_query_start):
                    break
                while j > 0:  # leading gaps along the first row or column
                    at -= 1
                    ops[at] = 1
                    j -= 1
                while i > 0:
                    at -= 1
                    ops[at] = 2
                    i -= 1
                break
            source = way[i, j] & 3
            if source == _STOP:
                break
            if source == _FROM_DIAGONAL:
                at -= 1
                ops[at] = 0
                i -= 1
                j -= 1
            else:
                state = 1 if source == _FROM_F else 2
        elif state == 1:
            at -= 1
            ops[at] = 2
            if way[i, j] & 4:
                state = 0
            i -= 1
        else:
            at -= 1
            ops[at] = 1
            if way[i, j] & 8:
                state = 0
            j -= 1
    return at, i, j


def _chunks(weights: np.ndarray, threads: int) -> list:
    cumulative = np.cumsum(weights)
    cuts = np.searchsorted(cumulative, np.linspace(0, cumulative[-1], 4 * threads + 1)[1:-1])
    return np.unique(np.concatenate([[0], cuts, [len(weights)]])).tolist()


@dataclass
class ModeScorer:
    """Alignments in a mode (:class:`ModeScoring`) of pairs of codes; with ``q_reverse`` (the queries' reverse
    complements, laid out as ``q_codes``) each pair also tries the query's other strand and keeps the better
    (the forward strand on ties). With ``paths`` the start positions and counts are made too; without (and
    without CIGARs), they are -1. Both strands need the paths: a reverse alignment's end on the query as given
    is its start on the reverse complement."""

    t_codes: np.ndarray
    t_off: np.ndarray
    q_codes: np.ndarray
    q_off: np.ndarray
    scoring: ModeScoring
    cigar: bool = False
    q_reverse: np.ndarray | None = None
    paths: bool = True

    def _by_query(self) -> np.ndarray:
        return np.ascontiguousarray(self.scoring.scores.T, dtype=np.int64)

    def _strand(self, q_codes, plan, threads, report):
        threads = threads or os.cpu_count() or 1
        k = len(plan)
        scores = np.empty(k, np.int64)
        positions = np.full((k, 4), -1, np.int64)
        counts = np.full((k, 4), -1, np.int64)
        if k == 0:
            return scores, positions, counts
        t_len, q_len = np.diff(self.t_off)[plan[:, 0]], np.diff(self.q_off)[plan[:, 1]]
        bounds = _chunks(t_len * np.maximum(q_len, 1) + 1, threads)
        pair_t, pair_q = np.ascontiguousarray(plan[:, 0]), np.ascontiguousarray(plan[:, 1])
        by_query = self._by_query()
        s = self.scoring

        steps = (by_query, np.int64(s.gap_open), np.int64(s.gap_extend), np.int64(MODE_CODES[s.mode]), scores,
                 positions)  # fmt: skip

        def chunk(first, last):
            if self.paths or self.cigar or self.q_reverse is not None:
                mode_pairs(self.t_codes, self.t_off, q_codes, self.q_off, pair_t, pair_q, first, last, *steps, counts)
            else:
                mode_scores(self.t_codes, self.t_off, q_codes, self.q_off, pair_t, pair_q, first, last, *steps)
            report.update(last - first)

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(chunk, bounds[:-1], bounds[1:]))
        return scores, positions, counts

    def cpu(self, plan: np.ndarray, threads: int | None, report=SILENT):
        """``(scores, positions (k, 4), counts (k, 4), reverse (k,), CIGARs)`` of ``plan``'s pairs: raw
        maximised scores; positions as :data:`POSITIONS` (0-based, inclusive; an empty alignment starts one past
        its end); counts as :data:`COUNTS`; reverse True where the query's reverse complement aligned (its
        positions are then on the query as given)."""
        scores, positions, counts = self._strand(self.q_codes, plan, threads, report)
        return self._finish(plan, scores, positions, counts, threads, self._strand_runner(threads))

    def _strand_runner(self, threads):
        return lambda plan: self._strand(self.q_reverse, plan, threads, SILENT)

    def _finish(self, plan, scores, positions, counts, threads, other_strand, gpu: bool = False):
        reverse = np.zeros(len(plan), dtype=bool)
        if self.q_reverse is not None and len(plan):
            r_scores, r_positions, r_counts = other_strand(plan)
            reverse = r_scores > scores
            scores = np.where(reverse, r_scores, scores)
            positions = np.where(reverse[:, None], r_positions, positions)
            counts = np.where(reverse[:, None], r_counts, counts)
        cigars = np.empty(0, dtype=object)
        if self.cigar:
            cigars = (self._gpu_cigars if gpu else self._cigars)(plan, scores, positions, reverse, threads)
        if reverse.any():  # the reverse strand's query positions, on the query as given
            q_len = np.diff(self.q_off)[plan[:, 1]]
            start, end = positions[:, 2].copy(), positions[:, 3].copy()
            positions[:, 2] = np.where(reverse, q_len - 1 - end, start)
            positions[:, 3] = np.where(reverse, q_len - 1 - start, end)
        return scores, positions, counts, reverse, cigars

    def _gpu_cigars(self, plan, scores, positions, reverse, threads) -> np.ndarray:
        """CIGARs by traceback on the GPU (each strand's pairs in one call), checked as :meth:`_cigars` checks."""
        from .modes_gpu import traceback_on_gpu

        s = self.scoring
        cigars = np.empty(len(plan), dtype=object)
        for strand in (False, True):
            chosen = np.flatnonzero(reverse == strand)
            if not chosen.size:
                continue
            q_codes = self.q_reverse if strand else self.q_codes
            found, end_scores, starts = traceback_on_gpu(
                self.t_codes, self.t_off, q_codes, self.q_off, plan[chosen], s.scores, s.gap_open, s.gap_extend,
                s.gap_open, s.gap_extend, MODE_CODES[s.mode], positions[chosen, 3] + 1, positions[chosen, 1] + 1)
            expected = np.stack([positions[chosen, 2], positions[chosen, 0]], axis=1)
            if not (np.array_equal(starts, expected) and np.array_equal(end_scores, scores[chosen])):
                raise AssertionError("the GPU's traceback does not start or score where the scores' pass said")
            cigars[chosen] = found
        return cigars

    def _cigars(self, plan, scores, positions, reverse, threads) -> np.ndarray:
        """CIGARs by traceback (threads over pairs), each checked to start where the scores' pass said."""
        s = self.scoring
        by_query = self._by_query()
        steps = (np.int64(s.gap_open), np.int64(s.gap_extend), np.int64(MODE_CODES[s.mode]))

        def one(k):
            a, b = plan[k]
            t = self.t_codes[self.t_off[a] : self.t_off[a + 1]]
            codes = self.q_reverse if reverse[k] else self.q_codes
            q = codes[self.q_off[b] : self.q_off[b + 1]]
            end_i, end_j = positions[k, 3] + 1, positions[k, 1] + 1
            ops = np.empty(end_i + end_j, np.uint8)
            at, start_i, start_j = mode_traceback(t, q, by_query, *steps, np.int64(end_i), np.int64(end_j), ops)
            if (start_j, start_i) != (positions[k, 0], positions[k, 2]):
                raise AssertionError(f"pair {k}: the traceback starts at ({start_j}, {start_i}), the scores' pass "
                                     f"at ({positions[k, 0]}, {positions[k, 2]})")  # fmt: skip
            return cigar_string(ops[at:])

        with ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
            return np.array(list(pool.map(one, range(len(plan)))) + [None], dtype=object)[:-1]

    def gpu(self, plan: np.ndarray):
        """As :meth:`cpu`, on the GPU (:mod:`.modes_gpu`): the scores' pass, and the CIGARs by traceback there."""
        from .modes_gpu import mode_pairs_on_gpu

        s = self.scoring
        paths = self.paths or self.cigar or self.q_reverse is not None
        run = lambda q_codes, plan: mode_pairs_on_gpu(self.t_codes, self.t_off, q_codes, self.q_off, plan,  # noqa: E731
                                                      s.scores, s.gap_open, s.gap_extend, MODE_CODES[s.mode], paths)
        scores, positions, counts = run(self.q_codes, plan)
        return self._finish(plan, scores, positions, counts, None, lambda plan: run(self.q_reverse, plan), gpu=True)
