"""Signature scanning on an NVIDIA GPU (CuPy): the CPU's exact index + fallback method on packed data.

Only packed data crosses PCIe: 3 bits a base (2 for the base, 1 for N) of samples and signatures, the index
(a bitmap of present k-mers and its buckets) and the signatures' clean runs. Scores are summed on the host from
the qualities, which never travel.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from ..cuda.runtime import locked_empty, module, require_cupy
from .common import LADDER_RECIPE, lookup_tables

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scan.cu")
NO_MATCH = 0x7FFFFFFF
_MAX_GRID_Y = 65535  # samples per launch (the grid's y extent)


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
    runless: np.ndarray | None = None  # signature rows without a clean run (the fallback covers them everywhere)


def upload_index(parts: dict, k: int) -> DeviceIndex:
    """Sort and rank :func:`~seqcompare.scan.packed.index_host_parts`' keys on GPU 0 and upload the rest (CuPy only, no CPU kernels)."""
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
    runless = np.flatnonzero(np.diff(parts["run_offsets"]) == 0).astype(np.int32)
    return DeviceIndex(k, parts["sig_length"].astype(np.int64), int(levels.max()) if levels.size else 0, *tables,
                       uploaded, runless)  # fmt: skip


def device_index(codes: np.ndarray, offsets: np.ndarray, k: int) -> DeviceIndex:
    """The :class:`DeviceIndex` of signatures ``codes``/``offsets`` (as :class:`SequenceSet` holds them)."""
    from .packed import index_host_parts

    return upload_index(index_host_parts(codes, offsets, k), k)


def scan_on_gpu(samples, index, report_all: bool, threshold: float, *, threads: int = 1,
                timings: dict | None = None):  # fmt: skip
    """Occurrences of ``index``'s signatures (a :class:`DeviceIndex`, or a CPU
    :class:`~seqcompare.scan.index.SignatureIndex` to upload first) on GPU 0: ``(sample, signature, offset,
    quality sum)`` rows, as the CPU path returns them
    (the first occurrence per pair, or every occurrence). With a score threshold every occurrence is found on
    the device and the host keeps those that reach it. ``timings`` receives stage times (host clocks) and
    kernel times (CUDA events)."""
    from .packed import host_rows, pack_records

    start = time.perf_counter()
    if not isinstance(index, DeviceIndex):
        index = device_index(index.codes, index.offsets, index.k)
    packed_at = time.perf_counter()
    bases, nmask, word0 = pack_records(samples.codes, samples.offsets, threads, allocate=locked_empty)
    device: dict = {}
    sample, signature, offset = device_occurrences(bases, nmask, word0, samples.lengths, index,
                                                   report_all or threshold >= 0, timings=device)  # fmt: skip
    rows = host_rows(samples, index.lengths, sample, signature, offset, report_all, threshold)
    if timings is not None:
        uploaded, done = device.pop("start"), device.pop("done")
        timings.update(index_build_s=packed_at - start, pack_s=uploaded - packed_at,
                       results_s=time.perf_counter() - done, **device)  # fmt: skip
    return rows


def _fallback_pairs(kernels, stream, up: dict, n_samples: int, n_signatures: int, runless) -> list:
    """``[(signature rows, samples), ...]`` (int32 device arrays) whose pairs the fallback kernel must visit:
    every signature in the samples that hold an N, and the signatures without a clean run (``runless``, host
    rows) in the others. In an N-free sample a signature's clean run covers every offset, so no other pair
    leaves the fallback anything."""
    cupy = require_cupy()
    if not n_samples or not n_signatures:
        return []
    has_n = cupy.empty(n_samples, dtype=cupy.int32)
    kernels.get_function("samples_with_n")(((n_samples + 255) // 256,), (256,),
                                           (up["sample_nmask"], up["sample_word0"], up["sample_length"],
                                            np.int32(n_samples), has_n), stream=stream)  # fmt: skip
    pairs = [(cupy.arange(n_signatures, dtype=cupy.int32), cupy.flatnonzero(has_n).astype(cupy.int32))]
    if runless is not None and runless.size:
        pairs.append((cupy.asarray(runless), cupy.flatnonzero(has_n == 0).astype(cupy.int32)))
    return [(signatures, samples) for signatures, samples in pairs if samples.size]


def device_occurrences(sample_bases, sample_nmask, sample_word0, sample_lengths, index: DeviceIndex,
                       find_all: bool, *, timings: dict | None = None):  # fmt: skip
    """Upload packed samples (:func:`~seqcompare.scan.packed.pack_records`' output) and run the scan kernels on GPU 0 against a
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
        fallback_pairs = _fallback_pairs(kernels, stream, up, n_samples, n_signatures, index.runless)
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
            for sig_list, sample_list in fallback_pairs:
                for first_sample in range(0, sample_list.size, _MAX_GRID_Y):
                    kernels.get_function("scan_fallback")(
                        (sig_list.size, min(_MAX_GRID_Y, sample_list.size - first_sample)), (128,),
                        (up["sample_bases"], up["sample_nmask"], up["sample_word0"], up["sample_length"],
                         up["sig_bases"], up["sig_nmask"], up["sig_word0"], up["sig_length"], np.int32(n_signatures),
                         levels, np.int64(level_stride), up["row0"], up["row_words"], up["run_offsets"],
                         up["run_starts"], up["run_levels"], *common_out, sig_list, sample_list,
                         np.int32(first_sample)),
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
