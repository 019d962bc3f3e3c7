"""The alignment modes' scores pass on an NVIDIA GPU (``modes.cu``): what :meth:`.modes.ModeScorer.gpu` runs.

One thread per pair, a strip of query rows in registers (:data:`STRIP_ROWS`, by whether the paths are carried), the
row above the strip in a border in global memory (a column's two scores, and with the paths their 12 integers). Pairs are sorted by shape, so the threads of
a warp sweep alike, and launched in batches whose border fits :data:`BORDER_BYTES`. Results are identical to
:func:`.modes.mode_pairs` (scores, positions and statistics); the host refuses scores that could reach 2**29.
"""

from __future__ import annotations

import os

import numpy as np

from ..cuda.runtime import module, require_cupy

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modes.cu")
STRIP_ROWS = {True: 4, False: 8}  # with the paths, 4 rows keep the registers within 255 (154 used, no spills)
_FIELDS = {True: 14, False: 2}
_THREADS = 128
BORDER_BYTES = 1 << 30


def _kernel(paths: bool):
    names = tuple(f"mode_pairs<{STRIP_ROWS[kind]},{'true' if kind else 'false'}>" for kind in (True, False))
    return module(_SOURCE, names).get_function(names[0 if paths else 1])


def batches(t_len_sorted: np.ndarray, budget_bytes: int, fields: int) -> list:
    """Boundaries of runs of the sorted pairs whose border (``(longest target + 1) x fields`` integers a pair, the
    longest being each run's first) fits ``budget_bytes``; at least one pair a run."""
    bounds, start, count = [0], 0, len(t_len_sorted)
    while start < count:
        per_pair = (int(t_len_sorted[start]) + 1) * fields * 4
        stop = min(count, start + max(1, budget_bytes // per_pair))
        bounds.append(stop)
        start = stop
    return bounds


def mode_pairs_on_gpu(t_codes, t_off, q_codes, q_off, plan, scores, gap_open: int, gap_extend: int, mode: int,
                      paths: bool = True):  # fmt: skip
    """``(scores, positions (k, 4), counts (k, 4))`` of ``plan``'s pairs, as :func:`.modes.mode_pairs` gives them
    (int64, in plan order); without ``paths`` as :func:`.modes.mode_scores` (starts and counts -1)."""
    cupy = require_cupy()
    k = len(plan)
    out_scores = np.empty(k, np.int64)
    out_positions = np.empty((k, 4), np.int64)
    out_counts = np.full((k, 4), -1, np.int64)
    if k == 0:
        return out_scores, out_positions, out_counts
    t_len, q_len = np.diff(t_off)[plan[:, 0]], np.diff(q_off)[plan[:, 1]]
    order = np.lexsort((-q_len, -t_len))  # longest targets first: each batch's first pair sizes its border
    device = {name: cupy.asarray(np.ascontiguousarray(array)) for name, array in
              (("t_codes", t_codes), ("t_off", t_off), ("q_codes", q_codes), ("q_off", q_off))}  # fmt: skip
    table = cupy.asarray(np.ascontiguousarray(scores, dtype=np.int32))
    kernel = _kernel(paths)
    fields = _FIELDS[paths]
    bounds = batches(t_len[order], BORDER_BYTES, fields)
    results = []
    for first, last in zip(bounds[:-1], bounds[1:]):
        chosen = order[first:last]
        count = len(chosen)
        pair_t = cupy.asarray(np.ascontiguousarray(plan[chosen, 0], dtype=np.int64))
        pair_q = cupy.asarray(np.ascontiguousarray(plan[chosen, 1], dtype=np.int64))
        border = cupy.empty((int(t_len[chosen[0]]) + 1) * fields * count, dtype=np.int32)
        got = (cupy.empty(count, np.int32), cupy.empty(4 * count, np.int32), cupy.empty(4 * count, np.int32))
        kernel(((count + _THREADS - 1) // _THREADS,), (_THREADS,),
               (device["t_codes"], device["t_off"], device["q_codes"], device["q_off"], pair_t, pair_q,
                np.int32(count), table, np.int32(table.shape[0]), np.int32(gap_open), np.int32(gap_extend),
                np.int32(mode), border, *got))  # fmt: skip
        results.append((chosen, got))
    for chosen, (s, p, c) in results:
        out_scores[chosen] = s.get()
        out_positions[chosen] = p.get().reshape(-1, 4)
        if paths:
            out_counts[chosen] = c.get().reshape(-1, 4)
    return out_scores, out_positions, out_counts
