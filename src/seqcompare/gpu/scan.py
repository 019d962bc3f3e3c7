"""Signature scanning on an NVIDIA GPU (CuPy): the CPU's exact index + fallback method on packed data.

Only packed data crosses PCIe: 3 bits a base (2 for the base, 1 for N) of samples and signatures, the index
(a bitmap of present k-mers and its buckets) and the signatures' clean runs. Scores are summed on the host from
the qualities, which never travel.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._jit import jit
from ..scan.index import LADDER_RECIPE, SignatureIndex, clean_runs, lookup_tables, window_keys
from ._runtime import module, require_cupy

_SOURCE = "scan.cu"
NO_MATCH = 0x7FFFFFFF
_MAX_GRID_Y = 65535  # samples per launch (the grid's y extent)


@jit
def _pack(codes, offsets, word0, first, last, bases, nmask):
    """Pack records ``first:last``: 2 bits a base into ``bases`` (N as 0), N bits into ``nmask``, each record
    from its 32-base word ``word0[r]``; bases past a record's end are N. Codes are 0..4, so ``c & 3`` is the
    base and ``c >> 2`` the N bit, without branches."""
    for r in range(first, last):
        start, stop = offsets[r], offsets[r + 1]
        full = (stop - start) >> 5
        for w in range(full):
            q = start + 32 * w
            packed = np.uint64(0)
            mask = np.uint64(0)
            for j in range(32):
                c = np.uint64(codes[q + j])
                packed |= (c & np.uint64(3)) << np.uint64(2 * j)
                mask |= (c >> np.uint64(2)) << np.uint64(j)
            bases[word0[r] + w] = packed
            nmask[word0[r] + w] = np.uint32(mask)
        if start + 32 * full < stop:
            packed = np.uint64(0)
            mask = np.uint64(0xFFFFFFFF)
            for j in range(stop - start - 32 * full):
                c = np.uint64(codes[start + 32 * full + j])
                packed |= (c & np.uint64(3)) << np.uint64(2 * j)
                mask &= ~((np.uint64(1) - (c >> np.uint64(2))) << np.uint64(j))
            bases[word0[r] + full] = packed
            nmask[word0[r] + full] = np.uint32(mask)


def pack_records(codes: np.ndarray, offsets: np.ndarray, threads: int = 1, allocate=np.empty):
    """``(bases, nmask, word0)``: records packed from 32-base word boundaries, plus one spare word.
    ``allocate(shape, dtype)`` makes the outputs (e.g. in page-locked memory)."""
    lengths = np.diff(offsets)
    word0, total = sample_layout(lengths)
    bases = allocate((total + 1,), np.uint64)
    nmask = allocate((total + 1,), np.uint32)
    bases[total] = 0
    nmask[total] = 0xFFFFFFFF
    bounds = np.unique(np.searchsorted(offsets, np.linspace(0, offsets[-1], 4 * threads + 1)).clip(0, lengths.size))
    bounds = np.unique(np.concatenate([[0], bounds, [lengths.size]]))
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda lo_hi: _pack(codes, offsets, word0, lo_hi[0], lo_hi[1], bases, nmask),
                      zip(bounds[:-1], bounds[1:])))  # fmt: skip
    return bases, nmask, word0


@jit
def window_sums(quality, offsets, sample, offset, length):
    """Sum of each row's sample qualities over ``[offset, offset + length)``."""
    out = np.empty(sample.size, np.int64)
    for row in range(sample.size):
        start = offsets[sample[row]] + offset[row]
        total = 0
        for q in range(start, start + length[row]):
            total += quality[q]
        out[row] = total
    return out


@dataclass
class DeviceIndex:
    """A signature index on GPU 0: :class:`~seqcompare.scan.index.SignatureIndex`'s lookup tables (sorted and
    ranked on the device) plus the signatures' packed bases and clean runs, in ``device_arrays``."""

    k: int
    lengths: np.ndarray  # per signature row, on the host
    max_level: int
    bitmap: object
    word_rank: object
    key_start: object
    entry_sig: object
    entry_pos: object
    device_arrays: dict


def index_host_parts(codes: np.ndarray, offsets: np.ndarray, k: int, allocate=np.empty) -> dict:
    """The host's share of a :class:`DeviceIndex` (compiled CPU passes): window keys and entries, clean runs
    and the packed signatures; ``allocate(shape, dtype)`` makes the large arrays."""
    keys, entry_sig, entry_pos = window_keys(codes, offsets, k, allocate)
    run_offsets, run_starts, run_levels = clean_runs(codes, offsets, k)
    sig_bases, sig_nmask, sig_word0 = pack_records(codes, offsets, allocate=allocate)
    return {"keys": keys, "entry_sig": entry_sig, "entry_pos": entry_pos, "sig_bases": sig_bases,
            "sig_nmask": sig_nmask, "sig_word0": sig_word0, "sig_length": np.diff(offsets).astype(np.int32),
            "run_offsets": run_offsets, "run_starts": run_starts.astype(np.int32),
            "run_levels": run_levels.astype(np.int32)}  # fmt: skip


