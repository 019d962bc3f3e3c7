"""The alignment modes' scores pass on an NVIDIA GPU (``modes.cu``): what :meth:`.modes.ModeScorer.gpu` runs.

Local scores without paths (a database search) whose values provably stay within 16 bits go to ``local16``: a
warp a pair of targets, one in each 16-bit half of every register, its lanes strips of the query's rows, a block
of :data:`SEARCH_WARPS` warps sharing one query's profile in shared memory (:func:`search_rows` picks the strip
height per query). Every other pair takes ``mode_pairs``: one thread per pair, a strip of query rows in registers
(:data:`STRIP_ROWS`, by whether the paths are carried), the row above the strip in a border in global memory (a
column's two scores, and with the paths their 12 integers); pairs are sorted by shape, so the threads of a warp
sweep alike, and launched in batches whose border fits :data:`BORDER_BYTES` and a share of the free memory.
Results are identical to :func:`.mode_kernels.mode_pairs` (scores, positions and statistics); the host refuses
scores that could reach 2**29.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..cuda.runtime import module, require_cupy
from .plans import whole_search_targets

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modes.cu")
STRIP_ROWS = {True: 4, False: 8}  # with the paths, 4 rows keep the registers within 255 (154 used, no spills)
_FIELDS = {True: 14, False: 2}
_THREADS = 128
# The border of one launch at most, and at most this share of the free memory: one thread a pair, so a launch
# needs every pair it can get (with the paths, 14 integers a column: 986 16S reads of 1.5 kb against each other
# ran 12,700 pairs a launch under a 1 GB cap, 3 warps a multiprocessor, at 33 GCUPS).
BORDER_BYTES = 48 << 30
BORDER_SHARE = 0.5


# local16 (modes.cu): warps a block (its SEARCH_WARPS), the strip heights it is built for, and what a step costs
# besides its rows, in rows' worth (a taller strip pays it over more rows; the chunks' padded rows are the price).
SEARCH_WARPS = 4
SEARCH_ROWS = (4, 6, 8, 10, 12, 14, 16, 18, 20)
SEARCH_STEP_ROWS = 3.5
PAD16 = -(1 << 13)  # modes.cu's PAD16: the padding letter's and padded rows' score
SEARCH_SHARED_BYTES = 48 << 10  # a block's profile at most (the default limit of dynamic shared memory)
SEARCH_BLOCKS = 32  # blocks a multiprocessor, at most, in one launch (each takes block units in turn)
SEARCH_BORDER_SHARE = 0.25  # of the free memory, at most, for the borders of queries longer than a chunk

TRACEBACK_ROWS = 8
# Direction bytes of one launch at most (the batch's longest end row x end column x pairs), and at most this share
# of the free memory: one thread a pair, so a launch needs every pair it can get (20,000 pairs of 1,000 in five
# launches of 4 GB ran 5x slower than in one).
WAYS_BYTES = 48 << 30
WAYS_SHARE = 0.6


def _names(shared: bool) -> tuple:
    flag = "true" if shared else "false"
    return (f"mode_pairs<{STRIP_ROWS[True]},true,{flag}>", f"mode_pairs<{STRIP_ROWS[False]},false,{flag}>",
            f"mode_traceback<{TRACEBACK_ROWS},{flag}>")  # fmt: skip


def _kernel(which: int, size: int):
    """Kernel ``which`` of :func:`_names` for a table of ``size`` letters (its copy in shared memory or not; each
    set of three compiled together, once)."""
    names = _names(shared_bytes(size) > 0)
    return module(_SOURCE, names).get_function(names[which])


def profile_stride(rows: int) -> int:
    """4-byte words between two lanes' rows in ``local16``'s profile (modes.cu's ``profile_stride``): the rows'
    words rounded up to even, then to 2 mod 4, so that 8-byte loads of a warp's lanes fall in distinct banks."""
    words = (rows // 2 + 1) // 2 * 2
    return words if words % 4 == 2 else words + 2


def kept_stride(rows: int) -> int:
    """4-byte words a thread of ``local16`` keeps after the profile (modes.cu's ``kept_stride``): the rows of the
    column of its last noted maximum, 16 bits a row for each half, plus one word so the stride is odd (the lanes'
    stores fall in distinct banks)."""
    return rows + 1


def search_profile_bytes(rows: int, size: int, ends: bool = True) -> int:
    """Shared memory of ``local16``: the profile (``size`` letters and the padding's, 32 lanes of ``rows`` rows)
    and, with ``ends``, each thread's kept rows."""
    return ((size + 1) * 32 * profile_stride(rows) + (32 * SEARCH_WARPS * kept_stride(rows) if ends else 0)) * 4


def search_rows(q_len: np.ndarray) -> np.ndarray:
    """The strip height ``local16`` runs each query in: of :data:`SEARCH_ROWS`, the one with the least work per
    column, chunks of 32 R rows times (R + :data:`SEARCH_STEP_ROWS`) (144 rows: 6; 5,478 rows: 20)."""
    heights = np.asarray(SEARCH_ROWS, dtype=np.int64)
    chunks = -(-np.asarray(q_len, dtype=np.int64)[:, None] // (32 * heights[None, :]))
    return heights[np.argmin(chunks * (heights[None, :] + SEARCH_STEP_ROWS), axis=1)]


def local16_eligible(t_len: np.ndarray, q_len: np.ndarray, scores: np.ndarray, gap_open: int,
                     gap_extend: int) -> np.ndarray:  # fmt: skip
    """Which pairs ``local16`` runs (local mode, scores and ends only): both sides non-empty, gap costs not
    negative, every substitution at least :data:`PAD16`, the profile within :data:`SEARCH_SHARED_BYTES`, and every
    value within +-2**13, so that 16 bits hold it and what the padding adds to it (the test
    :meth:`.modes.ModeScorer` makes for the CPU's 16-bit lanes: the shorter side times the best score, plus a gap,
    below 2**13)."""
    t_len = np.asarray(t_len, dtype=np.int64)
    q_len = np.asarray(q_len, dtype=np.int64)
    top = int(max(0, scores.max(initial=0)))
    if (gap_open < 0 or gap_extend < 0 or int(scores.min(initial=0)) < PAD16
            or search_profile_bytes(max(SEARCH_ROWS), scores.shape[0]) > SEARCH_SHARED_BYTES):  # fmt: skip
        return np.zeros(len(t_len), dtype=bool)
    # shorter * top + gap_open + gap_extend < 2**13, as a bound on the shorter side (lengths are never negative):
    # two passes over the pairs where the product took seven (a search's millions of pairs)
    room = (1 << 13) - 1 - gap_open - gap_extend
    if room < 0:
        return np.zeros(len(t_len), dtype=bool)
    shorter = np.minimum(t_len, q_len)
    longest_allowed = room // top if top else np.iinfo(np.int64).max
    return (shorter > 0) & (shorter <= longest_allowed)


def launch_order(queries: np.ndarray, lengths: np.ndarray, by_rank: np.ndarray, targets_per_query: int = 0):
    """``(order, counts)``: the pairs (their query, their target's length) sorted by their query's rank (query
    ``by_rank[r]`` has rank r), then longest target first, then as given; and each rank's number of pairs.

    Two stable sorts of every pair (radix sorts where the keys fit 16 bits) give it in general. A whole search's
    plan (``targets_per_query`` T, from :func:`.plans.whole_search_targets`) needs one sort of its T targets: every
    query meets them in the same order (4 M pairs: about 10 ms against 100 ms on a 2-core EPYC)."""
    n_queries = len(by_rank)
    narrow = lambda values, fits: values.astype(np.uint16 if fits else np.int64)  # noqa: E731
    longest = int(lengths.max()) if len(lengths) else 0
    if targets_per_query:
        by_length = np.argsort(narrow(longest - lengths[:targets_per_query], longest < 1 << 16), kind="stable")
        order = (by_rank[:, None] * targets_per_query + by_length[None, :]).reshape(-1)
        return order, np.full(n_queries, targets_per_query, dtype=np.int64)
    rank = np.empty(n_queries, dtype=np.int64)
    rank[by_rank] = np.arange(n_queries)
    order = np.argsort(narrow(longest - lengths, longest < 1 << 16), kind="stable")
    order = order[np.argsort(narrow(rank[queries[order]], n_queries <= 1 << 16), kind="stable")]
    return order, np.bincount(queries, minlength=n_queries)[by_rank]


@dataclass
class SearchLaunch:
    """One launch of ``local16``: strip height ``rows``; block unit u takes query ``unit_query[u]`` against the
    sorted pairs ``unit_first[u]`` up to ``unit_end[u]``; ``border_stride`` the border's entries a warp (0 when
    every query of the launch fits one chunk)."""

    rows: int
    unit_query: np.ndarray
    unit_first: np.ndarray
    unit_end: np.ndarray
    border_stride: int


def search_launches(plan: np.ndarray, chosen: np.ndarray, t_len: np.ndarray, q_lengths: np.ndarray):
    """``(sorted_pairs, launches)``: how ``local16`` runs the pairs ``plan[chosen]`` (``t_len`` each plan pair's
    target length, ``q_lengths`` each query's length), worked out on the host alone (and tested without a GPU).
    Pairs are sorted by query, in order of strip height, and within a query longest target first
    (so a warp's two targets are alike); a query's pairs go two to a warp and :data:`SEARCH_WARPS` warps to a
    block unit; one :class:`SearchLaunch` a strip height."""
    k = len(plan)
    every = len(chosen) == k
    queries = plan[:, 1] if every else plan[chosen, 1]
    lengths = t_len if every else t_len[chosen]
    n_queries = len(q_lengths)
    heights_of_query = search_rows(q_lengths)
    # Each query's rank: by strip height, then by number; the launches take the pairs in that order, longest
    # target first within a query.
    by_rank = np.lexsort((np.arange(n_queries), heights_of_query))
    whole_search = whole_search_targets(plan, n_queries) if every else 0
    order, counts = launch_order(queries, lengths, by_rank, whole_search)
    pairs = order if every else chosen[order]
    stops = np.cumsum(counts)
    starts = stops - counts
    heights = heights_of_query[by_rank]
    per_unit = 2 * SEARCH_WARPS
    launches = []
    cuts = np.r_[0, np.flatnonzero(heights[1:] != heights[:-1]) + 1, n_queries]
    for low, high in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        present = low + np.flatnonzero(counts[low:high])  # ranks of this height with pairs
        if not present.size:
            continue
        rows = int(heights[low])
        units = -(-counts[present] // per_unit)
        n_units = int(units.sum())
        # Unit u of a query: its pairs from the query's start + u x per_unit, up to the query's end.
        within = np.arange(n_units) - np.repeat(np.cumsum(units) - units, units)
        stride = 0
        if int(q_lengths[by_rank[present]].max()) > 32 * rows:  # a query of more than one chunk: a border a warp
            stride = int(lengths[order[starts[present]]].max()) + 1  # each query's first pair is its longest
        launches.append(SearchLaunch(rows, np.repeat(by_rank[present], units).astype(np.int64),
                                     np.repeat(starts[present], units) + per_unit * within,
                                     np.repeat(stops[present], units), stride))  # fmt: skip
    return pairs.astype(np.int64, copy=False), launches


def _local16(cupy, device: dict, table, plan, sorted_pairs, launches, size: int, gap_open: int, gap_extend: int,
             ends: bool = True) -> np.ndarray:  # fmt: skip
    """``(k, 3)`` int32 on the host: the score, target end and query end (0-based) of each pair of
    ``sorted_pairs`` by ``local16`` in its row of ``k = len(plan)`` (other rows undefined); without ``ends``,
    ``(k, 1)``: the scores alone, by the kernel that notes no ends (12% faster). ``launches`` and the order of
    ``sorted_pairs`` from :func:`search_launches`; the kernel writes each pair's results in plan order."""
    from ..cuda.runtime import free_bytes

    k = len(plan)
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    flag = "true" if ends else "false"
    names = tuple(f"local16<{rows},{flag}>" for rows in SEARCH_ROWS)
    compiled = module(_SOURCE, names)
    fields = 3 if ends else 1
    splat = lambda x: np.uint32((x & 0xFFFF) * 0x10001)  # noqa: E731  (x in both 16-bit halves)
    on_device = cupy.asarray(np.ascontiguousarray(plan, dtype=np.int64))
    pairs_on_device = cupy.asarray(sorted_pairs)
    out = cupy.empty(fields * k, dtype=np.int32)
    for launch in launches:
        n_units = len(launch.unit_query)
        grid = min(n_units, sms * SEARCH_BLOCKS)
        stride = launch.border_stride
        if stride:
            budget = int(SEARCH_BORDER_SHARE * free_bytes(cupy))
            grid = max(1, min(grid, budget // (SEARCH_WARPS * stride * 8)))
        border = cupy.empty(max(1, grid * SEARCH_WARPS * stride * 2), dtype=np.uint32)
        kernel = compiled.get_function(f"local16<{launch.rows},{flag}>")
        kernel((grid,), (32 * SEARCH_WARPS,),
               (device["t_codes"], device["t_off"], device["q_codes"], device["q_off"], on_device, pairs_on_device,
                cupy.asarray(launch.unit_query), cupy.asarray(launch.unit_first), cupy.asarray(launch.unit_end),
                np.int32(n_units), table, np.int32(size), splat(-gap_open), splat(-gap_extend), border,
                np.int64(stride), out), shared_mem=search_profile_bytes(launch.rows, size, ends))  # fmt: skip
    return out.get().reshape(k, fields)


def shared_bytes(size: int) -> int:
    """Dynamic shared memory for a ``size`` x ``size`` table (modes.cu's ``shared_table``): rows padded to an odd
    length when it fits in 44 KB, else none (the table stays in global memory)."""
    return size * (size | 1) * 4 if size * size <= 11 * 1024 else 0


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
                      paths: bool = True, ends: bool = True):  # fmt: skip
    """``(scores, positions (k, 4), counts (k, 4))`` of ``plan``'s pairs, as :func:`.mode_kernels.mode_pairs` gives them
    (int64, in plan order); without ``paths`` as :func:`.mode_kernels.mode_scores` (starts and counts -1); without
    ``ends`` (nor ``paths``) the positions are ``(k, 0)``: scores alone, which ``local16`` finds 12% faster."""
    k = len(plan)
    ends = ends or paths
    out_scores = np.empty(k, np.int64)
    out_positions = np.empty((k, 4 if ends else 0), np.int64)
    # Without the paths there are no counts: one read-only row of -1 (nothing writes into them).
    out_counts = np.full((k, 4), -1, np.int64) if paths else np.broadcast_to(np.int64(-1), (k, 4))
    if k == 0:
        return out_scores, out_positions, out_counts
    t_len, q_len = np.diff(t_off)[plan[:, 0]], np.diff(q_off)[plan[:, 1]]
    searched = None
    if mode == 1 and not paths:
        fast = local16_eligible(t_len, q_len, scores, gap_open, gap_extend)
        if fast.any():
            every = bool(fast.all())  # a database search: no gathers, slices of the host's arrays
            chosen = np.arange(k) if every else np.flatnonzero(fast)
            searched = search_launches(plan, chosen, t_len, np.diff(q_off))
    cupy = require_cupy()
    device = {name: cupy.asarray(np.ascontiguousarray(array)) for name, array in
              (("t_codes", t_codes), ("t_off", t_off), ("q_codes", q_codes), ("q_off", q_off))}  # fmt: skip
    table = cupy.asarray(np.ascontiguousarray(scores, dtype=np.int32))
    rest = None
    if searched is not None:
        found = _local16(cupy, device, table, plan, *searched, table.shape[0], gap_open, gap_extend, ends)
        at = slice(None) if every else chosen
        found = found[at]
        out_scores[at] = found[:, 0]
        if ends:
            out_positions[at, 0::2] = -1
            out_positions[at, 1::2] = found[:, 1:]
        if every:
            return out_scores, out_positions, out_counts
        rest = np.flatnonzero(~fast)
    if rest is None:
        rest = np.arange(k)
    # longest targets first: each batch's first pair sizes its border
    order = rest[np.lexsort((-q_len[rest], -t_len[rest]))]
    kernel = _kernel(0 if paths else 1, table.shape[0])
    fields = _FIELDS[paths]
    from ..cuda.runtime import free_bytes

    bounds = batches(t_len[order], int(min(BORDER_BYTES, BORDER_SHARE * free_bytes(cupy))), fields)
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
                np.int32(mode), border, *got), shared_mem=shared_bytes(table.shape[0]))  # fmt: skip
        results.append((chosen, got))
    for chosen, (s, p, c) in results:
        out_scores[chosen] = s.get()
        if ends:
            out_positions[chosen] = p.get().reshape(-1, 4)
        if paths:
            out_counts[chosen] = c.get().reshape(-1, 4)
    return out_scores, out_positions, out_counts


def traceback_on_gpu(t_codes, t_off, q_codes, q_off, plan, scores, open_e: int, extend_e: int, open_f: int,
                     extend_f: int, mode: int, end_rows, end_columns, prefer_e: bool = False):  # fmt: skip
    """CIGARs of ``plan``'s pairs by traceback on the GPU, each alignment ending at cell ``(end_rows[k],
    end_columns[k])`` (1-based query row, target column; 0 for none).

    A horizontal gap of L (a target letter against a gap, ``I``) costs ``open_e + (L - 1) * extend_e``, a vertical
    one (``D``) ``open_f + (L - 1) * extend_f``; ``scores[a, b]`` scores target code ``a`` against query code
    ``b``; ``mode`` is a :data:`.modes.MODE_CODES` value. The path is :func:`.mode_kernels.mode_traceback`'s (with
    ``prefer_e``, :func:`.kernels.nw_traceback`'s: a tie between the gap states takes the horizontal one).

    Returns
    -------
    (list of str, numpy.ndarray, numpy.ndarray)
        The CIGARs, the score of each end cell (int64, to check against the scores' pass) and each alignment's
        start ``(k, 2)``: (row, column) where the walk stopped.
    """
    cupy = require_cupy()
    k = len(plan)
    end_rows = np.asarray(end_rows, dtype=np.int64)
    end_columns = np.asarray(end_columns, dtype=np.int64)
    cigars = [""] * k
    end_scores = np.empty(k, np.int64)
    starts = np.empty((k, 2), np.int64)
    if k == 0:
        return cigars, end_scores, starts
    order = np.lexsort((-end_columns, -end_rows))
    device = {name: cupy.asarray(np.ascontiguousarray(array)) for name, array in
              (("t_codes", t_codes), ("t_off", t_off), ("q_codes", q_codes), ("q_off", q_off))}  # fmt: skip
    table = cupy.asarray(np.ascontiguousarray(scores, dtype=np.int32))
    kernel = _kernel(2, table.shape[0])
    from ..cuda.runtime import free_bytes

    budget = int(min(WAYS_BYTES, WAYS_SHARE * free_bytes(cupy)))
    first = 0
    while first < k:
        # A batch: as many pairs (sorted by end row, longest first) as the direction bytes allow.
        rows = int(end_rows[order[first]])
        widest = np.maximum.accumulate(end_columns[order[first:]])
        cost = max(1, rows) * np.maximum(widest, 1) * (np.arange(len(widest)) + 1)  # nondecreasing
        last = first + max(1, int(np.searchsorted(cost, budget, side="right")))
        chosen = order[first:last]
        count = len(chosen)
        width = int(end_columns[chosen].max())
        slot = 2 * (end_rows[chosen] + end_columns[chosen]) + 1
        text_end = np.cumsum(slot)
        ways = cupy.empty(max(1, rows * width * count), dtype=np.uint8)
        border = cupy.empty((width + 1) * 2 * count, dtype=np.int32)
        text = cupy.empty(int(text_end[-1]), dtype=np.uint8)
        lengths = cupy.empty(count, np.int32)
        got_scores = cupy.empty(count, np.int32)
        got_starts = cupy.empty(2 * count, np.int32)
        as_device = lambda values: cupy.asarray(np.ascontiguousarray(values))  # noqa: E731
        kernel(((count + _THREADS - 1) // _THREADS,), (_THREADS,),
               (device["t_codes"], device["t_off"], device["q_codes"], device["q_off"],
                as_device(plan[chosen, 0].astype(np.int64)), as_device(plan[chosen, 1].astype(np.int64)),
                np.int32(count), as_device(end_rows[chosen].astype(np.int32)),
                as_device(end_columns[chosen].astype(np.int32)), table, np.int32(table.shape[0]), np.int32(open_e),
                np.int32(extend_e), np.int32(open_f), np.int32(extend_f), np.int32(mode), np.int32(prefer_e),
                border, ways, np.int64(width), text, as_device(text_end), lengths, got_scores, got_starts),
               shared_mem=shared_bytes(table.shape[0]))  # fmt: skip
        raw = text.get().tobytes()
        for at, end, length in zip(chosen.tolist(), text_end.tolist(), lengths.get().tolist()):
            cigars[at] = raw[end - length : end].decode("ascii")
        end_scores[chosen] = got_scores.get()
        starts[chosen] = got_starts.get().reshape(-1, 2)
        first = last
    return cigars, end_scores, starts
