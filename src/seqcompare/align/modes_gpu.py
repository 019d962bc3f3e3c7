"""The alignment modes' scores pass on an NVIDIA GPU (``modes.cu``): what :meth:`.modes.ModeScorer.gpu` runs.

One thread per pair, a strip of :data:`STRIP_ROWS` query rows in registers, the row above the strip in a border in
global memory (14 integers a column: the two scores and their paths). Pairs are sorted by shape, so the threads of
a warp sweep alike, and launched in batches whose border fits :data:`BORDER_BYTES`. Results are identical to
:func:`.modes.mode_pairs` (scores, positions and statistics); the host refuses scores that could reach 2**29.
"""

from __future__ import annotations

import os

import numpy as np

from ..cuda.runtime import module, require_cupy

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modes.cu")
STRIP_ROWS = 4
_FIELDS = 14
_THREADS = 128
BORDER_BYTES = 1 << 30


def _kernel():
    name = f"mode_pairs<{STRIP_ROWS}>"
    return module(_SOURCE, (name,)).get_function(name)


def batches(t_len_sorted: np.ndarray, budget_bytes: int) -> list:
    """Boundaries of runs of the sorted pairs whose border (``(longest target + 1) x 14`` integers a pair, the
    longest being each run's first) fits ``budget_bytes``; at least one pair a run."""
    bounds, start, count = [0], 0, len(t_len_sorted)
    while start < count:
        per_pair = (int(t_len_sorted[start]) + 1) * _FIELDS * 4
        stop = min(count, start + max(1, budget_bytes // per_pair))
        bounds.append(stop)
        start = stop
    return bounds


def mode_pairs_on_gpu(t_codes, t_off, q_codes, q_off, plan, scores, gap_open: int, gap_extend: int, mode: int):
    """``(scores, positions (k, 4), counts (k, 4))`` of ``plan``'s pairs, as :func:`.modes.mode_pairs` gives them
    (int64, in plan order)."""
    cupy = require_cupy()
    k = len(plan)
    out_scores = np.empty(k, np.int64)
    out_positions = np.empty((k, 4), np.int64)
    out_counts = np.empty((k, 4), np.int64)
    if k == 0:
        return out_scores, out_positions, out_counts
    t_len, q_len = np.diff(t_off)[plan[:, 0]], np.diff(q_off)[plan[:, 1]]
    order = np.lexsort((-q_len, -t_len))  # longest targets first: each batch's first pair sizes its border
    device = {name: cupy.asarray(np.ascontiguousarray(array)) for name, array in
              (("t_codes", t_codes), ("t_off", t_off), ("q_codes", q_codes), ("q_off", q_off))}  # fmt: skip
    table = cupy.asarray(np.ascontiguousarray(scores, dtype=np.int32))
    kernel = _kernel()
    bounds = batches(t_len[order], BORDER_BYTES)
    results = []
    for first, last in zip(bounds[:-1], bounds[1:]):
        chosen = order[first:last]
        count = len(chosen)
        pair_t = cupy.asarray(np.ascontiguousarray(plan[chosen, 0], dtype=np.int64))
        pair_q = cupy.asarray(np.ascontiguousarray(plan[chosen, 1], dtype=np.int64))
        border = cupy.empty((int(t_len[chosen[0]]) + 1) * _FIELDS * count, dtype=np.int32)
        got = (cupy.empty(count, np.int32), cupy.empty(4 * count, np.int32), cupy.empty(4 * count, np.int32))
        kernel(((count + _THREADS - 1) // _THREADS,), (_THREADS,),
               (device["t_codes"], device["t_off"], device["q_codes"], device["q_off"], pair_t, pair_q,
                np.int32(count), table, np.int32(table.shape[0]), np.int32(gap_open), np.int32(gap_extend),
                np.int32(mode), border, *got))  # fmt: skip
        results.append((chosen, got))
    for chosen, (s, p, c) in results:
        out_scores[chosen] = s.get()
        out_positions[chosen] = p.get().reshape(-1, 4)
        out_counts[chosen] = c.get().reshape(-1, 4)
    return out_scores, out_positions, out_counts