def upload_index(parts: dict, k: int) -> DeviceIndex:
    """Sort and rank :func:`index_host_parts`' keys on GPU 0 and upload the rest (CuPy only, no CPU kernels)."""
    cupy = require_cupy()
    with cupy.cuda.Device(0):
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            tables = lookup_tables(cupy.asarray(parts["keys"]), cupy.asarray(parts["entry_sig"]),
                                   cupy.asarray(parts["entry_pos"]), k, cupy)  # fmt: skip
            names = ("sig_bases", "sig_nmask", "sig_word0", "sig_length", "run_offsets", "run_starts", "run_levels")
            uploaded = {name: cupy.asarray(parts[name]) for name in names}
            module(_SOURCE, ())
        stream.synchronize()
    levels = parts["run_levels"]
    return DeviceIndex(k, parts["sig_length"].astype(np.int64), int(levels.max()) if levels.size else 0, *tables,
                       uploaded)  # fmt: skip


def device_index(codes: np.ndarray, offsets: np.ndarray, k: int) -> DeviceIndex:
    """The :class:`DeviceIndex` of signatures ``codes``/``offsets`` (as :class:`SequenceSet` holds them)."""
    return upload_index(index_host_parts(codes, offsets, k), k)


def sample_layout(lengths: np.ndarray):
    """``(word0, total_words)``: where each sample's packed words start (from 32-base word boundaries), as
    :func:`pack_records` lays them out, and how many words that takes (without the spare word)."""
    word0 = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum((lengths + 31) >> 5, out=word0[1:])
    return word0[:-1], int(word0[-1])


def scan_on_gpu(samples, index: DeviceIndex | SignatureIndex, report_all: bool, threshold: float, *, threads: int = 1,
                timings: dict | None = None):  # fmt: skip
    """Occurrences of ``index``'s signatures (see :func:`device_index`) on GPU 0: ``(sample, signature, offset,
    quality sum)`` rows, as the CPU path returns them
    (the first occurrence per pair, or every occurrence). With a score threshold every occurrence is found on
    the device and the host keeps those that reach it. ``timings`` receives stage times (host clocks) and
    kernel times (CUDA events)."""
    from .hamming import pinned_empty

    start = time.perf_counter()
    if not isinstance(index, DeviceIndex):
        index = device_index(index.codes, index.offsets, index.k)
    packed_at = time.perf_counter()
    bases, nmask, word0 = pack_records(samples.codes, samples.offsets, threads, allocate=pinned_empty)
    device: dict = {}
    sample, signature, offset = device_occurrences(bases, nmask, word0, samples.lengths, index,
                                                   report_all or threshold >= 0, timings=device)  # fmt: skip
    rows = host_rows(samples, index.lengths, sample, signature, offset, report_all, threshold)
    if timings is not None:
        uploaded, done = device.pop("start"), device.pop("done")
        timings.update(index_build_s=packed_at - start, pack_s=uploaded - packed_at,
                       results_s=time.perf_counter() - done, **device)  # fmt: skip
    return rows


def host_rows(samples, signature_lengths: np.ndarray, sample, signature, offset, report_all: bool, threshold: float):
    """``(sample, signature, offset, quality sum)`` rows from the device's occurrences: scores are summed on
    the host (the qualities never travel); with a threshold, occurrences below it are dropped and, unless
    ``report_all``, the first remaining one per pair is kept."""
    lengths = signature_lengths[signature]
    total = window_sums(samples.quality, samples.offsets, sample, offset, lengths)
    if threshold >= 0:
        keep = total >= threshold * lengths
        sample, signature, offset, total = sample[keep], signature[keep], offset[keep], total[keep]
        if not report_all:
            order = np.lexsort((offset, signature, sample))
            pair = sample[order] * (signature_lengths.size + 1) + signature[order]
            first = order[np.r_[True, pair[1:] != pair[:-1]]] if order.size else order
            sample, signature, offset, total = sample[first], signature[first], offset[first], total[first]
    return sample, signature, offset, total


