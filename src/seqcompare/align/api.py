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
from .batch import DTW_MODES, DTWScorer, NWScorer
from .costs import Costs
from .kernels import BIG
from .work import PairWork

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


def align(targets, queries=None, *, costs: Costs | None = None, pairs=None, cigar: bool = False,
          threads: int | None = None, device: str = "cpu", progress=False, client=None) -> PairScores:  # fmt: skip
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
    client : dask.distributed.Client, optional
        Score batches of pairs on this Dask cluster (``device`` is the workers'); the result is identical.

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
    scorer = NWScorer(t_codes, t_off, q_codes, q_off, costs, cigar)
    gpu = _use_gpu(device, longest * costs.bound < (1 << 29), "alignment scores must stay below 2**29", client)
    raw, found = run(PairWork(scorer, plan), Concatenation(), _executor(client, device, gpu, threads), progress,
                     "align")  # fmt: skip
    result = PairScores(plan, costs.sign * np.asarray(raw, dtype=np.int64), int(np.sum(t_len * q_len)))
    if cigar:
        result.cigars = list(found)
    return result


def _executor(client, device: str, gpu: bool, threads):
    if client is not None:
        return executor_for_client(client, device="cuda" if gpu else "cpu")
    return GpuExecutor([0]) if gpu else SerialExecutor(threads)


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
        threads: int | None = None, device: str = "cpu", progress=False, client=None) -> PairScores:  # fmt: skip
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
    client : dask.distributed.Client, optional
        Score batches of pairs on this Dask cluster (``device`` is the workers'); the result is identical.

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
    mode_code, band = DTW_MODES[mode], -1 if window is None else window
    narrow = bool(integer and len(plan) and int((t_len + q_len).max()) * spread < (1 << 29))
    scorer = DTWScorer(t_values, t_off, q_values, q_off, mode_code, band, narrow)
    gpu = _use_gpu(device, (narrow or not integer or not len(plan)) and window is None,
                   "DTW needs no window, and integer signals whose distances stay below 2**29", client)  # fmt: skip
    raw = run(PairWork(scorer, plan), Concatenation(), _executor(client, device, gpu, threads), progress, "dtw")
    raw = np.asarray(raw, dtype=t_values.dtype)
    if integer:
        undefined = raw >= BIG
        if undefined.any():
            row = int(np.flatnonzero(undefined)[0])
            raise InputError(f"pair #{row + 1}: DTW of an empty signal against a non-empty one is undefined")
    return PairScores(plan, raw, int(np.sum(t_len * q_len)))
