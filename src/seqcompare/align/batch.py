"""Scoring a batch of pairs on the CPU or the GPU: what :class:`~seqcompare.align.work.PairWork` runs.

:class:`NWScorer` and :class:`DTWScorer` hold the sequences or signals and the model; ``cpu(plan, threads)``
scores the pairs of ``plan`` with the fastest exact CPU kernel for them (SIMD lanes of 16 or 32 bits when every
score provably fits, the 64-bit scalar kernel otherwise), ``gpu(plan)`` on the GPU. Scores are the kernels' raw
costs (minimised); the API turns them into the user's scores.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..progress import SILENT
from .costs import BIG, Costs
from .diagonals import dtw_small, is_small, nw_small

DTW_MODES = {"full": 0, "open-end": 1, "subsequence": 2}


def equal_work_bounds(weights: np.ndarray, threads: int) -> list:
    """Boundaries of about ``4 * threads`` runs of consecutive items of about equal total ``weights`` (so threads
    that finish early take more), in order."""
    cumulative = np.cumsum(weights)
    cuts = np.searchsorted(cumulative, np.linspace(0, cumulative[-1], 4 * threads + 1)[1:-1])
    return np.unique(np.concatenate([[0], cuts, [len(weights)]])).tolist()


def run_pairs(kernel, plan, threads, weights, *args, report=SILENT):
    """A scalar kernel (``nw_pairs``, ``dtw_pairs``) over ``plan``'s pairs: threads over chunks of about equal
    ``weights``, results of the last argument's type in pair order."""
    threads = threads or os.cpu_count() or 1
    out = np.empty(len(plan), dtype=args[-1])
    if len(plan) == 0:
        return out
    bounds = equal_work_bounds(weights, threads)
    pair_t, pair_q = np.ascontiguousarray(plan[:, 0]), np.ascontiguousarray(plan[:, 1])
    fixed = args[:-1]
    def chunk(first, last):
        kernel(*fixed[:4], pair_t, pair_q, first, last, *fixed[4:], out)
        report.update(last - first)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(chunk, bounds[:-1], bounds[1:]))
    return out


def lane_groups(t_len: np.ndarray, q_len: np.ndarray, lanes: int) -> list:
    """Pairs sorted by shape and cut into groups of ``lanes`` (similar lengths: little padding)."""
    order = np.lexsort((q_len, t_len))[::-1]
    return [order[at : at + lanes] for at in range(0, len(order), lanes)]


def run_lanes(kernel, groups, threads, t_values, t_off, q_values, q_off, plan, lane_dtype, value_dtype, *args,
               report=SILENT):  # fmt: skip
    """Run a lanes kernel on every group (threads over groups): pack each group's signals or codes into
    ``(length, lanes)`` arrays of ``value_dtype``, results of ``lane_dtype``, scattered back in pair order."""
    out = np.empty(len(plan), dtype=lane_dtype)

    def work(group):
        t_idx, q_idx = plan[group, 0], plan[group, 1]
        t_len = (t_off[t_idx + 1] - t_off[t_idx]).astype(np.int64)
        q_len = (q_off[q_idx + 1] - q_off[q_idx]).astype(np.int64)
        t_lanes = np.zeros((int(t_len.max(initial=0)), len(group)), dtype=value_dtype)
        q_lanes = np.zeros((int(q_len.max(initial=0)), len(group)), dtype=value_dtype)
        for lane, (a, b) in enumerate(zip(t_idx, q_idx)):
            t_lanes[: t_len[lane], lane] = t_values[t_off[a] : t_off[a + 1]]
            q_lanes[: q_len[lane], lane] = q_values[q_off[b] : q_off[b + 1]]
        result = np.empty(len(group), dtype=lane_dtype)
        kernel(t_lanes, q_lanes, t_len, q_len, *args, result)
        out[group] = result
        report.update(len(group))

    with ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
        list(pool.map(work, groups))
    return out


def run_groups(groups, plan, t_len, q_len, lanes, threads, t_codes, t_off, q_codes, q_off, *steps,
                report=SILENT, within=None) -> np.ndarray:  # fmt: skip
    """NW scores by ``groups`` (:func:`seqcompare.align.strips.nw_groups_linear` or ``nw_groups_affine``): pairs
    sorted by shape (little padding in a vector; by ``within`` too, between target and query length, where
    given), threads over runs of whole vectors of about equal work."""
    threads = threads or os.cpu_count() or 1
    out = np.empty(len(plan), dtype=np.int64)
    if len(plan) == 0:
        return out
    keys = (q_len, t_len) if within is None else (q_len, within, t_len)
    order = np.lexsort(keys)[::-1].copy()
    n_vectors = -(-len(plan) // lanes)
    # Per vector, the padded work is set by its first (longest) pair.
    first_of_vector = order[::lanes]
    work = np.cumsum(t_len[first_of_vector] * (q_len[first_of_vector] + 8) + 1)
    cuts = np.searchsorted(work, np.linspace(0, work[-1], 4 * threads + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], cuts, [n_vectors]])) * lanes
    bounds[-1] = len(plan)
    pair_t, pair_q = np.ascontiguousarray(plan[:, 0]), np.ascontiguousarray(plan[:, 1])

    def run(first, last):
        groups(t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, *steps, out)
        report.update(last - first)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, bounds[:-1], bounds[1:]))
    return out


