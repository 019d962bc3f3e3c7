"""CCC/DUO on an NVIDIA GPU: exact products on 1-bit tensor cores, values and thresholds on the device.

Allele counts are split into bit planes: for CCC ``a = p + q`` with ``p = [a >= 1]`` and ``q = [a == 2]``; for
DUO ``a = p``; in sparse mode ``d`` marks defined fields. A product such as ``sum_f a_x(f) a_y(f)`` is then a sum
of AND-popcounts of planes, and plane pairs laid side by side along K make it one 1-bit GEMM: for CCC
``[p, p, q, q] . [p, q, p, q]`` (8 bit-operations per pair and field, the fewest for values 0..2). The GEMM is
hamming.cu's ``mma.sync ... b1.and.popc`` kernel in matrix mode, run once per product kind (``a.a``; in sparse
mode also ``a.d``, ``d.a``, ``d.d``) over the lower triangle of tiles, a block of rows at a time. With a
threshold, ``ccc2_threshold`` (ccc.cu) makes the tables and values on the device and appends only the entries
that pass; without one the products come back and the host finishes them with the shared formulas. Either way
the values equal the CPU's bit for bit.
"""

from __future__ import annotations

import numpy as np

from ._runtime import module, require_cupy
from .hamming import MATRIX_CONFIG, MMA_CONFIGS, ROW_PAD, _kernel_name, micro_tiles

_SOURCE = "ccc.cu"
_ROW_WORDS_MULTIPLE = 16  # 1024 bits: the GEMM's deepest pipeline stage
_BLOCK_CELLS = 1 << 27  # products per kind held on the device at once (512 MB of int32)
FUSE_DENSE = True  # thresholds without missing data in the GEMM's epilogue (else matrix mode + ccc2_threshold)