def device_occurrences(sample_bases, sample_nmask, sample_word0, sample_lengths, index: DeviceIndex,
                       find_all: bool, *, timings: dict | None = None):  # fmt: skip
    """Upload packed samples (:func:`pack_records`' output) and run the scan kernels on GPU 0 against a
    :func:`device_index`: ``(sample, signature, offset)``, the first occurrence per pair or, with
    ``find_all``, every occurrence. ``timings`` receives host clock marks and kernel times (CUDA events)."""
    cupy = require_cupy()
    clock = {"start": time.perf_counter()}
    kernels = module(_SOURCE, ())
    stream = cupy.cuda.Stream(non_blocking=True)
    k = index.k
    with stream:
        n_samples, n_signatures = sample_lengths.size, index.lengths.size
        sample_length = sample_lengths.astype(np.int32)
        row_words = ((sample_length.astype(np.int64) + 63) >> 6) + 2
        row0 = np.zeros(n_samples + 1, dtype=np.int64)
        np.cumsum(row_words, out=row0[1:])
        level_stride = int(row0[-1])
        n_levels = index.max_level + 1
        up = dict(index.device_arrays)
        for name, value in {
            "sample_bases": sample_bases, "sample_nmask": sample_nmask, "sample_word0": sample_word0,
            "sample_length": sample_length, "row0": row0[:-1], "row_words": row_words.astype(np.int32),
        }.items():  # fmt: skip
            up[name] = cupy.empty(value.shape, dtype=value.dtype)
            up[name].set(value, stream=stream)
        best = cupy.empty(max(1, n_samples * n_signatures), dtype=cupy.int32)
        levels = cupy.empty(max(1, n_levels * level_stride), dtype=cupy.uint64)
        stream.synchronize()
        clock["upload"] = time.perf_counter()
        max_length = int(sample_length.max()) if n_samples else 0
        max_words = int(row_words.max()) if n_samples else 0
        capacity = 1 << 20
        while True:
            out = cupy.empty(3 * capacity, dtype=cupy.int32)
            count = cupy.zeros(1, dtype=cupy.uint64)
            best.fill(NO_MATCH)
            events = [cupy.cuda.Event() for _ in range(4)]
            events[0].record(stream)
            common_out = (np.int32(find_all), best, out, count, np.uint64(capacity))
            batches = [(first, min(_MAX_GRID_Y, n_samples - first)) for first in range(0, n_samples, _MAX_GRID_Y)]
            for first_sample, batch in batches:
                if max_length >= k:
                    kernels.get_function("scan_index")(
                        ((max_length + 255) // 256, batch), (256,),
                        (up["sample_bases"], up["sample_nmask"], up["sample_word0"], up["sample_length"],
                         up["sig_bases"], up["sig_nmask"], up["sig_word0"], up["sig_length"], np.int32(n_signatures),
                         np.int32(k), index.bitmap, index.word_rank, index.key_start, index.entry_sig,
                         index.entry_pos, *common_out, np.int32(first_sample)),
                        stream=stream,
                    )  # fmt: skip
            events[1].record(stream)
            for first_sample, batch in batches:
                grid = ((max_words + 255) // 256, batch)
                tail = (np.int32(first_sample),)
                kernels.get_function("clean_windows")(
                    grid, (256,), (up["sample_nmask"], up["sample_word0"], up["sample_length"], up["row0"],
                                   up["row_words"], np.int32(k), levels, *tail), stream=stream)  # fmt: skip
                for level in range(1, n_levels):
                    first, second, shift = (int(x) for x in LADDER_RECIPE[level])
                    kernels.get_function("dilate")(
                        grid, (256,), (levels, np.int64(level_stride), up["row0"], up["row_words"], np.int32(level),
                                       np.int32(first), np.int32(second), np.int32(shift), *tail),
                        stream=stream)  # fmt: skip
            events[2].record(stream)
            for first_sample, batch in batches:
                if n_signatures:
                    kernels.get_function("scan_fallback")(
                        (n_signatures, batch), (128,),
                        (up["sample_bases"], up["sample_nmask"], up["sample_word0"], up["sample_length"],
                         up["sig_bases"], up["sig_nmask"], up["sig_word0"], up["sig_length"], np.int32(n_signatures),
                         levels, np.int64(level_stride), up["row0"], up["row_words"], up["run_offsets"],
                         up["run_starts"], up["run_levels"], *common_out, np.int32(first_sample)),
                        stream=stream,
                    )  # fmt: skip
            events[3].record(stream)
            events[3].synchronize()
            clock["kernels"] = time.perf_counter()
            found = int(count.get()[0])
            if found <= capacity:
                break
            capacity = found  # run again with room for every occurrence
        if find_all:
            rows = out[: 3 * found].reshape(-1, 3).get().astype(np.int64)
            sample, signature, offset = rows[:, 0], rows[:, 1], rows[:, 2]
        else:
            hits = cupy.flatnonzero(best != NO_MATCH)
            sample = (hits // n_signatures).get().astype(np.int64)
            signature = (hits % n_signatures).get().astype(np.int64)
            offset = best[hits].get().astype(np.int64)
    clock["done"] = time.perf_counter()
    if timings is not None:
        elapsed = [cupy.cuda.get_elapsed_time(events[j], events[j + 1]) / 1e3 for j in range(3)]
        timings.update(start=clock["start"], done=clock["done"], upload_s=clock["upload"] - clock["start"],
                       kernels_wall_s=clock["kernels"] - clock["upload"], kernel_index_s=elapsed[0],
                       kernel_ladder_s=elapsed[1], kernel_fallback_s=elapsed[2], kernels_s=sum(elapsed))  # fmt: skip
    return sample, signature, offset
