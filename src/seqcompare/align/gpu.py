"""Batched NW (linear gaps, match/mismatch costs) and integer DTW on an NVIDIA GPU (kernels in dp.cu).

One warp per pair; each lane keeps a strip of R query rows in registers, R chosen per batch from the query
lengths (4 to 32: strips of 128 to 1,024 rows; longer queries run in chunks of 1,024 rows).
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..cuda.runtime import module, require_cupy

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dp.cu")
STRIPS = (4, 8, 16, 32)
UNREACHABLE = 0x3FFFFFFF
_WARPS_PER_BLOCK = 4


def _names() -> tuple:
    return (tuple(f"dp_warp<{r},{kind},int,unsigned char>" for r in STRIPS for kind in (0, 2, 3))
            + tuple(f"dp_warp<{r},1,{v},{v}>" for r in STRIPS for v in ("int", "double"))
            + tuple(f"nw16_warp<{r}>" for r in STRIPS))  # fmt: skip


def _strip(query_length: int) -> int:
    for rows in STRIPS:
        if query_length <= 32 * rows:
            return rows
    return STRIPS[-1]


def _units(plan: np.ndarray, t_len: np.ndarray, q_len: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Pairs of ``chosen`` pairs with the same shape (an odd one out is paired with itself): ``(units, 2)``."""
    order = chosen[np.lexsort((q_len[chosen], t_len[chosen]))]
    key = t_len[order] * (int(q_len.max(initial=0)) + 1) + q_len[order]
    starts = np.r_[True, key[1:] != key[:-1]] if order.size else np.zeros(0, bool)
    run = np.cumsum(starts) - 1
    run_start = np.flatnonzero(starts)
    run_end = np.r_[run_start[1:], order.size]
    position = np.arange(order.size) - run_start[run]
    first = np.flatnonzero(position % 2 == 0)
    partner = np.where(first + 1 < run_end[run[first]], first + 1, first)
    return np.stack([order[first], order[partner]], axis=1).astype(np.int64)


def dp_on_gpu(kind: int, t_values, t_off, q_values, q_off, plan, *, match=0, mismatch=0, ins=0, dele=0, mode=0,
              ins_open=0, del_open=0, substitution=None, timings: dict | None = None) -> np.ndarray:  # fmt: skip
    """Scores of ``plan``'s pairs: ``kind`` 0 is NW with the given costs (linear gaps), 2 the same with gap
    opens (affine), 3 the same with a 5 x 5 ``substitution`` table (target code, query code), 1 is DTW with
    ``mode`` 0 full, 1 open end, 2 subsequence. Integer values give int64 scores
    (:data:`UNREACHABLE` where DTW has no path); float64 signals (DTW only) give float64 (inf). Values are int32-range integers
    (NW codes or DTW signals); the caller has checked that every score fits in 31 bits."""
    cupy = require_cupy()
    start = time.perf_counter()
    plan = np.asarray(plan, dtype=np.int64).reshape(-1, 2)
    floating = np.asarray(t_values).dtype.kind == "f"
    value_type, value_name = (np.float64, "double") if floating else (np.int32, "int")
    # NW reads base codes as bytes (a quarter of the upload); DTW reads its signal values.
    stored_type, stored_name = (np.uint8, "unsigned char") if kind != 1 else (value_type, value_name)
    out = np.empty(len(plan), dtype=np.float64 if floating else np.int64)
    if len(plan) == 0:
        return out
    q_len = np.diff(q_off)[plan[:, 1]]
    t_len = np.diff(t_off)[plan[:, 0]]
    kernels = module(_SOURCE, _names())
    with cupy.cuda.Device(0):
        t_dev = cupy.asarray(np.ascontiguousarray(t_values, dtype=stored_type))
        q_dev = t_dev if q_values is t_values else cupy.asarray(np.ascontiguousarray(q_values, dtype=stored_type))
        t_off_dev, q_off_dev = cupy.asarray(t_off.astype(np.int64)), cupy.asarray(q_off.astype(np.int64))
        table = np.zeros(25, np.int32) if substitution is None else np.asarray(substitution, np.int32).ravel()
        sub_dev = cupy.asarray(table)
        strips = np.array([_strip(int(x)) for x in q_len])
        results, selections = [], []
        events = [cupy.cuda.Event(), cupy.cuda.Event()]
        events[0].record()
        for rows in STRIPS:
            chosen = np.flatnonzero(strips == rows)
            if chosen.size == 0:
                continue
            stride = (int(t_len[chosen].max()) + 2) * (2 if kind >= 2 else 1)
            bound = max(abs(match), abs(mismatch), abs(ins), abs(dele), int(np.abs(table).max()))
            reach = (int(t_len[chosen].max()) + int(q_len[chosen].max()) + 32 * rows) * bound
            if kind == 0 and not floating and reach < (1 << 14) and rows >= 16:
                # Two pairs of one shape per lane, in 16-bit halves (for short strips the extra loads of the
                # second pair cost more than the halved arithmetic saves: 615 against 1,270 GCUPS at 250).
                units = _units(plan, t_len, q_len, chosen)
                blocks = int(min(-(-len(units) // _WARPS_PER_BLOCK), 132 * 16))
                border = cupy.empty(blocks * _WARPS_PER_BLOCK * stride, dtype=cupy.uint32)
                scores = cupy.empty(2 * len(units), dtype=cupy.int64)
                kernels.get_function(f"nw16_warp<{rows}>")(
                    (blocks,), (32 * _WARPS_PER_BLOCK,),
                    (t_dev, t_off_dev, q_dev, q_off_dev, cupy.asarray(plan[units.ravel(), 0]),
                     cupy.asarray(plan[units.ravel(), 1]), np.int32(len(units)), np.int32(match), np.int32(mismatch),
                     np.int32(ins), np.int32(dele), border, np.int64(stride), scores),
                )  # fmt: skip
                results.append(scores)
                selections.append(units.ravel())
                continue
            pair_t = cupy.asarray(plan[chosen, 0])
            pair_q = cupy.asarray(plan[chosen, 1])
            blocks = int(min(-(-chosen.size // _WARPS_PER_BLOCK), 132 * 16))
            warps = blocks * _WARPS_PER_BLOCK
            border = cupy.empty(warps * stride, dtype=value_type)
            scores = cupy.empty(chosen.size, dtype=value_type)
            kernels.get_function(f"dp_warp<{rows},{kind},{value_name},{stored_name}>")(
                (blocks,), (32 * _WARPS_PER_BLOCK,),
                (t_dev, t_off_dev, q_dev, q_off_dev, pair_t, pair_q, np.int32(chosen.size), np.int32(match),
                 np.int32(mismatch), np.int32(ins), np.int32(dele), np.int32(mode), np.int32(ins_open),
                 np.int32(del_open), sub_dev, border, np.int64(stride), scores),
            )  # fmt: skip
            results.append(scores)
            selections.append(chosen)
        events[1].record()
        events[1].synchronize()
        for chosen, scores in zip(selections, results):
            out[chosen] = scores.get()
    if timings is not None:
        timings["kernel_s"] = cupy.cuda.get_elapsed_time(events[0], events[1]) / 1e3
        timings["total_s"] = time.perf_counter() - start
    return out