def _plane_words(plane: np.ndarray) -> np.ndarray:
    """Boolean ``(n, m)`` -> uint64 ``(n, ceil(m / 64))``, field f at bit f % 64 of word f // 64."""
    n, m = plane.shape
    words = -(-m // 64)
    packed = np.zeros((n, words * 8), dtype=np.uint8)
    packed[:, : -(-m // 8)] = np.packbits(plane, axis=1, bitorder="little")
    return packed.view("<u8")


def _operand(planes: list, n_rows: int) -> np.ndarray:
    """Concatenate plane words along K, padded to whole GEMM stages and ``n_rows`` rows."""
    joined = np.concatenate(planes, axis=1) if planes else np.zeros((0, 0), np.uint64)
    width = max(_ROW_WORDS_MULTIPLE, -(-joined.shape[1] // _ROW_WORDS_MULTIPLE) * _ROW_WORDS_MULTIPLE)
    out = np.zeros((n_rows, width), dtype=np.uint64)
    out[: joined.shape[0], : joined.shape[1]] = joined
    return out


def product_operands(a: np.ndarray, d: np.ndarray, metric) -> dict:
    """``{kind: (left, right)}`` uint64 operands whose 1-bit GEMM gives each product kind (kinds: ``aa``,
    and in sparse mode ``da``, ``ad``, ``dd``; the first letter is what the left operand's rows count)."""
    n = a.shape[0]
    n_rows = max(ROW_PAD, -(-n // ROW_PAD) * ROW_PAD)
    if metric.name == "ccc":
        p, q = _plane_words(a >= 1), _plane_words(a == 2)
        sides = {"a": ([p, p, q, q], [p, q, p, q]), "a1": [p, q]}
    else:
        p = _plane_words(a == 1)
        sides = {"a": ([p], [p]), "a1": [p]}
    kinds = {"aa": sides["a"]}
    if metric.sparse:
        dw = _plane_words(d == 1)
        twice = [dw] * len(sides["a1"])
        kinds.update(da=(twice, sides["a1"]), ad=(sides["a1"], twice), dd=([dw], [dw]))
    return {kind: (_operand(left, n_rows), _operand(right, n_rows)) for kind, (left, right) in kinds.items()}


def run_bitmma(codes, a, d, defined, ones, metric, way, sink) -> None:
    """Run :func:`seqcompare.ccc.api.ccc`'s ``bitmma`` method on GPU 0, handing results to ``sink``."""
    if way != 2:
        raise NotImplementedError("3-way CCC runs on the CPU (method='blas') in this release")
    cupy = require_cupy()
    n = a.shape[0]
    with cupy.cuda.Device(0):
        operands = {kind: tuple(cupy.asarray(x) for x in pair) for kind, pair in product_operands(a, d, metric).items()}
        _pairs_2way(cupy, operands, n, a.shape[1], defined, ones, metric, sink)


def vector_factors(defined: np.ndarray, ones: np.ndarray, metric) -> tuple[np.ndarray, np.ndarray]:
    """Per vector and allele bit (``[2v + b]``): the frequency ``s_b / (C c)`` and ``1 - gamma f``, with the
    operations of :func:`seqcompare.ccc.formulas.values` (NaN where ``c = 0``; such values are 0)."""
    c = defined.astype(np.int64)
    s1 = ones.astype(np.int64)
    counted = float(metric.counted_bits)
    with np.errstate(divide="ignore", invalid="ignore"):
        freq = np.stack([(metric.counted_bits * c - s1) / (counted * c), s1 / (counted * c)], axis=1).reshape(-1)
    return freq, 1.0 - float(metric.param) * freq


def _fused_name(config: str) -> str:
    return "ccc2_bitmma<{},{},{},{},{},{}>".format(*MMA_CONFIGS[config])


def _ccc_module():
    return module(_SOURCE, (_fused_name(MATRIX_CONFIG),), ("--fmad=false",))


def _pairs_2way(cupy, operands, n, n_fields, defined, ones, metric, sink, timings: dict | None = None) -> None:
    from ..ccc.formulas import tables

    if sink.limits is not None and not metric.sparse and FUSE_DENSE:
        _fused_2way(cupy, operands["aa"], n, n_fields, defined, ones, metric, sink, timings)
        return

    rows, cols, warp_rows, warp_cols, stages, chunks = MMA_CONFIGS[MATRIX_CONFIG]
    gemm = module("hamming.cu", tuple(_kernel_name(c) for c in MMA_CONFIGS)).get_function(_kernel_name(MATRIX_CONFIG))
    shared = stages * (rows + cols) * chunks * 16
    gemm.max_dynamic_shared_size_bytes = shared
    threads = (rows // warp_rows) * (cols // warp_cols) * 32
    ld = -(-n // cols) * cols
    block_rows = max(rows, (_BLOCK_CELLS // ld) // rows * rows)
    kinds = ("dd", "da", "ad", "aa") if metric.sparse else ("aa",)
    buffers = {kind: cupy.zeros((block_rows, ld), dtype=cupy.int32) for kind in kinds}
    null = np.uint64(0)
    threshold = sink.limits
    if threshold is not None:
        finalize = _ccc_module().get_function("ccc2_threshold")
        defined_dev, ones_dev = cupy.asarray(defined), cupy.asarray(ones)
        freq, weight = (cupy.asarray(x) for x in vector_factors(defined, ones, metric))
        capacity = 1 << 22
        found = _entries(cupy, capacity)
    for r0 in range(0, n, block_rows):
        r1 = min(n, r0 + block_rows)
        tiles = micro_tiles(range(r0 // rows, -(-r1 // rows)), None, True, rows, cols)
        tiles_dev = cupy.asarray(tiles)
        marks = [cupy.cuda.Event() for _ in range(3)] if timings is not None else None
        if marks:
            marks[0].record()
        for kind in kinds:
            left, right = operands[kind]
            gemm((len(tiles),), (threads,),
                 (left, right, np.int32(left.shape[1]), tiles_dev, np.int32(n), np.int32(n), np.int32(1), np.int32(0),
                  np.int32(1), np.uint32(0), null, null, null, null, np.uint64(0), buffers[kind], np.int64(ld),
                  np.int32(r0), np.int32(0)),
                 shared_mem=shared)  # fmt: skip
        if marks:
            marks[1].record()
        if threshold is None:
            _finish_on_host(buffers, kinds, r0, r1, n_fields, metric, sink, tables, defined, ones)
            continue
        while True:
            found["count"].fill(0)
            t = [buffers.get(kind, buffers["aa"]) for kind in ("dd", "da", "ad", "aa")]
            finalize((-(-min(r1, n) // 256), r1 - r0), (256,),
                     (*t, np.int64(ld), np.int32(r0), np.int32(r1 - r0), np.int32(n), np.int32(metric.sparse),
                      np.int32(n_fields), np.int32(metric.counted_bits), defined_dev, ones_dev, freq, weight,
                      *_threshold_args(threshold, metric), found["q"], found["r"], found["entry"], found["value"],
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
        _hand_entries(found, count, sink)


def _threshold_args(threshold, metric):
    limits = [np.float64(x) for x in threshold.by_class]
    combined = np.float64("inf" if threshold.combined is None else threshold.combined)
    return (np.float64(metric.multiplier), *limits, combined)


def _fused_2way(cupy, operand_pair, n, n_fields, defined, ones, metric, sink, timings) -> None:
    """Without missing data: one GEMM launch over the lower triangle, values and thresholds in its epilogue."""
    rows, cols, warp_rows, warp_cols, stages, chunks = MMA_CONFIGS[MATRIX_CONFIG]
    kernel = _ccc_module().get_function(_fused_name(MATRIX_CONFIG))
    shared = stages * (rows + cols) * chunks * 16
    kernel.max_dynamic_shared_size_bytes = shared
    threads = (rows // warp_rows) * (cols // warp_cols) * 32
    left, right = operand_pair
    tiles = cupy.asarray(micro_tiles(range(-(-n // rows)), None, True, rows, cols))
    freq, weight = (cupy.asarray(x) for x in vector_factors(defined, ones, metric))
    defined_dev, ones_dev = cupy.asarray(defined), cupy.asarray(ones)
    found = _entries(cupy, 1 << 22)
    while True:
        found["count"].fill(0)
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        kernel((len(tiles),), (threads,),
               (left, right, np.int32(left.shape[1]), tiles, np.int32(n), np.int32(n_fields),
                np.int32(metric.counted_bits), defined_dev, ones_dev, freq, weight,
                *_threshold_args(sink.limits, metric), found["q"], found["r"], found["entry"], found["value"],
                found["count"], np.uint64(found["q"].size)),
               shared_mem=shared)  # fmt: skip
        stop.record()
        count = int(found["count"].get()[0])
        if count <= found["q"].size:
            break
        found = _entries(cupy, count)
    if timings is not None:
        timings["gemm_s"] = cupy.cuda.get_elapsed_time(start, stop) / 1e3
        timings["finalize_s"] = 0.0
    _hand_entries(found, count, sink)


def _hand_entries(found, count: int, sink) -> None:
    if count:
        q, r = found["q"][:count].get().astype(np.int64), found["r"][:count].get().astype(np.int64)
        sink.add_entries(np.stack([q, r], axis=1), found["entry"][:count].get().astype(np.int64),
                         found["value"][:count].get())  # fmt: skip


def _entries(cupy, capacity: int) -> dict:
    return {"q": cupy.empty(capacity, cupy.uint32), "r": cupy.empty(capacity, cupy.uint32),
            "entry": cupy.empty(capacity, cupy.uint8), "value": cupy.empty(capacity, cupy.float64),
            "count": cupy.zeros(1, cupy.uint64)}  # fmt: skip


def _finish_on_host(buffers, kinds, r0, r1, n_fields, metric, sink, tables, defined, ones) -> None:
    """Full results: products of the block's pairs ``q < r`` back to the host, tables and values there."""
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
    sink.add(index, tables(products, 2, metric.counted_bits), defined, ones)
