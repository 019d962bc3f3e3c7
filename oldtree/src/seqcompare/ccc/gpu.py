"""CCC/DUO on an NVIDIA GPU: exact products on 1-bit tensor cores, values and thresholds on the device.

Allele counts are split into bit planes: for CCC ``a = p + q`` with ``p = [a >= 1]`` and ``q = [a == 2]``; for
DUO ``a = p``; in sparse mode ``d`` marks defined fields. A product such as ``sum_f a_x(f) a_y(f)`` is then a sum
of AND-popcounts of planes, and plane pairs laid side by side along K make it one 1-bit GEMM: for CCC
``[p, p, q, q] . [p, q, p, q]`` (8 bit-operations per pair and field, the fewest for values 0..2). The GEMM is
seqcompare's shared 1-bit GEMM (:mod:`seqcompare.cuda.bitgemm`) in matrix mode, run once per product kind (``a.a``; in sparse
mode also ``a.d``, ``d.a``, ``d.d``) over the lower triangle of tiles, a block of rows at a time. With a
threshold, ``ccc2_threshold`` (ccc.cu) makes the tables and values on the device and appends only the entries
that pass; without one the products come back and the host finishes them with the shared formulas. Either way
the values equal the CPU's bit for bit.
"""

from __future__ import annotations

import os

import numpy as np

from ..cuda import bitgemm
from ..cuda.runtime import free_bytes, module, require_cupy, to_device

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ccc.cu")
_ROW_WORDS_MULTIPLE = bitgemm.ROW_WORDS_MULTIPLE
_BLOCK_CELLS = None  # products per kind held on the device at once; None: from the free memory
_PIVOT_BATCH_BYTES = None  # 3-way: bytes for a batch of pivots' operands and products; None: from free memory
GEMM_CONFIG = bitgemm.MATRIX_CONFIG
ROW_PAD = bitgemm.ROW_PAD


PLANE_P, PLANE_Q, PLANE_D = 0, 1, 2


