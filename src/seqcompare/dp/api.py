"""Public batched DP API: :func:`align` (Needleman-Wunsch) and :func:`dtw` over many pairs in one call."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .. import validation
from ..errors import InputError
from ..progress import SILENT, reporter
from .costs import Costs
from .._simd import lanes_of
from .kernels import BIG, dtw_lanes, dtw_pairs, nw_pairs, nw_traceback
from .strips import nw_groups_affine, nw_groups_linear

DTW_MODES = {"full": 0, "open-end": 1, "subsequence": 2}
_LIMIT = 1 << 59  # no score may come near int64's range: refuse, never wrap


@dataclass
class PairScores:
    """Scores of a batch: ``pairs`` ``(k, 2)`` (target index, query index), ``scores`` (``k``), ``cigars`` when
    asked for (NW), and the number of DP ``cells`` (for GCUPS)."""

    pairs: np.ndarray
    scores: np.ndarray
    cells: int
    cigars: list | None = None


def _concatenated(items, dtype=None):
    arrays = [np.asarray(x, dtype=dtype) for x in items]
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([a.size for a in arrays], out=offsets[1:])
    values = np.concatenate([a.ravel() for a in arrays]) if arrays else np.empty(0, dtype=dtype or np.float64)
    return values, offsets


def _as_sequences(items, what: str):
    """Base codes (A C G T N = 0..4) and offsets of strings, a SequenceSet or a FASTA path."""
    from ..io.sequences import SequenceSet

    if isinstance(items, (str, os.PathLike)):
        from ..io.fasta import read_sequences

        items = read_sequences(items, iupac_as_n=True)
    if isinstance(items, SequenceSet):
        return items.codes, items.offsets, items.names
    items = list(items)
    names = [f"{what}{i + 1}" for i in range(len(items))]
    sequences = SequenceSet.from_strings(items, names, iupac_as_n=True, source=what)
    return sequences.codes, sequences.offsets, names


def pair_plan(n_targets: int, n_queries: int | None, pairs) -> np.ndarray:
    """``(k, 2)`` pairs: given, by order (equal counts), or all-vs-all ``i < j`` when there are no queries."""
    if pairs is not None:
        plan = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        limits = (n_targets, n_queries if n_queries is not None else n_targets)
        for column, (name, limit) in enumerate(zip(("target", "query"), limits)):
            bad = (plan[:, column] < 0) | (plan[:, column] >= limit)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise InputError(f"pair #{row + 1} names {name} {plan[row, column]}, but there are {limit}")
        return plan
    if n_queries is None:
        i, j = np.triu_indices(n_targets, 1)
        return np.stack([i, j], axis=1).astype(np.int64)
    if n_queries != n_targets:
        raise InputError(f"pairs by order need as many queries as targets: {n_targets} targets, {n_queries} queries")
    return np.stack([np.arange(n_targets), np.arange(n_targets)], axis=1).astype(np.int64)


def _run(kernel, plan, threads, weights, *args, report=SILENT):
    threads = threads or os.cpu_count() or 1
    out = np.empty(len(plan), dtype=args[-1])
    if len(plan) == 0:
        return out
    # Chunks of about equal work, in order.
    cumulative = np.cumsum(weights)
    cuts = np.searchsorted(cumulative, np.linspace(0, cumulative[-1], 4 * threads + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], cuts, [len(plan)]]))
    pair_t, pair_q = np.ascontiguousarray(plan[:, 0]), np.ascontiguousarray(plan[:, 1])
    fixed = args[:-1]
    def chunk(first, last):
        kernel(*fixed[:4], pair_t, pair_q, first, last, *fixed[4:], out)
        report.update(last - first)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(chunk, bounds[:-1], bounds[1:]))
    return out


def _lane_groups(t_len: np.ndarray, q_len: np.ndarray, lanes: int) -> list:
    """Pairs sorted by shape and cut into groups of ``lanes`` (similar lengths: little padding)."""
    order = np.lexsort((q_len, t_len))[::-1]
    return [order[at : at + lanes] for at in range(0, len(order), lanes)]


def _run_lanes(kernel, groups, threads, t_values, t_off, q_values, q_off, plan, lane_dtype, value_dtype, *args,
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


def _run_groups(groups, plan, t_len, q_len, lanes, threads, t_codes, t_off, q_codes, q_off, *steps,
                report=SILENT) -> np.ndarray:  # fmt: skip
    """NW scores by ``groups`` (:func:`seqcompare.dp.strips.nw_groups_linear` or ``nw_groups_affine``): pairs
    sorted by shape (little padding in a vector), threads over runs of whole vectors of about equal work."""
    threads = threads or os.cpu_count() or 1
    out = np.empty(len(plan), dtype=np.int64)
    if len(plan) == 0:
        return out
    order = np.lexsort((q_len, t_len))[::-1].copy()
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


def _lanes_for(n_pairs: int, threads: int | None, widest: int) -> int:
    """Pairs per lane group: as wide as ``widest`` (more independent work per vector instruction) while every
    thread still gets a group or two; never below 32."""
    per_thread = -(-n_pairs // (2 * (threads or os.cpu_count() or 1)))
    return int(min(widest, max(32, 1 << max(0, (per_thread - 1).bit_length()))))


def _match_mismatch(table: np.ndarray):
    """``(match, mismatch)`` when the table is one value on the diagonal and one elsewhere, else None."""
    diagonal = np.diag(table)
    off = table[~np.eye(len(table), dtype=bool)]
    if np.all(diagonal == diagonal[0]) and np.all(off == off[0]):
        return int(diagonal[0]), int(off[0])
    return None


def _use_gpu(device: str, eligible: bool, why: str) -> bool:
    from ..gpu._runtime import resolve_device

    if device == "cpu":
        return False
    if device == "cuda" and not eligible:
        raise InputError(f"on the GPU, {why}; use device='cpu'")
    return eligible and resolve_device(device) == "cuda"


def align(targets, queries=None, *, costs: Costs | None = None, pairs=None, cigar: bool = False,
          threads: int | None = None, device: str = "cpu", progress=False) -> PairScores:  # fmt: skip
    """Global alignment scores (Needleman-Wunsch, Gotoh's affine gaps) of many pairs in one call.

    Parameters
    ----------
    targets, queries : FASTA path, SequenceSet or list of str
        Pairs are ``targets[i]`` against ``queries[i]`` by order; without ``queries``, every pair ``i < j`` of
        ``targets`` (all-vs-all); with ``pairs``, those ``(target, query)`` indices.
    costs : Costs
        :meth:`Costs.seed` (costs C, X, I, D to minimise), :meth:`Costs.edit` (the default), or :meth:`Costs.scores`
        (maximised scores: match/mismatch or a matrix, affine gaps).
    cigar : bool
        Also return each alignment as a CIGAR (M, I: target base against a gap, D: query base against a gap).
    threads : int, optional
        CPU threads (default: all cores).
    device : {"cpu", "cuda", "auto"}
        The GPU runs every cost form (scores below 2**29).
    progress : bool or callable
        Report progress over the pairs (see :mod:`seqcompare.progress`).

    Returns
    -------
    PairScores
        ``scores`` are costs (minimised) for cost forms and scores (maximised) for :meth:`Costs.scores`.
    """
    costs = Costs.edit() if costs is None else costs
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a Costs (Costs.edit(), Costs.seed(...), Costs.scores(...)), not {costs!r}")
    threads = validation.threads(threads)
    validation.choice(device, "device", ("cpu", "cuda", "auto"))
    t_codes, t_off, _ = _as_sequences(targets, "target")
    if queries is None:
        q_codes, q_off = t_codes, t_off
    else:
        q_codes, q_off, _ = _as_sequences(queries, "query")
    plan = pair_plan(len(t_off) - 1, None if queries is None else len(q_off) - 1, pairs)
    t_len, q_len = np.diff(t_off)[plan[:, 0]], np.diff(q_off)[plan[:, 1]]
    longest = int((t_len + q_len).max()) if len(plan) else 0
    if longest * costs.bound >= _LIMIT:
        raise InputError(f"alignment scores could reach {longest * costs.bound}, beyond the exact 64-bit range")
    sub = np.ascontiguousarray(costs.substitution, dtype=np.int64)
    simple = _match_mismatch(sub)
    reach = longest * costs.bound
    linear = costs.insert_open == 0 and costs.delete_open == 0
    report = reporter(progress, len(plan), "pair", "align")
    if _use_gpu(device, reach < (1 << 29), "alignment scores must stay below 2**29"):
        from ..gpu.dp import dp_on_gpu

        kind = 3 if simple is None else (0 if linear else 2)
        match, mismatch = simple if simple is not None else (0, 0)
        raw = dp_on_gpu(kind, t_codes, t_off, q_codes, q_off, plan, match=match, mismatch=mismatch,
                        ins=costs.insert_extend, dele=costs.delete_extend, ins_open=costs.insert_open,
                        del_open=costs.delete_open, substitution=sub)  # fmt: skip
        report.update(len(plan))
    elif simple is not None and reach < (1 << 29):
        # One pair per SIMD lane: 16-bit lanes while every score (and length) provably fits, else 32-bit.
        narrow = reach < 0x3FFF - costs.bound and longest < 0x3FFF
        lane_dtype, big = (np.int16, 0x3FFF) if narrow else (np.int32, 0x3FFFFFFF)
        groups = nw_groups_linear if linear else nw_groups_affine
        steps = [lane_dtype(x) for x in (*simple, costs.insert_open, costs.insert_extend, costs.delete_open,
                                          costs.delete_extend, big)]  # fmt: skip
        raw = _run_groups(groups, plan, t_len, q_len, lanes_of(np.dtype(lane_dtype)), threads, t_codes, t_off,
                          q_codes, q_off, *steps, report=report)  # fmt: skip
    else:
        raw = _run(nw_pairs, plan, threads, t_len * np.maximum(q_len, 1) + 1, t_codes, t_off, q_codes, q_off,
                   np.ascontiguousarray(sub.T),
                   np.int64(costs.insert_open), np.int64(costs.insert_extend), np.int64(costs.delete_open),
                   np.int64(costs.delete_extend), np.int64, report=report)  # fmt: skip
    report.close()
    result = PairScores(plan, costs.sign * raw, int(np.sum(t_len * q_len)))
    if cigar:
        result.cigars = _cigars(t_codes, t_off, q_codes, q_off, plan, costs, raw, threads)
    return result


def _cigars(t_codes, t_off, q_codes, q_off, plan, costs: Costs, scores, threads) -> list:
    """CIGARs by compiled traceback (threads over pairs); each alignment's cost is checked against the
    batch's score for that pair."""
    from .reference import run_length

    cost_by_query = np.ascontiguousarray(np.asarray(costs.substitution, dtype=np.int64).T)
    steps = [np.int64(x) for x in (costs.insert_open, costs.insert_extend, costs.delete_open, costs.delete_extend)]

    def one(k):
        a, b = plan[k]
        t, q = t_codes[t_off[a] : t_off[a + 1]], q_codes[q_off[b] : q_off[b + 1]]
        ops = np.empty(t.size + q.size, np.uint8)
        cost, first = nw_traceback(t, q, cost_by_query, *steps, ops)
        if cost != scores[k]:
            raise AssertionError(f"traceback cost {cost} differs from the batch's {scores[k]} for pair {k}")
        return run_length("".join("MID"[x] for x in ops[first:].tolist()))

    with ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
        return list(pool.map(one, range(len(plan))))


def _as_signals(items, what: str):
    if isinstance(items, np.ndarray) and items.ndim == 2:
        items = list(items)
    items = [np.asarray(x).ravel() for x in items]
    kinds = {x.dtype.kind for x in items}
    if kinds - set("biuf"):
        raise InputError(f"{what}: signals must be numeric")
    dtype = np.float64 if "f" in kinds else np.int64
    values, offsets = _concatenated(items, dtype)
    if dtype == np.float64 and not np.isfinite(values).all():
        raise InputError(f"{what}: signals contain NaN or infinity")
    return values, offsets


def dtw(a, b=None, *, mode: str = "full", window: int | None = None, pairs=None,
        threads: int | None = None, device: str = "cpu", progress=False) -> PairScores:  # fmt: skip
    """Dynamic time warping with |x - y| cost of many pairs of signals in one call.

    Parameters
    ----------
    a, b : 2-D array (one series per row) or list of 1-D arrays
        Pairs ``a[i]`` against ``b[i]``; without ``b`` every pair ``i < j`` of ``a``; or ``pairs`` indices.
        Integer signals give exact int64 distances, float signals float64.
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
        The GPU runs integer (32-bit range) and float64 signals, without a window.
    progress : bool or callable
        Report progress over the pairs (see :mod:`seqcompare.progress`).

    Returns
    -------
    PairScores
        ``scores``: int64 for integer signals (exact), float64 otherwise.
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
        if q_values.dtype != t_values.dtype:
            t_values, q_values = t_values.astype(np.float64), q_values.astype(np.float64)
    plan = pair_plan(len(t_off) - 1, None if b is None else len(q_off) - 1, pairs)
    t_len, q_len = np.diff(t_off)[plan[:, 0]], np.diff(q_off)[plan[:, 1]]
    integer = t_values.dtype == np.int64
    if integer and len(plan):
        spread = int(max(t_values.max(initial=0), q_values.max(initial=0))) - int(
            min(t_values.min(initial=0), q_values.min(initial=0)))
        if int((t_len + q_len).max()) * spread >= _LIMIT:
            raise InputError("DTW distances of these integer signals could pass the exact 64-bit range; give floats")
    mode_code, band = np.int64(DTW_MODES[mode]), np.int64(-1 if window is None else window)
    narrow = bool(integer and len(plan) and int((t_len + q_len).max()) * spread < (1 << 29))
    report = reporter(progress, len(plan), "pair", "dtw")
    if _use_gpu(device, (narrow or not integer or not len(plan)) and window is None,
                "DTW needs no window, and integer signals whose distances stay below 2**29"):  # fmt: skip
        from ..gpu.dp import UNREACHABLE, dp_on_gpu

        raw = dp_on_gpu(1, t_values, t_off, q_values, q_off, plan, mode=int(mode_code))
        report.update(len(plan))
        if integer:
            raw[raw >= UNREACHABLE] = BIG
    elif not integer or narrow:
        # Many pairs per SIMD lane group (float64, or int32 while every distance provably fits).
        lane_dtype, widest, unreachable = (np.int32, 128, 1 << 30) if integer else (np.float64, 64, np.inf)
        lanes = _lanes_for(len(plan), threads, widest)
        raw = _run_lanes(dtw_lanes, _lane_groups(t_len, q_len, lanes), threads, t_values, t_off, q_values, q_off,
                         plan, lane_dtype, lane_dtype, mode_code, band, lane_dtype(unreachable),
                         report=report)  # fmt: skip
        raw = raw.astype(np.int64) if integer else raw
        if integer:
            raw[raw >= unreachable] = BIG
    else:
        raw = _run(dtw_pairs, plan, threads, t_len * np.maximum(q_len, 1) + 1, t_values, t_off, q_values, q_off,
                   mode_code, band, t_values.dtype.type(BIG if integer else np.inf), t_values.dtype.type,
                   report=report)  # fmt: skip
    report.close()
    if integer:
        undefined = raw >= BIG
        if undefined.any():
            row = int(np.flatnonzero(undefined)[0])
            raise InputError(f"pair #{row + 1}: DTW of an empty signal against a non-empty one is undefined")
    return PairScores(plan, raw, int(np.sum(t_len * q_len)))