def lanes_for(n_pairs: int, threads: int | None, widest: int) -> int:
    """Pairs per lane group: as wide as ``widest`` (more independent work per vector instruction) while every
    thread still gets a group or two; never below 32."""
    per_thread = -(-n_pairs // (2 * (threads or os.cpu_count() or 1)))
    return int(min(widest, max(32, 1 << max(0, (per_thread - 1).bit_length()))))


def match_mismatch(table: np.ndarray):
    """``(match, mismatch)`` when the table is one value on the diagonal and one elsewhere, else None."""
    diagonal = np.diag(table)
    off = table[~np.eye(len(table), dtype=bool)]
    if np.all(diagonal == diagonal[0]) and np.all(off == off[0]):
        return int(diagonal[0]), int(off[0])
    return None


def unit_cost(costs: Costs, simple) -> int | None:
    """The unit ``c`` when the costs are ``c`` times edit distance (match 0, mismatch, insertion and deletion
    ``c`` each, no gap opening), else None; ``simple`` is :func:`match_mismatch` of the costs' table."""
    c = costs.insert_extend
    if c <= 0 or costs.delete_extend != c or costs.insert_open or costs.delete_open:
        return None
    return c if simple == (0, c) else None


def cigar_string(ops: np.ndarray) -> str:
    """A CIGAR from operation codes (0 = M, 1 = I, 2 = D): one ``<count><letter>`` per run."""
    return cigar_strings(ops, [0], [ops.size])[0] if ops.size else ""


def cigar_strings(ops: np.ndarray, firsts: np.ndarray, ends: np.ndarray) -> list:
    """:func:`cigar_string` of ``ops[firsts[k] : ends[k]]`` for every ``k``, written by one compiled pass
    (:func:`.kernels.cigar_text`; Python's strings, a run at a time, took 1.4 s for 20,000 CIGARs of 1 kb pairs)."""
    from .kernels import cigar_text

    firsts, ends = np.ascontiguousarray(firsts, np.int64), np.ascontiguousarray(ends, np.int64)
    if not firsts.size:
        return []
    text = np.empty(2 * int((ends - firsts).sum()) + 1, np.uint8)
    text_ends = np.empty(firsts.size, np.int64)
    cigar_text(ops, firsts, ends, text, text_ends)
    whole = text[: int(text_ends[-1])].tobytes().decode("ascii")
    starts = [0] + text_ends[:-1].tolist()
    return [whole[a:b] for a, b in zip(starts, text_ends.tolist())]


def cigars(t_codes, t_off, q_codes, q_off, plan, costs: Costs, scores, threads) -> list:
    """CIGARs by compiled traceback (threads over pairs); each alignment's cost is checked against the
    batch's score for that pair."""
    from .kernels import nw_traceback

    cost_by_query = np.ascontiguousarray(np.asarray(costs.substitution, dtype=np.int64).T)
    steps = [np.int64(x) for x in (costs.insert_open, costs.insert_extend, costs.delete_open, costs.delete_extend)]

    def one(k):
        a, b = plan[k]
        t, q = t_codes[t_off[a] : t_off[a + 1]], q_codes[q_off[b] : q_off[b + 1]]
        ops = np.empty(t.size + q.size, np.uint8)
        cost, first = nw_traceback(t, q, cost_by_query, *steps, ops)
        if cost != scores[k]:
            raise AssertionError(f"traceback cost {cost} differs from the batch's {scores[k]} for pair {k}")
        return cigar_string(ops[first:])

    with ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
        return list(pool.map(one, range(len(plan))))



@dataclass
class NWScorer:
    """Global alignment costs (Gotoh) of pairs of base codes: targets ``t_codes``/``t_off``, queries likewise."""

    t_codes: np.ndarray
    t_off: np.ndarray
    q_codes: np.ndarray
    q_off: np.ndarray
    costs: Costs
    cigar: bool = False
    checked: bool = True  # False: codes straight from the caller's array, checked where they are read (GPU)

    def cpu(self, plan: np.ndarray, threads: int | None, report=SILENT):
        """``(raw costs, CIGARs)`` of the pairs of ``plan`` (target index, query index)."""
        costs = self.costs
        t_len, q_len = np.diff(self.t_off)[plan[:, 0]], np.diff(self.q_off)[plan[:, 1]]
        longest = int((t_len + q_len).max()) if len(plan) else 0
        sub = np.ascontiguousarray(costs.substitution, dtype=np.int64)
        if not self.cigar and is_small(t_len, q_len):  # a few short pairs: NumPy alone, no compiler to load
            raw = nw_small(self.t_codes, self.t_off, self.q_codes, self.q_off, plan, sub, costs.insert_open,
                           costs.insert_extend, costs.delete_open, costs.delete_extend)  # fmt: skip
            report.update(len(plan))
            return raw, self._cigars(plan, raw, threads)
        from .._simd import lanes_of
        from .kernels import nw_pairs
        from .strips import nw_groups_affine, nw_groups_linear

        simple = match_mismatch(sub)
        reach = longest * costs.bound
        linear = costs.insert_open == 0 and costs.delete_open == 0
        unit = unit_cost(costs, simple)
        if unit is not None:
            raw = unit * self._edit_distances(plan, t_len, q_len, threads, report)
        elif simple is not None and reach < (1 << 29):
            # One pair per SIMD lane: 16-bit lanes while every score (and length) provably fits, else 32-bit.
            narrow = reach < 0x3FFF - costs.bound and longest < 0x3FFF
            lane_dtype, big = (np.int16, 0x3FFF) if narrow else (np.int32, 0x3FFFFFFF)
            groups = nw_groups_linear if linear else nw_groups_affine
            steps = [lane_dtype(x) for x in (*simple, costs.insert_open, costs.insert_extend, costs.delete_open,
                                              costs.delete_extend, big)]  # fmt: skip
            raw = run_groups(groups, plan, t_len, q_len, lanes_of(np.dtype(lane_dtype)), threads, self.t_codes,
                             self.t_off, self.q_codes, self.q_off, *steps, report=report)  # fmt: skip
        else:
            raw = run_pairs(nw_pairs, plan, threads, t_len * np.maximum(q_len, 1) + 1, self.t_codes, self.t_off,
                            self.q_codes, self.q_off, np.ascontiguousarray(sub.T), np.int64(costs.insert_open),
                            np.int64(costs.insert_extend), np.int64(costs.delete_open),
                            np.int64(costs.delete_extend), np.int64, report=report)  # fmt: skip
        return raw, self._cigars(plan, raw, threads)

    def _edit_distances(self, plan, t_len, q_len, threads, report) -> np.ndarray:
        """Edit distances by Myers' bit-vectors (64 query rows a word, one pair per lane), in a band that proves
        most of them; the rest again, sorted by the band each needs, in that band (which always proves)."""
        from .bitparallel import FIRST_BAND, edit_distance_groups

        def run(pairs, bands, within=None, report=SILENT):
            return run_groups(edit_distance_groups, plan[pairs], t_len[pairs], q_len[pairs], 32, threads,
                              self.t_codes, self.t_off, self.q_codes, self.q_off, bands, report=report,
                              within=within)  # fmt: skip

        distances = run(slice(None), np.full(len(plan), FIRST_BAND), report=report)
        unproved = np.flatnonzero(distances < 0)
        if unproved.size:
            bands = -1 - distances[unproved]
            distances[unproved] = run(unproved, bands, within=bands)
            assert distances.min() >= 0, "a band as wide as a pair's bound needs proves its distance"
        return distances

    def _cigars(self, plan, raw, threads) -> np.ndarray:
        """The CIGARs of ``plan``'s pairs (an object array; empty when not asked for)."""
        if not self.cigar:
            return np.empty(0, dtype=object)
        found = cigars(self.t_codes, self.t_off, self.q_codes, self.q_off, plan, self.costs, raw, threads)
        return np.array(found, dtype=object).reshape(-1)

    def _gpu_cigars(self, plan, raw) -> np.ndarray:
        """CIGARs by traceback on the GPU (:func:`.modes_gpu.traceback_on_gpu`, global, the horizontal gap first on
        ties as :func:`.kernels.nw_traceback`), each checked to cost the batch's score."""
        from .modes_gpu import traceback_on_gpu

        if not self.cigar:
            return np.empty(0, dtype=object)
        costs = self.costs
        t_len, q_len = np.diff(self.t_off)[plan[:, 0]], np.diff(self.q_off)[plan[:, 1]]
        # Minimised costs as maximised scores: gaps of L cost open + L x extend, parasail's open + (L - 1) x extend.
        found, end_scores, _ = traceback_on_gpu(
            self.t_codes, self.t_off, self.q_codes, self.q_off, plan, -np.asarray(costs.substitution),
            costs.insert_open + costs.insert_extend, costs.insert_extend, costs.delete_open + costs.delete_extend,
            costs.delete_extend, 0, q_len, t_len, prefer_e=True)  # fmt: skip
        if not np.array_equal(-end_scores, raw):
            raise AssertionError("the GPU's traceback does not cost the batch's scores")
        return np.array(found + [None], dtype=object)[:-1]

    def gpu(self, plan: np.ndarray):
        from .gpu import dp_on_gpu

        costs = self.costs
        sub = np.ascontiguousarray(costs.substitution, dtype=np.int64)
        simple = match_mismatch(sub)
        unit = unit_cost(costs, simple)
        if unit is not None:  # edit distance (times one unit): Myers' bit-vectors, a word of 32 rows per lane
            raw = unit * dp_on_gpu(4, self.t_codes, self.t_off, self.q_codes, self.q_off, plan,
                                   check=not self.checked)  # fmt: skip
            return raw, self._gpu_cigars(plan, raw)
        linear = costs.insert_open == 0 and costs.delete_open == 0
        kind = 3 if simple is None else (0 if linear else 2)
        match, mismatch = simple if simple is not None else (0, 0)
        raw = dp_on_gpu(kind, self.t_codes, self.t_off, self.q_codes, self.q_off, plan, match=match, mismatch=mismatch,
                        ins=costs.insert_extend, dele=costs.delete_extend, ins_open=costs.insert_open,
                        del_open=costs.delete_open, substitution=sub, check=not self.checked)  # fmt: skip
        return raw, self._gpu_cigars(plan, raw)


@dataclass
class DTWScorer:
    """DTW distances (|a - b|) of pairs of signals: ``mode`` a :data:`DTW_MODES` code, ``band`` the window (-1:
    none). Integer signals (int16, int32 or int64) give exact int64 distances; ``narrow`` says whether every
    distance provably fits 32 bits (None: not yet known, checked on the GPU where the values are read).
    float32 signals give float32 distances (each cell one float32 rounding, as cuDTW++ and most time-series
    code compute them), float64 signals float64."""

    t_values: np.ndarray
    t_off: np.ndarray
    q_values: np.ndarray
    q_off: np.ndarray
    mode: int
    band: int
    narrow: bool | None

    @property
    def integer(self) -> bool:
        return self.t_values.dtype.kind in "iu"

    def cpu(self, plan: np.ndarray, threads: int | None, report=SILENT):
        integer = self.integer
        t_len, q_len = np.diff(self.t_off)[plan[:, 0]], np.diff(self.q_off)[plan[:, 1]]
        if is_small(t_len, q_len):  # a few short pairs: NumPy alone, no compiler to load
            raw = dtw_small(self.t_values, self.t_off, self.q_values, self.q_off, plan, self.mode, self.band)
            report.update(len(plan))
            return raw
        from .kernels import dtw_lanes, dtw_pairs

        mode, band = np.int64(self.mode), np.int64(self.band)
        if not integer or self.narrow:
            # Many pairs per SIMD lane group (floats, or int32 while every distance provably fits).
            if integer:
                lane_dtype, widest, unreachable = np.int32, 128, 1 << 30
            else:
                lane_dtype, unreachable = self.t_values.dtype.type, np.inf
                widest = 128 if lane_dtype == np.float32 else 64
            lanes = lanes_for(len(plan), threads, widest)
            raw = run_lanes(dtw_lanes, lane_groups(t_len, q_len, lanes), threads, self.t_values, self.t_off,
                            self.q_values, self.q_off, plan, lane_dtype, lane_dtype, mode, band,
                            lane_dtype(unreachable), report=report)  # fmt: skip
            raw = raw.astype(np.int64) if integer else raw
            if integer:
                raw[raw >= unreachable] = BIG
            return raw
        # Integers too wide for 32-bit lanes: the exact 64-bit scalar kernel.
        t_values, q_values = self.t_values.astype(np.int64), self.q_values.astype(np.int64)
        return run_pairs(dtw_pairs, plan, threads, t_len * np.maximum(q_len, 1) + 1, t_values, self.t_off,
                         q_values, self.q_off, mode, band, np.int64(BIG), np.int64, report=report)  # fmt: skip

    def gpu(self, plan: np.ndarray):
        from .gpu import UNREACHABLE, dp_on_gpu

        raw = dp_on_gpu(1, self.t_values, self.t_off, self.q_values, self.q_off, plan, mode=int(self.mode),
                        check=self.narrow is None)  # fmt: skip
        if self.integer:
            raw[raw >= UNREACHABLE] = BIG
        return raw