def device_planes(cupy, codes: np.ndarray, metric):
    """Upload CoMet codes and build their bit planes on the device: ``(planes, defined, ones, metric)`` with
    planes ``(3, n_rows, words)`` uint64 (P, Q, D; rows padded to the GEMM's tiles), the marginals on the host,
    and the metric to compute with (non-sparse when no genotype is missing: the same tallies, fewer
    products)."""
    n, m = codes.shape
    n_rows = max(ROW_PAD, -(-n // ROW_PAD) * ROW_PAD)
    words = max(1, -(-m // 64))
    codes_dev = to_device(codes if codes.dtype == np.uint8 else codes.astype(np.uint8))
    if metric.sparse and not bool((codes_dev == 2).any()):
        metric = replace_sparse(metric, False)
    planes = cupy.zeros((3, n_rows, words), dtype=cupy.uint64)
    defined = cupy.zeros(n, dtype=cupy.uint64)
    ones = cupy.zeros(n, dtype=cupy.uint64)
    cells = n * words
    if cells and m:
        _ccc_module().get_function("planes_from_codes")(
            (-(-cells // 256),), (256,),
            (codes_dev, np.int32(n), np.int64(m), np.int32(words), np.int32(n_rows), np.int32(metric.name == "duo"),
             np.int32(metric.sparse), planes, defined, ones))  # fmt: skip
    del codes_dev
    return planes, defined.get().astype(np.int64), ones.get().astype(np.int64), metric


def _device_operand(cupy, planes, plane_ids: list):
    """Planes side by side along K, padded to whole GEMM stages."""
    words = planes.shape[2]
    width = max(_ROW_WORDS_MULTIPLE, -(-len(plane_ids) * words // _ROW_WORDS_MULTIPLE) * _ROW_WORDS_MULTIPLE)
    out = cupy.zeros((planes.shape[1], width), dtype=cupy.uint64)
    for at, plane in enumerate(plane_ids):
        out[:, at * words : (at + 1) * words] = planes[plane]
    return out


def device_operands(cupy, planes, metric) -> dict:
    """``{kind: (left, right)}`` operands whose 1-bit GEMM gives each 2-way product kind: ``aa`` (for CCC
    ``[P, P, Q, Q] . [P, Q, P, Q]``), and with missing data ``da``, ``ad``, ``dd``; the first letter is what the
    left operand's rows count."""
    a = [PLANE_P, PLANE_Q] if metric.name == "ccc" else [PLANE_P]
    kinds = {"aa": ([x for x in a for _ in a], a * len(a))}
    if metric.sparse:
        twice = [PLANE_D] * len(a)
        kinds.update(da=(twice, a), ad=(a, twice), dd=([PLANE_D], [PLANE_D]))
    return {kind: (_device_operand(cupy, planes, left), _device_operand(cupy, planes, right))
            for kind, (left, right) in kinds.items()}  # fmt: skip


def run_bitmma(codes, metric, way, items=None, limits=None, row_offset: int = 0, device: int = 0):
    r"""The ``bitmma`` method of :func:`seqcompare.ccc` on one GPU: yields ``(items done, block)`` with
    :class:`~seqcompare.ccc.reductions.CCCBlock`\ s in global indices (``row_offset`` is the first row's). Codes
    go up as bytes; planes and marginals are made on the device.

    ``items = (first, last)`` limits the work to pairs ``(q, r)`` with ``first <= r < last`` (2-way; ``first`` a
    multiple of :func:`row_alignment`) or to pivots ``first <= i < last`` (3-way); the default is everything.
    With ``limits`` (a :class:`~seqcompare.ccc.reductions.Threshold`) the values are thresholded on the device
    and only the entries that pass come back. Without missing data the tallies are made as in non-sparse mode
    (fewer products, the same numbers); the values always follow ``metric``'s own formulas."""
    cupy = require_cupy()
    n, m = codes.shape
    with cupy.cuda.Device(device):
        planes, defined, ones, tally_metric = device_planes(cupy, codes, metric)
        if way == 2:
            yield from _pairs_2way(cupy, device_operands(cupy, planes, tally_metric), n, m, defined, ones,
                                   tally_metric, limits, rows=items, value_metric=metric, row_offset=row_offset)  # fmt: skip
        else:
            pair = device_operands(cupy, planes, replace_sparse(tally_metric, False))["aa"]
            yield from _triples_3way(cupy, pair, planes, n, m, defined, ones, tally_metric, limits, pivots=items,
                                     value_metric=metric, row_offset=row_offset)  # fmt: skip


def replace_sparse(metric, sparse: bool):
    from dataclasses import replace

    return replace(metric, sparse=sparse)


def vector_factors(defined: np.ndarray, ones: np.ndarray, metric, way: int) -> tuple:
    """What the finishing kernels read per vector and allele bit (``[2v + b]``): the frequency, its weight
    ``1 - gamma f``, and the non-sparse joint factor, as
    :func:`seqcompare.ccc.formulas.vector_frequencies` makes them (NaN where ``c = 0``; such values are
    0). Where CoMet's frequencies are per pair (2-way sparse), these are ``s_b / (C c)`` and serve only the
    kernels' screens: ``(freq, weight, recip_sum)``, ``recip_sum`` 0.0 when it is per item."""
    from .formulas import vector_frequencies

    freq, recip_sum = vector_frequencies(defined, ones, metric, way)
    if freq is None:
        c = defined.astype(np.int64)
        s1 = ones.astype(np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            freq = np.stack([(metric.counted_bits * c - s1) / (metric.counted_bits * c),
                             s1 / (metric.counted_bits * c)], axis=1)  # fmt: skip
    freq = np.ascontiguousarray(freq, dtype=np.float64).reshape(-1)
    return freq, 1.0 - float(metric.param) * freq, 0.0 if recip_sum is None else float(recip_sum)


def _ccc_module():
    return module(_SOURCE, (), ("--fmad=false",))


def _matrix_gemm():
    """The shared 1-bit GEMM in matrix mode: ``(run, rows, cols)`` where ``run(left, right, tiles, out, ld, n_left,
    n_right, mirror=False, row0=0)`` writes ``out[(row - row0) * ld + col]`` for every cell of the tiles (and the
    transposed cell too with ``mirror``, off the diagonal); ``rows`` x ``cols`` is the tile."""
    rows, cols = bitgemm.CONFIGS[GEMM_CONFIG][:2]

    def run(left, right, tiles, out, ld, n_left, n_right, mirror=False, row0=0):
        bitgemm.launch(left, right, tiles, n_left=n_left, n_right=n_right, symmetric=False, mirror=mirror,
                       output=bitgemm.MatrixOutput(out, ld, row0, 0), config=GEMM_CONFIG)  # fmt: skip

    return run, rows, cols


def _device_factors(cupy, defined, ones, metric, way: int) -> tuple:
    """What the finishing kernels read per vector, on the device: defined fields, allele-1 totals,
    :func:`vector_factors` (frequencies, weights, and the weights as float32 for the screens), then the value
    rule's scalars (CoMet's sparse formulas or not, the non-sparse joint factor)."""
    freq, weight, recip_sum = vector_factors(defined, ones, metric, way)
    freq, weight = cupy.asarray(freq), cupy.asarray(weight)
    return (cupy.asarray(defined), cupy.asarray(ones), freq, weight, weight.astype(cupy.float32),
            np.int32(metric.sparse), np.float64(recip_sum))  # fmt: skip


def row_alignment() -> int:
    """Row blocks of the 2-way GPU path start at multiples of this (the GEMM's tile rows)."""
    return bitgemm.CONFIGS[GEMM_CONFIG][0]


def _pairs_2way(cupy, operands, n, n_fields, defined, ones, metric, threshold, timings: dict | None = None,
                rows=None, value_metric=None, row_offset: int = 0):  # fmt: skip
    """2-way products of row blocks, as ``(pairs done, block)``; ``metric`` says which products exist (tallies),
    ``value_metric`` (default: ``metric``) which formulas make the values; ``threshold`` (a Threshold or None)
    thresholds on the device."""
    value_metric = value_metric or metric

    first, last = (0, n) if rows is None else (int(rows[0]), min(n, int(rows[1])))
    gemm, tile_rows, cols = _matrix_gemm()
    if first % tile_rows:
        raise ValueError(f"2-way GPU row ranges start at multiples of {tile_rows}, not {first}")
    ld = -(-n // cols) * cols
    kinds = ("dd", "da", "ad", "aa") if metric.sparse else ("aa",)
    # As few row blocks as memory allows: a launch over a block of few rows has few tiles and idles the GPU.
    cells = _BLOCK_CELLS or free_bytes(cupy) // (2 * 4 * len(kinds))
    fitting = max(tile_rows, (cells // ld) // tile_rows * tile_rows)
    block_rows = min(-(-(last - first) // tile_rows) * tile_rows, fitting)
    buffers = {kind: cupy.zeros((block_rows, ld), dtype=cupy.int32) for kind in kinds}
    if threshold is not None:
        finalize = _ccc_module().get_function("ccc2_threshold")
        factors = _device_factors(cupy, defined, ones, value_metric, 2)
        capacity = 1 << 22
        found = _entries(cupy, capacity)
    for r0 in range(first, last, block_rows):
        r1 = min(last, r0 + block_rows)
        tiles = bitgemm.micro_tiles(range(r0 // tile_rows, -(-r1 // tile_rows)), None, True, tile_rows, cols)
        tiles_dev = cupy.asarray(tiles)
        marks = [cupy.cuda.Event() for _ in range(3)] if timings is not None else None
        if marks:
            marks[0].record()
        for kind in kinds:
            gemm(*operands[kind], tiles_dev, buffers[kind], ld, n, n, row0=r0)
        if marks:
            marks[1].record()
        block_pairs = (min(r1, n) * (min(r1, n) - 1) - r0 * (r0 - 1)) // 2
        if threshold is None:
            yield block_pairs, _finish_on_host(buffers, kinds, r0, r1, n_fields, metric, value_metric, defined, ones,
                                               row_offset)  # fmt: skip
            continue
        while True:
            found["count"].fill(0)
            t = [buffers.get(kind, buffers["aa"]) for kind in ("dd", "da", "ad", "aa")]
            finalize((-(-min(r1, n) // 256), r1 - r0), (256,),
                     (*t, np.int64(ld), np.int32(r0), np.int32(r1 - r0), np.int32(n), np.int32(metric.sparse),
                      np.int32(n_fields), np.int32(metric.counted_bits), *factors,
                      *_threshold_args(threshold, value_metric, gamma=True),
                      found["q"], found["r"], found["entry"], found["value"],
                      found["count"], np.uint64(found["q"].size)))  # fmt: skip
            if marks:
                marks[2].record()
                marks[2].synchronize()
                timings["gemm_s"] = timings.get("gemm_s", 0.0) + cupy.cuda.get_elapsed_time(marks[0], marks[1]) / 1e3
                timings["finalize_s"] = timings.get("finalize_s", 0.0) + cupy.cuda.get_elapsed_time(marks[1], marks[2]) / 1e3
            count = int(found["count"].get()[0])
            if count <= found["q"].size:
                break
            found = _entries(cupy, count)
        yield block_pairs, _entry_block(found, "qr", count, threshold, row_offset)


def _threshold_args(threshold, metric, gamma: bool = False):
    limits = [np.float64(x) for x in threshold.by_class]
    combined = np.float64("inf" if threshold.combined is None else threshold.combined)
    constants = (np.float64(metric.multiplier), np.float64(metric.param)) if gamma else (np.float64(metric.multiplier),)
    return (*constants, *limits, combined)


def _entry_block(found, names: str, count: int, threshold, row_offset: int):
    """The entries the device kept, as a block (indices from the ``found`` arrays named by ``names``)."""
    from .reductions import CCCBlock

    if count == 0:  # most blocks of a high threshold: no copies back (each would wait for the device)
        empty = np.empty(0, dtype=np.int64)
        return CCCBlock(np.empty((0, len(names)), np.int64), entry=empty, value=np.empty(0), limits=threshold)
    index = np.stack([found[x][:count].get().astype(np.int64) for x in names], axis=1).reshape(-1, len(names))
    return CCCBlock(index + row_offset if row_offset else index, entry=found["entry"][:count].get().astype(np.int64),
                    value=found["value"][:count].get(), limits=threshold)  # fmt: skip


def _entries(cupy, capacity: int) -> dict:
    return {"q": cupy.empty(capacity, cupy.uint32), "r": cupy.empty(capacity, cupy.uint32),
            "entry": cupy.empty(capacity, cupy.uint8), "value": cupy.empty(capacity, cupy.float64),
            "count": cupy.zeros(1, cupy.uint64)}  # fmt: skip


def _finish_on_host(buffers, kinds, r0, r1, n_fields, metric, value_metric, defined, ones, row_offset: int):
    """Full results: products of the block's pairs ``q < r`` back to the host, tables and values there."""
    from .formulas import tables, values
    from .reductions import CCCBlock

    host = {kind: buffers[kind][: r1 - r0].get() for kind in kinds}
    local, q = np.nonzero(np.arange(next(iter(host.values())).shape[1])[None, :] < np.arange(r0, r1)[:, None])
    r = local + r0
    products = np.empty((local.size, 4), dtype=np.int64)
    products[:, 3] = host["aa"][local, q]
    if metric.sparse:
        products[:, 0] = host["dd"][local, q]
        products[:, 1] = host["ad"][local, q]  # a of R (the GEMM's left row) x d of Q: S = 1, R uses a
        products[:, 2] = host["da"][local, q]
    else:
        products[:, 0] = n_fields
        products[:, 1] = ones[r]
        products[:, 2] = ones[q]
    index = np.stack([q, r], axis=1)
    table = tables(products, 2, metric.counted_bits)
    value = values(table, [defined[q], defined[r]], [ones[q], ones[r]], value_metric)
    return CCCBlock(index + row_offset if row_offset else index, value, table)


def triple_kinds(metric) -> list:
    """Product subsets S the GEMM must make (bit 4: i uses a, 2: j, 1: k): only a.a.a without missing data."""
    return list(range(8)) if metric.sparse else [7]


def _segments(subset: int, expand: dict):
    """Right-operand segments ``(pivot plane, j plane)`` and left-operand planes (k) of product ``subset``."""
    pick = ["a" if subset & bit else "d" for bit in (4, 2, 1)]
    right, left = [], []
    for u in expand[pick[0]]:
        for v in expand[pick[1]]:
            for w in expand[pick[2]]:
                right.append((u, v))
                left.append(w)
    return right, left


def _triples_3way(cupy, pair_operands, planes, n, n_fields, defined, ones, metric, threshold,
                  timings: dict | None = None, pivots=None, value_metric=None, row_offset: int = 0):  # fmt: skip
    """3-way: pair products a.a once (both triangles), then batches of pivots: masked right operands, one GEMM
    per product kind in matrix mode, and ``ccc3_threshold`` or the host to finish; yields ``(triples done,
    block)``. ``metric``, ``value_metric`` and ``threshold`` as for :func:`_pairs_2way`."""
    value_metric = value_metric or metric

    gemm, rows, cols = _matrix_gemm()
    n_rows = pair_operands[0].shape[0]
    blocks = -(-n // rows)
    pair_aa = cupy.zeros((n_rows, n_rows), dtype=cupy.int32)
    gemm(*pair_operands, cupy.asarray(bitgemm.micro_tiles(range(blocks), None, True, rows, cols)), pair_aa, n_rows,
         n, n, mirror=True)  # fmt: skip
    expand = {"a": [PLANE_P, PLANE_Q] if metric.name == "ccc" else [PLANE_P], "d": [PLANE_D]}
    words = planes.shape[2]
    kinds = triple_kinds(metric)
    specs = {}
    for subset in kinds:
        right, left = _segments(subset, expand)
        specs[subset] = (_device_operand(cupy, planes, left), cupy.asarray(np.array([u for u, _ in right], np.int32)),
                         cupy.asarray(np.array([v for _, v in right], np.int32)), len(right))  # fmt: skip
    widest = max(spec[0].shape[1] for spec in specs.values())
    per_pivot = n_rows * (widest * 8 + n_rows * 4 * len(kinds))  # right operand rows + product columns
    # Many pivots per batch: each launch then has enough tiles to fill the GPU.
    budget = _PIVOT_BATCH_BYTES or free_bytes(cupy) // 3
    batch = int(max(1, min(n, budget // per_pivot)))
    right_buffer = cupy.empty(batch * n_rows * widest, dtype=cupy.uint64)
    products = {subset: cupy.zeros((n_rows, batch * n_rows), dtype=cupy.int32) for subset in kinds}
    builder = _ccc_module().get_function("pivot_operand")
    if threshold is not None:
        finalize = _ccc_module().get_function("ccc3_threshold")
        factors = _device_factors(cupy, defined, ones, value_metric, 3)
        found = _entries3(cupy, 1 << 22)
        pointers = cupy.asarray(np.array([products[s].data.ptr if s in products else 0 for s in range(8)],
                                         dtype=np.uint64))  # fmt: skip
    col_blocks = n_rows // cols
    first, last = (0, n - 2) if pivots is None else (int(pivots[0]), min(n - 2, int(pivots[1])))
    for i0 in range(first, last, batch):
        size = min(batch, last - i0)
        tile_parts = []
        for b in range(size):
            first_block = (i0 + b + 1) // rows
            part = bitgemm.micro_tiles(range(first_block, blocks), None, True, rows, cols)
            part = part[part[:, 1] >= first_block]
            part[:, 1] += b * col_blocks
            tile_parts.append(part)
        tiles = cupy.asarray(np.concatenate(tile_parts))
        marks = [cupy.cuda.Event() for _ in range(2 * len(kinds) + 2)] if timings is not None else None
        for number, subset in enumerate(kinds):
            left, seg_pivot, seg_row, n_segments = specs[subset]
            row_words = left.shape[1]
            right = right_buffer[: size * n_rows * row_words].reshape(size * n_rows, row_words)
            if marks:
                marks[2 * number].record()
            builder((min(65535, -(-right.size // 256)),), (256,),
                    (planes, np.int32(n_rows), np.int32(words), np.int32(row_words), seg_pivot, seg_row,
                     np.int32(n_segments), np.int32(i0), np.int32(size), right))  # fmt: skip
            if marks:
                marks[2 * number + 1].record()
            gemm(left, right, tiles, products[subset], batch * n_rows, n, size * n_rows)
        if marks:
            marks[-2].record()
        batch_triples = sum((n - 1 - i) * (n - 2 - i) // 2 for i in range(i0, i0 + size))
        if threshold is None:
            yield from _finish_triples_on_host(products, pair_aa, i0, size, n, n_rows, n_fields, ones, metric,
                                               value_metric, defined, row_offset)  # fmt: skip
            continue
        while True:
            found["count"].fill(0)
            finalize((-(-(size * n_rows) // 256), n), (256,),
                     (pointers, pair_aa, np.int64(batch * n_rows), np.int32(n_rows), np.int32(i0), np.int32(size),
                      np.int32(n), np.int32(n_fields), np.int32(metric.counted_bits), *factors,
                      *_threshold_args(threshold, value_metric), found["i"], found["j"], found["k"],
                      found["entry"], found["value"], found["count"], np.uint64(found["i"].size)))  # fmt: skip
            count = int(found["count"].get()[0])
            if count <= found["i"].size:
                break
            found = _entries3(cupy, count)
        if marks:
            marks[-1].record()
            marks[-1].synchronize()
            elapsed = cupy.cuda.get_elapsed_time
            build = sum(elapsed(marks[2 * x], marks[2 * x + 1]) for x in range(len(kinds))) / 1e3
            gemm_time = sum(elapsed(marks[2 * x + 1], marks[2 * x + 2] if x + 1 < len(kinds) else marks[-2])
                            for x in range(len(kinds))) / 1e3  # fmt: skip
            timings["build_s"] = timings.get("build_s", 0.0) + build
            timings["gemm_s"] = timings.get("gemm_s", 0.0) + gemm_time
            timings["finalize_s"] = timings.get("finalize_s", 0.0) + elapsed(marks[-2], marks[-1]) / 1e3
            timings["batches"] = timings.get("batches", 0) + 1
        yield batch_triples, _entry_block(found, "ijk", count, threshold, row_offset)


def _entries3(cupy, capacity: int) -> dict:
    found = {x: cupy.empty(capacity, cupy.uint32) for x in "ijk"}
    found.update(entry=cupy.empty(capacity, cupy.uint8), value=cupy.empty(capacity, cupy.float64),
                 count=cupy.zeros(1, cupy.uint64))  # fmt: skip
    return found


def _finish_triples_on_host(products, pair_aa, i0, size, n, n_rows, n_fields, ones, metric, value_metric, defined,
                            row_offset: int):  # fmt: skip
    """Full results: the batch's products back to the host, tables and values there; a block per pivot."""
    from .formulas import tables, values
    from .reductions import CCCBlock

    host = {subset: buffer.get() for subset, buffer in products.items()}
    pairs = pair_aa.get()
    for b in range(size):
        i = i0 + b
        j, k = np.triu_indices(n, 1)
        keep = j > i
        j, k = j[keep], k[keep]
        column = b * n_rows + j
        t = np.empty((j.size, 8), dtype=np.int64)
        for subset in range(8):
            if subset in host:
                t[:, subset] = host[subset][k, column]
        if not metric.sparse:
            t[:, 6] = pairs[i, j]
            t[:, 5] = pairs[i, k]
            t[:, 3] = pairs[j, k]
            t[:, 4] = ones[i]
            t[:, 2] = ones[j]
            t[:, 1] = ones[k]
            t[:, 0] = n_fields
        index = np.stack([np.full(j.size, i), j, k], axis=1)
        table = tables(t, 3, metric.counted_bits)
        value = values(table, [defined[index[:, x]] for x in range(3)], [ones[index[:, x]] for x in range(3)],
                       value_metric)  # fmt: skip
        yield j.size, CCCBlock(index + row_offset if row_offset else index, value, table)
