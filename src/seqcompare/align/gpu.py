"""Batched NW (linear or affine gaps, match/mismatch or a 5 x 5 table) and DTW on an NVIDIA GPU (kernels in dp.cu).

One warp per pair; each lane keeps a strip of R query rows in registers, R chosen per pair from the query
length (4 to 32: strips of 128 to 1,024 rows; longer queries run in chunks of 1,024 rows). Where a call has
long queries but too few pairs to give every warp of the GPU one, each of those pairs is spread over many
warps instead (``dp_long``: one warp per chunk of 32 R rows, the chunks of a pair running together as a
wavefront, each reading the row above from the warp that is computing it).

The host path is built so that a call costs about what its kernels cost:

- the values go to the GPU in the dtype the caller holds (uint8 base codes; int16, int32 or int64, float32 or
  float64 signals), with no widening on the host: the kernels read that type. The one exception narrows:
  DTW's int64 sides, and int32 sides that would be staged, go up as int16 where every value fits it and Numba
  runs already in the process (:class:`_Narrowing`: the staging threads narrow and measure the range in one
  pass), which halves or quarters the bytes that bound such a call; the distances are the same;
- a side whose series are paired in order (``a[i]`` with ``b[i]``, or a whole database against one query) goes
  up in pieces of about 16 MB, on alternating streams, so that the copy of one piece runs under the kernels of
  the last. A side of 32 MB to 1 GB is page-locked where the caller holds it (``cudaHostRegister``, a piece's
  pages at a time) and goes up from there by DMA; another, or one CUDA will not register, is copied by
  several host threads into page-locked buffers first. Copies from ordinary (pageable) memory ran at 5-8 GB/s
  on the H200's host, a seventh of the link, and bounded every call (40,000 int32 pairs of 1,000: 0.058 s,
  against 0.012 s of kernels); staging copies reached 23 GB/s, registering 50 GB/s;
  a side the caller holds in page-locked memory already (:func:`seqcompare.cuda.locked_empty`) goes up
  straight from it;
  a side that every piece reads (all-vs-all, the query of a search) goes up once, and so does a side under
  4 MB (``_STREAM_FROM``), in one plain copy;
- the checks the result depends on (base codes at most 4; integer signals within the 32-bit DP's range;
  floats finite) are folded on the device over the pieces as they arrive, one kernel a piece (on the host,
  for a side under 4 MB), and read once at the end: a failed check raises, and no score is returned;
- pairs are grouped by strip and paired for the 16-bit kernel with array operations, with no per-pair Python.
"""

from __future__ import annotations

import mmap
import os
import threading
import time

import numpy as np

from ..cuda.runtime import (copy_in_parallel, module, narrow_in_parallel, narrowing_ready, pinned_empty, read_only_flags,
                            require_cupy)  # fmt: skip
from ..errors import InputError
from .plans import PlanColumn, series_lengths, uniform_step

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dp.cu")
STRIPS = (4, 8, 16, 32)
UNREACHABLE = 0x3FFFFFFF
_WARPS_PER_BLOCK = 4
_STREAMS = 4
_MIN_PIECE_PAIRS = 8192  # fewer pairs than a wave of warps leave the GPU idle (4,096 lost 20% on int16 DTW)
_PIECE_BYTES = 16 << 20  # small pieces: the first copy, which nothing hides, is short; staging is 4 x 16 MB
# Sides smaller than this go up in one plain copy and are checked on the host: for them the staging buffers,
# copy threads, events and device reductions cost more than they hide (1.3 ms of a 5 ms call of 20 pairs of
# 10,000 int32 on an H200, between the small uploads and the first piece; session 21).
_STREAM_FROM = 4 << 20
# Pairs whose query has more rows than this go to the long-pair kernel when the call has fewer of them than the
# GPU has resident warps (one warp each would leave most of it idle: 20 pairs of 10,000 ran at 78 GCUPS).
LONG_QUERY_ROWS = 32 * STRIPS[-1]
# The long kernel's strip size, and its columns a step; None picks them from the work (see :func:`long_strip`
# and :func:`long_columns`).
LONG_STRIP = None
LONG_COLUMNS = None
_RESIDENT_WARPS_PER_SM = 4 * _WARPS_PER_BLOCK  # dp.cu's DP_MIN_BLOCKS blocks a multiprocessor
_LONG_BORDER_BYTES = 1 << 30  # the rows passed between chunks, per launch (more pairs: more launches)
# Warps a block of the long-pair kernel (at most dp.cu's DP_LONG_WARPS). Blocks of 1 or 2 warps, which spread 20
# pairs of 10,000 (400-800 warps) more evenly over the multiprocessors, were no faster than 4 (session 28).
_LONG_WARPS_PER_BLOCK = 4

# The stored type of each signal dtype the kernels read, and the type of the DP's values for it.
_STORED = {np.dtype(np.uint8): "unsigned char", np.dtype(np.int16): "short", np.dtype(np.int32): "int",
           np.dtype(np.int64): "long long", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}  # fmt: skip
_VALUE = {"short": "int", "int": "int", "long long": "int", "float": "float", "double": "double"}


def _kernel_names(kind: int, value: str, stored: str) -> tuple:
    """The kernels one call needs (one per strip size): compiled together, and only when first needed."""
    if kind == 0:
        return tuple(f"dp_warp<{r},0,int,unsigned char>" for r in STRIPS) + tuple(f"nw16_warp<{r}>" for r in STRIPS)
    if kind == 4:
        return tuple(f"myers_warp<{r}>" for r in STRIPS)
    return tuple(f"dp_warp<{r},{kind},{value},{stored}>" for r in STRIPS)


def _long_kernel_names(kind: int, value: str, stored: str) -> tuple:
    """The long-pair kernels a call may need: every strip size, one column a step, and two where they apply."""
    names = [f"dp_long<{r},{kind},{value},{stored},1>" for r in STRIPS]
    if kind == 1 and value in ("int", "float"):
        names += [f"dp_long<{r},{kind},{value},{stored},2>" for r in STRIPS if r <= 16]
    return tuple(names)


def long_columns(kind: int, value: str, rows: int, units: int, resident_warps: int) -> int:
    """Columns a step of the long-pair kernel (dp.cu's K): 1 or 2.

    Two columns a step give each lane two chains of cells to interleave, at the price of a longer lag between a
    chunk and the one below it. They apply to DTW on 32-bit values (float32, and integers, which the kernels
    read as 32-bit) at strips of at most 16 rows. On an H200 (kernel only, strips of 16, session 28), float32
    gained at every shape measured (20 pairs of 10,000: 1,937 GCUPS against 1,455; 8 of 30,000, 100 of 5,000 and
    200 of 2,000: 13-35%); integers gained where the call has fewer units than 30% of the resident warps (20 of
    10,000, 400 units: 1,990 against 1,668; 8 of 30,000, 472 units: 2,431 against 2,027) and lost above it (200
    of 2,000, 800 units: 2,390 against 2,831; 100 of 5,000: 2,934 against 3,824), where the integer pipes, not
    the chain, bound the step. NW's cell has more instructions off the chain, and one column a step was faster
    for it (1,783 against 1,669 GCUPS at 20 of 10,000). :data:`LONG_COLUMNS` overrides the choice where two
    columns apply.
    """
    if kind != 1 or value not in ("int", "float") or rows > 16:
        return 1
    if LONG_COLUMNS is not None:
        return int(LONG_COLUMNS)
    if value == "float":
        return 2
    return 2 if units * 10 < resident_warps * 3 else 1


def long_strip(q_len: np.ndarray, resident_warps: int, kind: int = 1, value: str = "int") -> int:
    """The strip size R for the long-pair kernel.

    Strips of 32 rows where their chunks already give at least half as many units of work as the GPU has
    resident warps, except for DTW on 32-bit values; else the largest R of at most 16 whose chunks of 32 R rows
    give at least an eighth as many units as resident warps; else the smallest. Fewer, larger chunks leave warps
    idle; more, smaller ones each add a lag down the pair's wavefront (62 columns, 93 with two columns a step)
    and do less per step. Strips of 32 rows have no interior loop (it would spill), so they pay only where the
    pairs are long enough to fill the GPU with them. On an H200, kernel only (session 28): 20 pairs of 10,000,
    R = 16 against 8: NW 1,762 GCUPS against 1,258, int32 DTW 1,957 against 1,704 (two columns a step at 16),
    float32 DTW 1,914 against 1,629; 100 pairs of 5,000, R = 16 against 32: NW 1,774 against 1,540, int32 DTW
    3,926 against 1,882; 20 pairs of 100,000 (1,960 units at R = 32): NW 1,716-1,782 at 32 against 1,562-1,681,
    int32 DTW 3,486-3,537 against 3,415-3,450, float32 DTW 3,635-3,680 against 4,233-4,271.
    :data:`LONG_STRIP` overrides it.

    Parameters
    ----------
    q_len : ndarray
        Query lengths (rows) of the pairs the kernel will take.
    resident_warps : int
        Warps the GPU holds at once (16 a multiprocessor for these kernels).
    kind : int
        The DP (dp.cu's kinds: 1 is DTW; 0, 2 and 3 are NW).
    value : str
        The type of the DP's values (``"int"``, ``"float"`` or ``"double"``).

    Returns
    -------
    int
        One of :data:`STRIPS`.
    """
    if LONG_STRIP is not None:
        return int(LONG_STRIP)

    def units(rows: int) -> int:
        return int((-(-q_len // (32 * rows))).sum())

    dtw_on_32_bits = kind == 1 and value in ("int", "float")
    if not dtw_on_32_bits and units(32) * 2 >= resident_warps:
        return 32
    for rows in (16, 8):
        if units(rows) * 8 >= resident_warps:
            return rows
    return STRIPS[0]


def strips_for(q_len: np.ndarray) -> np.ndarray:
    """The strip size R of each pair: the smallest whose 32 R rows hold the query, else the largest."""
    sizes = np.asarray(STRIPS)
    if q_len.size and q_len.strides == (0,):  # one length for every pair (a broadcast): one lookup
        return np.broadcast_to(strips_for(np.array(q_len[:1])), q_len.shape)
    index = np.zeros(q_len.shape, np.int8)  # how many strip sizes below the last are too short (the compares
    for rows in STRIPS[:-1]:  # took a sixth of searchsorted's time on 40,000 lengths)
        index += q_len > 32 * rows
    return sizes[index]


def _units(pair_index: np.ndarray, t_len: np.ndarray, q_len: np.ndarray) -> np.ndarray:
    """The pairs ``pair_index`` grouped two by two with the same shape (an odd one out is paired with itself),
    for the kernel that runs two pairs per lane: ``(units, 2)`` pair indices."""
    order = pair_index[np.lexsort((q_len[pair_index], t_len[pair_index]))]
    key = t_len[order] * (int(q_len.max(initial=0)) + 1) + q_len[order]
    starts = np.r_[True, key[1:] != key[:-1]] if order.size else np.zeros(0, bool)
    run = np.cumsum(starts) - 1
    run_start = np.flatnonzero(starts)
    run_end = np.r_[run_start[1:], order.size]
    position = np.arange(order.size) - run_start[run]
    first = np.flatnonzero(position % 2 == 0)
    partner = np.where(first + 1 < run_end[run[first]], first + 1, first)
    return np.stack([order[first], order[partner]], axis=1).astype(np.int64)


_MULTIPROCESSORS = {}


def _multiprocessors(cupy) -> int:
    """The current GPU's multiprocessor count (``Device.attributes`` reads every attribute: kept per device)."""
    device = cupy.cuda.Device().id
    if device not in _MULTIPROCESSORS:
        attribute = getattr(cupy.cuda.runtime, "cudaDevAttrMultiProcessorCount", 16)  # 16 in CUDA's enum
        _MULTIPROCESSORS[device] = int(cupy.cuda.runtime.deviceGetAttribute(attribute, device))
    return _MULTIPROCESSORS[device]


def _route(cupy, values: np.ndarray, slots: int, largest: int, locked: bool | None = None):
    """How the pieces of one side go up: straight from memory the caller has page-locked (:class:`_Locked`),
    from where they lie once locked here (:class:`_InPlace`), or through staging buffers. ``locked``: whether
    the side lies in page-locked memory already, where the caller has asked (:func:`_locked_already`)."""
    if locked is None:
        locked = values.flags.c_contiguous and _locked_already(cupy, values)
    if locked:
        return _Locked(cupy, values, slots, largest)
    if _locks_in_place(values):
        return _InPlace(cupy, values, slots, largest)
    return _Staging(cupy, values.dtype, slots, largest)


def _locks_in_place(values: np.ndarray) -> bool:
    """Whether a side the caller has not page-locked goes up locked where it lies (:class:`_InPlace`)."""
    return PIN_IN_PLACE and values.flags.c_contiguous and _PIN_IN_PLACE_FROM <= values.nbytes <= _PIN_IN_PLACE_UP_TO


_HOST_MEMORY = 1  # cudaMemoryTypeHost: page-locked host memory CUDA knows (allocated by it, or registered)


def _locked_already(cupy, values: np.ndarray) -> bool:
    """Whether the first and the last byte of ``values`` lie in page-locked memory CUDA knows: an array from
    :func:`seqcompare.cuda.locked_empty` or :func:`seqcompare.cuda.pinned_empty`, or one the caller registered."""
    if values.nbytes == 0:
        return False
    ends = (values.ctypes.data, values.ctypes.data + values.nbytes - 1)
    try:
        return all(cupy.cuda.runtime.pointerGetAttributes(address).type == _HOST_MEMORY for address in ends)
    except cupy.cuda.runtime.CUDARuntimeError:
        return False


# The last piece is this share of the others. Once the host has sent the last piece on its way (registering its
# pages takes as long as a piece's kernels, or longer), what is left of the call is that piece's copy and kernels:
# a small last piece leaves little. On an H200 (bench/dp_pieces_probe.py, session 45, 40,000 int32 pairs of
# 1,000): pieces of 4, 4, 4 and 1 parts took a median of 17.9 ms against 19.7 ms for four equal ones (float32
# 17.9 against 18.3); smaller first pieces (session 41) and eight equal ones were slower.
_LAST_PIECE_SHARE = 0.25


def _pieces(n_pairs: int, streamed_bytes: int) -> np.ndarray:
    """Piece boundaries over the pairs: pieces of about :data:`_PIECE_BYTES` of streamed values, each of at
    least :data:`_MIN_PIECE_PAIRS` pairs but the last, which is :data:`_LAST_PIECE_SHARE` of the others (and at
    least two pieces where there are pairs enough, so that a copy can overlap a kernel)."""
    count = max(-(-streamed_bytes // _PIECE_BYTES), 2 if streamed_bytes else 1)
    count = int(max(1, min(count, n_pairs // _MIN_PIECE_PAIRS)))
    if count == 1:
        return np.array([0, n_pairs], dtype=np.int64)
    parts = np.r_[0.0, np.cumsum([1.0] * (count - 1) + [_LAST_PIECE_SHARE])]
    return np.round(parts / parts[-1] * n_pairs).astype(np.int64)


_TABLES: dict = {}  # (device, bytes of a cost table): the table on that device, which the kernels only read


def _table_on_device(cupy, table: np.ndarray):
    """The 5 x 5 cost table on the current device, uploaded once per table (a copy from pageable memory costs a
    call 0.05-0.1 ms)."""
    key = (cupy.cuda.Device().id, table.tobytes())
    if key not in _TABLES:
        if len(_TABLES) > 64:
            _TABLES.clear()
        _TABLES[key] = cupy.asarray(table)
        cupy.cuda.get_current_stream().synchronize()  # arrived before any later call's streams read it
    return _TABLES[key]


class _Staging:
    """Page-locked buffers, one per stream, through which the pieces of one side go up: a buffer is refilled
    only once its last copy to the device has finished (an event per buffer)."""

    checked_on_host = False  # the values' checks run on the device, over each piece uploaded

    def __init__(self, cupy, dtype, slots: int, largest: int):
        self.cupy = cupy
        self.buffers = [pinned_empty((max(1, largest),), dtype) for _ in range(slots)]
        self.copied = [None] * slots

    def release(self) -> None:
        """Nothing to give back: the buffers return to CuPy's pool of page-locked memory."""

    def upload(self, slot: int, stream, source: np.ndarray, target) -> None:
        if self.copied[slot] is not None:
            self.copied[slot].synchronize()
        staged = self.buffers[slot][: source.size]
        self._fill(staged, source)
        target.set(staged, stream=stream)
        event = self.cupy.cuda.Event()
        event.record(stream)
        self.copied[slot] = event

    def _fill(self, staged: np.ndarray, source: np.ndarray) -> None:
        copy_in_parallel(staged, source)


class _DoesNotFit(Exception):
    """A piece of integer signals held a value outside int16: the call starts again in the caller's dtype."""


class _Narrowing(_Staging):
    """Integer signals wider than int16 whose values fit int16 go up as int16, narrowed by the threads that
    fill the staging buffers (one compiled pass a thread, which also measures the range, so the checks cost no
    pass of their own); the int16 kernels then read them, and every distance is the same (the DP's values are
    32-bit for every integer dtype). A piece with a value outside int16 raises :class:`_DoesNotFit`.

    It pays where the host's memory bounds the call: int64 (a quarter of the bytes over the link, and 10 bytes
    of host traffic a value against the 8 its DMA reads in place) and any side that would be staged (6 bytes a
    value against 8 for int32). An int32 side locked in place is quicker as it is: on an H200's host, 40,000
    pairs of 1,000 int32 ran 2,245-2,292 GCUPS locked in place and 1,990-2,105 narrowed; int64 1,355-1,407 and
    1,590 narrowed (bench/RESULTS.md, session 25)."""

    checked_on_host = True

    def __init__(self, cupy, slots: int, largest: int, checks: "_Checks"):
        super().__init__(cupy, np.int16, slots, largest)
        self.checks = checks

    def _fill(self, staged: np.ndarray, source: np.ndarray) -> None:
        found = narrow_in_parallel(staged, source)
        if found is None:
            raise _DoesNotFit
        self.checks.found_on_host.append([float(found[0]), float(found[1])])


class _Locked:
    """The pieces of a side the caller holds in page-locked memory go up straight from it, by DMA: no staging
    copy, nothing to register. This is how a program that keeps its data page-locked (as cuDTW++ keeps its
    database) gets the link's whole rate. A copy CUDA refuses (the array spans two allocations, say) sends that
    piece and the rest through staging buffers."""

    checked_on_host = False

    def __init__(self, cupy, values: np.ndarray, slots: int, largest: int):
        self.cupy = cupy
        self.values, self.slots, self.largest = values, slots, largest
        self.fallback = None

    def upload(self, slot: int, stream, source: np.ndarray, target) -> None:
        if self.fallback is None:
            try:
                target.set(source, stream=stream)
                return
            except self.cupy.cuda.runtime.CUDARuntimeError:
                self.fallback = _Staging(self.cupy, self.values.dtype, self.slots, self.largest)
        self.fallback.upload(slot, stream, source, target)

    def release(self) -> None:
        """Nothing to give back: the memory is the caller's, and stays locked."""


# Integer signals wider than int16 whose values fit it go up as int16 (:class:`_Narrowing`);
# bench/dtw_narrowing.py compares both ways by setting it.
NARROW_IN_TRANSIT = True
_NARROW_ON_HOST_UP_TO = 4 << 20  # a side in one copy (a search's query), narrowed on the host: as large as this
_PAGE = mmap.PAGESIZE
PIN_IN_PLACE = True  # bench/dp_transfer_probe.py compares the two routes by setting it
# A piece's pages are registered this much at a time, and each chunk copied as soon as it is locked, so that the
# copy of a piece runs under the registering of its rest (registering 80 MB took 2-3 ms on the H200's host,
# copying it 1.6 ms): the first kernel starts sooner, and less is left once the last chunk is locked.
_REGISTER_BYTES = 16 << 20
_PIN_IN_PLACE_FROM = 32 << 20  # smaller sides: the staging copy is short, and registering has a fixed cost
# Larger sides are staged: unregistering costs about 23 ms a GB after the last kernel, where the staging copies
# of a long call hide under its kernels. Measured on the H200's host (bench/dp_transfer_probe.py, dtw_search.py):
# locking in place was 5-20% faster at 160-320 MB a side, and 26% slower at 4.3 GB (0.460 s against 0.366 s);
# the crossover between them was not measured.
_PIN_IN_PLACE_UP_TO = 1 << 30


class _InPlace:
    """The pieces of one side go up straight from the caller's array, page-locked where it lies
    (``cudaHostRegister``) a piece's pages at a time, so that no staging copy crosses the host's memory. On the
    H200's host, staging 160 MB took 10-12 ms of the call, at 10-20 GB/s; registering it takes 4.6 ms, and the
    DMA then reads the caller's pages at the link's 55 GB/s (bench/dp_transfer_probe.py).

    Only whole pages inside the array are registered: a page it shares with its neighbours (the other side,
    say) is never locked, so two arrays never contend for one page (CUDA refuses a page registered twice).
    Ranges are registered each from where the last ended, so none overlaps another, :data:`_REGISTER_BYTES` at
    a time; a piece goes up as one copy per range it lies in, each sent as soon as its range is locked (CUDA
    refuses a copy from page-locked memory that runs past the end of its registration), and the array's partial
    first and last pages as plain copies. Where CUDA refuses a range
    (memory the caller has registered already, a read-only or file mapping), that piece and the rest go
    through page-locked staging buffers instead. :meth:`release` unregisters each range once its copies are
    done; unregistering waits for an idle GPU (a 50 ms kernel made it 53 ms) and then costs about 1.5 ms per
    160 MB, the ranges being registered read-only where the device allows it
    (:func:`~seqcompare.cuda.runtime.read_only_flags`; 3 ms otherwise)."""

    checked_on_host = False

    def __init__(self, cupy, values: np.ndarray, slots: int, largest: int):
        self.cupy = cupy
        self.values = values
        self.first = -(-values.ctypes.data // _PAGE) * _PAGE  # the whole pages inside the array
        self.last = (values.ctypes.data + values.nbytes) // _PAGE * _PAGE
        self.registered_to = self.first
        self.ranges = []  # [start address, end address, event of the last copy reading it]
        self.fallback = None
        self.slots, self.largest = slots, largest

    def upload(self, slot: int, stream, source: np.ndarray, target) -> None:
        if self.fallback is not None:
            self.fallback.upload(slot, stream, source, target)
            return
        address, end = source.ctypes.data, source.ctypes.data + source.nbytes
        source_bytes, target_bytes = source.reshape(-1).view(np.uint8), target.reshape(-1).view(self.cupy.uint8)
        sent = address  # the piece's bytes before this are on their way

        def send(limit: int) -> None:  # one copy of the piece's bytes from ``sent`` to ``limit``
            nonlocal sent
            limit = min(limit, end)
            if limit > sent:
                target_bytes[sent - address : limit - address].set(source_bytes[sent - address : limit - address],
                                                                   stream=stream)  # fmt: skip
                sent = limit

        holding = [entry for entry in self.ranges[-2:] if entry[1] > address]  # the ranges before that hold some
        try:
            send(self.first)  # the array's partial first page, if the piece starts on it: a plain copy
            for entry in holding:
                send(entry[1])
            stop = min(self.last, -(-end // _PAGE) * _PAGE)
            while self.registered_to < stop:  # a chunk at a time, each copied as soon as it is locked
                chunk = [self.registered_to, min(stop, self.registered_to + _REGISTER_BYTES), None]
                try:
                    self.cupy.cuda.runtime.hostRegister(chunk[0], chunk[1] - chunk[0], read_only_flags(self.cupy))
                except self.cupy.cuda.runtime.CUDARuntimeError:
                    self.fallback = _Staging(self.cupy, self.values.dtype, self.slots, self.largest)
                    break
                self.ranges.append(chunk)
                holding.append(chunk)
                self.registered_to = chunk[1]
                send(chunk[1])
            if self.fallback is not None:  # this piece again through staging, and every piece after it
                self.fallback.upload(slot, stream, source, target)
            else:
                send(end)  # the array's partial last page: a plain copy
        finally:
            event = self.cupy.cuda.Event()
            event.record(stream)
            for entry in holding:
                entry[2] = event

    def release(self) -> None:
        """Unregister every range once its copies are done: here, or, with :data:`DEFER_UNLOCKING`, on the
        background thread of :data:`_UNLOCKER`, which holds the caller's array until then."""
        ranges, self.ranges = self.ranges, []
        if DEFER_UNLOCKING and ranges:
            _UNLOCKER.submit(self.cupy, self.values, ranges)
            return
        _unregister(self.cupy, ranges)


def _release(staging: list) -> None:
    """Release every side's upload route (see :meth:`_InPlace.release`)."""
    for stage in staging:
        if stage is not None:
            stage.release()


def _unregister(cupy, ranges: list) -> None:
    """Unregister each ``[start, end, event]`` range once its event (its last copy) is done."""
    for start, _, event in ranges:
        if event is not None:
            event.synchronize()
        cupy.cuda.runtime.hostUnregister(start)


# Unregistering a side locked in place waits for an idle GPU, and then takes 2-3 ms for 320 MB (bench/RESULTS.md,
# sessions 26 and 41): it was the last step before a call could return. With this set, a call hands its ranges to
# one background thread (:class:`_DeferredUnlocking`) and returns as soon as its scores are back; a later call
# that would touch those pages waits for them first. bench/dp_unlock_probe.py compares both ways by setting it.
DEFER_UNLOCKING = True


class _DeferredUnlocking:
    """One daemon thread that unregisters the ranges calls hand it, in order. Each job holds the caller's array,
    so its memory cannot be freed (and its addresses reused) while its pages are still registered.
    :meth:`wait_for` blocks until no pending job covers any byte of an array: CUDA refuses to register a page
    twice, and would report a still-registered page as the caller's own page-locked memory."""

    def __init__(self):
        self.condition = threading.Condition()
        self.jobs = []  # [cupy, array, ranges, device], oldest first; a job leaves the list once done
        self.thread = None
        self.failures = []  # the exceptions unregistering raised, kept for a test to read

    def submit(self, cupy, values: np.ndarray, ranges: list) -> None:
        with self.condition:
            self.jobs.append([cupy, values, ranges, cupy.cuda.Device().id])
            if self.thread is None or not self.thread.is_alive():
                if self.thread is None:  # the process waits for its pages before CUDA is torn down at exit
                    import atexit

                    atexit.register(self.wait_for)
                self.thread = threading.Thread(target=self._run, name="seqcompare-unlock", daemon=True)
                self.thread.start()
            self.condition.notify_all()

    def forget(self) -> None:
        """In a forked child: the parent's jobs and thread are not this process's (nor is its CUDA context)."""
        self.condition = threading.Condition()
        self.jobs = []
        self.thread = None

    def _run(self) -> None:
        while True:
            with self.condition:
                while not self.jobs:
                    self.condition.wait()
                job = self.jobs[0]
                cupy, ranges, device = job[0], job[2], job[3]  # not the array: the list below holds it until done
                del job
            try:
                with cupy.cuda.Device(device):
                    _unregister(cupy, ranges)
            except Exception as error:  # pages left locked cost memory, never a result: keep going
                self.failures.append(error)
            with self.condition:
                self.jobs.pop(0)
                self.condition.notify_all()

    def wait_for(self, values: np.ndarray | None = None) -> None:
        """Until no pending job's array shares a byte with ``values`` (every job, with None)."""
        with self.condition:
            while any(values is None or _overlap(job[1], values) for job in self.jobs):
                self.condition.wait()


def _overlap(first: np.ndarray, second: np.ndarray) -> bool:
    a, b = first.ctypes.data, second.ctypes.data
    return a < b + max(second.nbytes, 1) and b < a + max(first.nbytes, 1)


_UNLOCKER = _DeferredUnlocking()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_UNLOCKER.forget)


def wait_for_unlocking() -> None:
    """Wait until every page a GPU call locked in place has been unlocked (calls return before that: see
    :data:`DEFER_UNLOCKING`). Needed only before registering such an array with CUDA yourself."""
    _UNLOCKER.wait_for()


def _narrowed_in_transit(sides, streamed, locked) -> bool:
    """Whether a call's integer sides go up as int16 (:class:`_Narrowing`): some side goes up in pieces (a small
    call gains nothing); each of those would otherwise be staged, or is int64 (int32 locked in place moves
    fewer bytes through the host than narrowing it does, and none is read from memory the caller holds
    page-locked: its DMA is quicker than any copy); every side that goes up in one copy is small and fits
    int16 (checked here); and the compiled pass that narrows can run with no start-up in this call (Numba has
    started in the process: :func:`~seqcompare.cuda.runtime.narrowing_ready`)."""
    if not any(streamed):
        return False
    limits = np.iinfo(np.int16)
    for (values, _, _), in_pieces, locked_already in zip(sides, streamed, locked):
        if in_pieces:
            if locked_already or (values.itemsize < 8 and _locks_in_place(values)):
                return False
        elif values.nbytes > _NARROW_ON_HOST_UP_TO or (values.size and not limits.min <= values.min() <= values.max() <= limits.max):
            return False
    return narrowing_ready()


_CHECKS_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checks.cu")
_FOLDS = {np.dtype(np.uint8): "fold_range<unsigned char>", np.dtype(np.int16): "fold_range<short>",
          np.dtype(np.int32): "fold_range<int>", np.dtype(np.int64): "fold_range<long long>",
          np.dtype(np.float32): "fold_finite<float>", np.dtype(np.float64): "fold_finite<double>"}  # fmt: skip
_FOLD_THREADS = 256
_FOLD_BLOCKS = 528  # four blocks of 256 a multiprocessor of an H200: each thread folds a strided run of values


class _Checks:
    """The checks a call's result depends on, folded on the device over every piece of values as it arrives
    (one kernel a piece, ``checks.cu``: the minimum and maximum of integers, or whether every float is finite,
    into two device words by atomics) and read back once (:meth:`verify`); the same on the host for small
    sides. :meth:`prepare` sets the words on a stream that every later piece's stream waits for."""

    def __init__(self, cupy, floating: bool):
        self.cupy = cupy
        self.floating = floating
        self.words = None  # on the device: [minimum, maximum], or [any not finite, 0]
        self.folded = False
        self.found_on_host = []  # per small side, and per piece narrowed by the staging threads

    def prepare(self) -> None:
        """Set the device words, on the current stream (before anything is folded into them)."""
        start = [0, 0] if self.floating else [np.iinfo(np.int64).max, np.iinfo(np.int64).min]
        self.words = self.cupy.asarray(np.array(start, dtype=np.int64))

    def add(self, values) -> None:
        """Fold ``values`` (on the device) into the words, on the current stream."""
        if values.size == 0:
            return
        kernel = module(_CHECKS_SOURCE, tuple(_FOLDS.values())).get_function(_FOLDS[values.dtype])
        blocks = max(1, min(_FOLD_BLOCKS, -(-values.size // _FOLD_THREADS)))
        kernel((blocks,), (_FOLD_THREADS,), (values, np.int64(values.size), self.words))
        self.folded = True

    def add_host(self, values: np.ndarray) -> None:
        """The same checks over values still in host memory (a small side: NumPy is quicker there)."""
        if values.size == 0:
            return
        if self.floating:
            self.found_on_host.append([float(np.isfinite(values).all())])
        else:
            self.found_on_host.append([float(values.min()), float(values.max())])

    def verify(self, kind: int, longest: int) -> None:
        found = list(self.found_on_host)
        if self.folded:
            first, second = self.words.get().tolist()
            found.append([float(not first)] if self.floating else [float(first), float(second)])
        if not found:
            return
        found = np.array(found)
        if self.floating:
            if not found.all():  # one "all finite" flag per piece
                raise InputError("signals contain NaN or infinity")
            return
        low, high = float(found[:, 0].min()), float(found[:, 1].max())
        if kind != 1:
            if low < 0 or high > 4:
                raise InputError("base codes must be 0..4 (A, C, G, T, N); give letters as str or bytes")
            return
        low, high = min(low, 0.0), max(high, 0.0)
        if low < -(1 << 31) or high >= (1 << 31) or longest * (high - low) >= (1 << 29):
            raise InputError("on the GPU, DTW needs integer signals whose distances stay below 2**29 (these could "
                             "pass it); use device='cpu' (exact in 64 bits) or give floats")  # fmt: skip


def dp_on_gpu(kind: int, t_values, t_off, q_values, q_off, plan, *, match=0, mismatch=0, ins=0, dele=0, mode=0,
              ins_open=0, del_open=0, substitution=None, check: bool = False, timings: dict | None = None,
              kernels_only: bool = False) -> np.ndarray:  # fmt: skip
    """Scores of ``plan``'s pairs on the current GPU.

    Parameters
    ----------
    kind : int
        0: NW with match/mismatch costs and linear gaps; 2: the same with gap opens (affine); 3: affine with the
        5 x 5 ``substitution`` table (target code, query code); 1: DTW with ``mode`` 0 full, 1 open end,
        2 subsequence; 4: edit distance (Myers' bit-vectors; the caller scales it to its unit cost).
    t_values, t_off, q_values, q_off : ndarray
        Flat values and their series' offsets (``len + 1``). NW takes uint8 base codes; DTW takes int16, int32,
        int64, float32 or float64 signals, read by the kernels in that type (some int32 and int64 sides whose
        values fit int16 as int16: :class:`_Narrowing`, :data:`NARROW_IN_TRANSIT`).
    plan : ndarray
        ``(k, 2)`` (target index, query index).
    check : bool
        Check the values on the device (codes at most 4; integers within the 32-bit DP's range; floats finite)
        and raise :class:`~seqcompare.errors.InputError` where they fail. Without it, the caller has checked.
    timings : dict, optional
        Filled with ``kernel_s`` (first upload to last kernel, by CUDA events), ``total_s``, and ``stages``: the
        host's seconds since the call began at each step (for bench/dp_transfer_probe.py and
        bench/dp_long_timeline.py); for calls of long pairs only with small sides, also ``upload_s`` (the one
        copy up and the border's reset, by CUDA events).
    kernels_only : bool
        For benchmarks: every value goes up before the first kernel, on one stream, so that ``kernel_s`` is the
        kernels' time alone.

    Returns
    -------
    ndarray
        int64 scores for codes and integer signals (:data:`UNREACHABLE` where DTW has no path), float32 or
        float64 distances for float signals (inf where there is no path).
    """
    options = dict(match=match, mismatch=mismatch, ins=ins, dele=dele, mode=mode, ins_open=ins_open,
                   del_open=del_open, substitution=substitution, check=check, timings=timings,
                   kernels_only=kernels_only)  # fmt: skip
    try:
        return _scores_on_gpu(kind, t_values, t_off, q_values, q_off, plan, NARROW_IN_TRANSIT, **options)
    except _DoesNotFit:  # integer signals beyond int16: again, in their own dtype
        if timings is not None:
            timings.pop("stages", None)
        return _scores_on_gpu(kind, t_values, t_off, q_values, q_off, plan, False, **options)


def _scores_on_gpu(kind: int, t_values, t_off, q_values, q_off, plan, narrow_in_transit: bool, *, match, mismatch,
                   ins, dele, mode, ins_open, del_open, substitution, check, timings, kernels_only) -> np.ndarray:  # fmt: skip
    """:func:`dp_on_gpu`'s work; with ``narrow_in_transit``, integer signals that fit int16 go up as int16
    (:class:`_Narrowing`)."""
    cupy = require_cupy()
    start = time.perf_counter()
    stages = None if timings is None else timings.setdefault("stages", [])

    def reached(step: str) -> None:
        if stages is not None:
            stages.append((step, time.perf_counter() - start))

    plan = np.asarray(plan, dtype=np.int64).reshape(-1, 2)
    t_values, q_values = np.asarray(t_values), np.asarray(q_values)
    reached("called")
    stored = "unsigned char" if kind != 1 else _STORED.get(t_values.dtype)
    if stored is None or (kind == 1 and q_values.dtype != t_values.dtype) or (kind != 1 and t_values.dtype != np.uint8):
        raise TypeError(f"dp_on_gpu: values of {t_values.dtype} and {q_values.dtype} are not read by the kernels")
    value = "int" if kind != 1 else _VALUE[stored]
    value_type = {"int": np.int32, "float": np.float32, "double": np.float64}[value]
    floating = value != "int"
    out_type = value_type if floating else np.int64
    if len(plan) == 0:
        return np.empty(0, dtype=out_type)
    t_off, q_off = np.asarray(t_off, dtype=np.int64), np.asarray(q_off, dtype=np.int64)
    t_len, q_len = series_lengths(t_off), series_lengths(q_off)
    # A database against one query, or sides paired in order, are common and large (2^20 pairs): their columns
    # are recognised here, so that nothing of the size of the plan is gathered, searched or uploaded for them.
    columns = [PlanColumn(plan[:, side], len(off) - 1) for side, off in enumerate((t_off, q_off))]
    pair_t_len, pair_q_len = columns[0].take(t_len), columns[1].take(q_len)
    reached("columns")
    strips = strips_for(pair_q_len)
    long_pairs = np.zeros(0, np.int64)
    resident_warps = 0
    if kind != 4:
        resident_warps = _RESIDENT_WARPS_PER_SM * _multiprocessors(cupy)
        candidates = np.flatnonzero((pair_q_len > LONG_QUERY_ROWS) & (pair_t_len > 0))
        if 0 < candidates.size < resident_warps:
            long_pairs = candidates
            strips = strips.copy()
            strips[long_pairs] = 0  # no strip size: the one-warp kernels skip them
    table = np.zeros(25, np.int32) if substitution is None else np.asarray(substitution, np.int32).ravel()
    bound = max(abs(match), abs(mismatch), abs(ins), abs(dele), int(np.abs(table).max()))
    shared = q_values is t_values and q_off is t_off
    if long_pairs.size == len(plan) and not kernels_only:
        rows = long_strip(pair_q_len, resident_warps, kind, value)
        if _few_long_pairs_fit(kind, rows, t_values, q_values, shared, pair_t_len, pair_q_len, value_type):
            return _few_long_pairs(cupy, kind, value, stored, value_type, out_type, t_values, t_off, q_values, q_off,
                                   plan, shared, rows, resident_warps, pair_t_len, pair_q_len, table, check, timings,
                                   start, match, mismatch, ins, dele, mode, ins_open, del_open)  # fmt: skip
    sides = [(t_values, t_off, plan[:, 0])] if shared else [(t_values, t_off, plan[:, 0]), (q_values, q_off, plan[:, 1])]
    streamed = [not shared and not kernels_only and column.kind == "order" and values.nbytes >= _STREAM_FROM
                for column, (values, _, _) in zip(columns, sides)]  # fmt: skip
    reached("sides")
    for values, _, _ in sides:  # pages an earlier call locked in place are unlocked before this call reads them
        _UNLOCKER.wait_for(values)
    reached("unlocked")
    # (each look costs 20-90 us for pageable memory: once a side)
    locked = [in_pieces and values.flags.c_contiguous and _locked_already(cupy, values)
              for (values, _, _), in_pieces in zip(sides, streamed)]  # fmt: skip
    narrowed = narrow_in_transit and stored in ("int", "long long") and _narrowed_in_transit(sides, streamed, locked)
    reached("routes")
    if narrowed:  # the sides in one plain copy are small: narrowed here; the others by the staging threads
        stored = "short"
        sides = [(values if in_pieces else values.astype(np.int16), off, column)
                 for (values, off, column), in_pieces in zip(sides, streamed)]  # fmt: skip
    kernels = module(_SOURCE, _kernel_names(kind, value, stored))
    reached("planned")
    checks = _Checks(cupy, floating)
    with cupy.cuda.Device():
        streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(1 if kernels_only else _STREAMS)]
        device_values = [cupy.empty(values.size, dtype=np.int16 if narrowed else values.dtype) for values, _, _ in sides]
        reached("streams")
        first_event = cupy.cuda.Event()
        if not kernels_only:
            first_event.record(streams[0])
        with streams[0]:
            # offsets and pair indices in one copy (each small copy from pageable memory costs 0.1-0.2 ms)
            # (series of one length, as from a 2-D array, have their offsets made on the device)
            if check:
                checks.prepare()  # before the ready event below, which every piece's stream waits for
            steps = [uniform_step(off) for off in (t_off, q_off)]
            uploaded = [off for off, step in zip((t_off, q_off), steps) if step is None]
            uploaded += [column.values for column in columns if column.kind == "listed"]
            ends = np.cumsum([0] + [part.size for part in uploaded]).tolist()
            small_dev = cupy.asarray(np.concatenate(uploaded)) if uploaded else None
            parts_dev = iter(small_dev[a:b] for a, b in zip(ends[:-1], ends[1:]))
            t_off_dev, q_off_dev = (next(parts_dev) if step is None else cupy.arange(off.size, dtype=cupy.int64) * step
                                    for off, step in zip((t_off, q_off), steps))  # fmt: skip
            pair_t_dev, pair_q_dev = (column.on_device(cupy, parts_dev) for column in columns)
            reached("offsets and columns")
            sub_dev = _table_on_device(cupy, table)
            out_dev = cupy.empty(len(plan), dtype=out_type)
            for (values, _, _), on_device, in_pieces in zip(sides, device_values, streamed):
                if not in_pieces:
                    on_device.set(np.ascontiguousarray(values))
                    if check and values.nbytes < _STREAM_FROM:
                        checks.add_host(values)
                    elif check:
                        checks.add(on_device)
            ready = cupy.cuda.Event()
            ready.record()
        reached("small uploads")
        if kernels_only:
            streams[0].synchronize()
            first_event.record(streams[0])
        for stream in streams[1:]:
            stream.wait_event(ready)
        streamed_bytes = sum(values.nbytes for (values, _, _), in_pieces in zip(sides, streamed) if in_pieces)
        bounds = _pieces(len(plan), streamed_bytes)
        staging = [None if not in_pieces else
                   _Narrowing(cupy, len(streams), int(np.diff(off[bounds]).max()), checks) if narrowed else
                   _route(cupy, values, len(streams), int(np.diff(off[bounds]).max()), locked_already)
                   for (values, off, _), in_pieces, locked_already in zip(sides, streamed, locked)]  # fmt: skip
        try:  # with DEFER_UNLOCKING, pages locked in place are handed on once the scores are back
            try:
                for piece, (a, b) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
                    slot = piece % len(streams)
                    stream = streams[slot]
                    with stream:
                        for (values, off, _), on_device, stage in zip(sides, device_values, staging):
                            if stage is not None:
                                lo, hi = int(off[a]), int(off[b])
                                stage.upload(slot, stream, values[lo:hi], on_device[lo:hi])
                                if check and not stage.checked_on_host:
                                    checks.add(on_device[lo:hi])
                        reached(f"piece {piece} up")
                        t_dev = device_values[0]
                        q_dev = t_dev if shared else device_values[1]
                        _launch(kernels, kind, value, stored, value_type, a, b, strips, pair_t_len, pair_q_len, plan,
                                t_dev, t_off_dev, q_dev, q_off_dev, pair_t_dev, pair_q_dev, sub_dev, out_dev, match,
                                mismatch, ins, dele, mode, ins_open, del_open, bound, cupy)  # fmt: skip
                    reached(f"piece {piece} launched")
            except _DoesNotFit:
                for stream in streams:  # nothing may still read or write this call's memory when it starts again
                    stream.synchronize()
                raise
            finally:
                if not DEFER_UNLOCKING:
                    _release(staging)  # while the last kernels run (the unregistering waits for them)
            reached("released")
            if long_pairs.size:
                for stream in streams[1:]:  # every piece of values is on the device
                    uploaded = cupy.cuda.Event()
                    uploaded.record(stream)
                    streams[0].wait_event(uploaded)
                with streams[0]:
                    t_dev = device_values[0]
                    rows = long_strip(pair_q_len[long_pairs], resident_warps, kind, value)
                    _launch_long(module(_SOURCE, _long_kernel_names(kind, value, stored)), kind, value, stored,
                                 value_type, long_pairs, rows, pair_t_len, pair_q_len, plan, t_dev, t_off_dev,
                                 t_dev if shared else device_values[1], q_off_dev, sub_dev, out_dev, match, mismatch,
                                 ins, dele, mode, ins_open, del_open, resident_warps, cupy)  # fmt: skip
            last_event = cupy.cuda.Event()
            for stream in streams:
                stream.synchronize()
            last_event.record(streams[0])
            last_event.synchronize()
            reached("synchronized")
            if check:
                checks.verify(kind, int((pair_t_len + pair_q_len).max()))
            out = out_dev.get()
            reached("read back")
        finally:
            if DEFER_UNLOCKING:
                _release(staging)  # to the background thread: after the scores are read back, or on an error
    if timings is not None:
        timings["kernel_s"] = cupy.cuda.get_elapsed_time(first_event, last_event) / 1e3
        timings["total_s"] = time.perf_counter() - start
    return out


def _few_long_pairs_fit(kind, rows, t_values, q_values, shared, pair_t_len, pair_q_len, value_type) -> bool:
    """Whether a call of long pairs only takes :func:`_few_long_pairs`: sides under ``_STREAM_FROM`` together,
    and the rows passed between chunks (at strip size ``rows``) within one launch's budget."""
    side_bytes = t_values.nbytes + (0 if shared else q_values.nbytes)
    if side_bytes >= _STREAM_FROM:
        return False
    border = int(_long_border_values(pair_t_len, pair_q_len, rows, kind).sum())
    return border * np.dtype(value_type).itemsize <= _LONG_BORDER_BYTES


# The page-locked buffer, the device buffer and the stream of :func:`_few_long_pairs`, per device, reused from call
# to call (one call at a time: the lock is held from the packing to the copy of the scores out).
_FEW_LONG = {}
_FEW_LONG_LOCK = threading.Lock()


def _few_long_pairs(cupy, kind, value, stored, value_type, out_type, t_values, t_off, q_values, q_off, plan, shared,
                    rows, resident_warps, pair_t_len, pair_q_len, table, check, timings, start, match, mismatch, ins,
                    dele, mode, ins_open, del_open):  # fmt: skip
    """A call whose pairs all take the long-pair kernel and whose sides are small (20 pairs of 10,000, say).

    Its kernel takes a millisecond or two, so the host's steps must cost less than that: everything the kernel
    reads (both sides, offsets, plan columns, units, border offsets, the ticket, the cost table) is packed into
    one reused page-locked buffer and goes up in one copy to one reused device buffer, the kernel reads its parts
    through pointers into it, the scores come back in one copy, and the checks run on the host (while the kernel
    runs, except for codes that index the cost table, which are checked first; a failed check raises once the
    GPU is done with the call's memory, and no score is returned). The general path's separate small copies from
    pageable memory (20-90 us each), device-side offsets, scatter of the scores and staging machinery took 1.5 ms
    of a 2.9 ms call of 20 int32 pairs of 10,000 on an H200 (bench/RESULTS.md, session 27). With a CuPy array for
    each part, three allocations and three events, the step from the filled buffer to the launch took 0.17-0.19
    ms of a 1.6 ms call; with pointers, 0.14 ms on another host (session 28).
    """
    stages = None if timings is None else timings.setdefault("stages", [])

    def reached(step: str) -> None:
        if stages is not None:
            stages.append((step, time.perf_counter() - start))

    def verify() -> None:
        checks = _Checks(cupy, value != "int")
        checks.add_host(t_values)
        if not shared:
            checks.add_host(q_values)
        checks.verify(kind, int((pair_t_len + pair_q_len).max()))

    # Out-of-range values only make wrong scores (which are then not returned), except the codes that index the
    # cost table (kind 3): those are checked before the launch, the others while the kernel runs.
    if check and kind == 3:
        verify()
    unit_pair, unit_chunk, border_off, border_size = _long_units(pair_t_len, pair_q_len, rows, kind)
    units = unit_pair.size
    columns = long_columns(kind, value, rows, units, resident_warps)
    reached("planned")
    parts = [np.ascontiguousarray(t_values), np.asarray(t_off, np.int64), np.ascontiguousarray(plan[:, 0]),
             np.ascontiguousarray(plan[:, 1]), border_off, unit_pair, unit_chunk, np.zeros(1, np.uint32),
             np.asarray(table, np.int32).ravel()]  # fmt: skip
    if not shared:
        parts += [np.ascontiguousarray(q_values), np.asarray(q_off, np.int64)]
    starts = np.cumsum([0] + [-(-part.nbytes // 16) * 16 for part in parts]).tolist()  # each part 16-byte aligned
    itemsize = np.dtype(value_type).itemsize
    scores_at = starts[-1]  # the scores after the parts, in both buffers
    total = scores_at + len(plan) * itemsize
    device = cupy.cuda.Device().id
    with _FEW_LONG_LOCK:
        host, on_device, stream = _FEW_LONG.get(device, (None, None, None))
        if host is None or host.size < total:
            host = pinned_empty(max(total, 1 << 20) * 2, np.uint8)
            on_device = cupy.empty(host.size, dtype=np.uint8)
            stream = stream or cupy.cuda.Stream(non_blocking=True)
            _FEW_LONG[device] = (host, on_device, stream)
        # the rows passed between chunks (up to _LONG_BORDER_BYTES) from CuPy's pool, not kept with the buffers
        border = cupy.empty(max(1, border_size), dtype=value_type)
        for part, at in zip(parts, starts):
            host[at : at + part.nbytes] = part.reshape(-1).view(np.uint8)
        reached("packed")
        runtime = cupy.cuda.runtime
        events = [cupy.cuda.Event() for _ in range(3)] if timings is not None else None
        if events:
            events[0].record(stream)
        base = on_device.data.ptr
        runtime.memcpyAsync(base, host.ctypes.data, scores_at, runtime.memcpyHostToDevice, stream.ptr)
        # 0x80 in every byte: a value no cell takes, so a reader knows a cell not yet written (dp.cu)
        runtime.memsetAsync(border.data.ptr, 0x80, border.nbytes, stream.ptr)
        if events:
            events[1].record(stream)
        # the kernel's arguments: pointers into the device buffer (no CuPy array per part), then its scalars
        pointer = [np.uint64(base + at) for at in starts[:-1]]
        t_dev, t_off_dev, pair_t, pair_q, border_off_dev, unit_pair_dev, unit_chunk_dev, ticket, sub_dev = pointer[:9]
        q_dev, q_off_dev = (t_dev, t_off_dev) if shared else pointer[9:]
        kernel = module(_SOURCE, _long_kernel_names(kind, value, stored)).get_function(
            f"dp_long<{rows},{kind},{value},{stored},{columns}>")  # fmt: skip
        with stream:
            kernel(
                (-(-units // _LONG_WARPS_PER_BLOCK),), (32 * _LONG_WARPS_PER_BLOCK,),
                (t_dev, t_off_dev, q_dev, q_off_dev, pair_t, pair_q, unit_pair_dev, unit_chunk_dev, np.int32(units),
                 ticket, np.int32(match), np.int32(mismatch), np.int32(ins), np.int32(dele), np.int32(mode),
                 np.int32(ins_open), np.int32(del_open), sub_dev, border, border_off_dev, np.uint64(base + scores_at)),
            )  # fmt: skip
        if events:
            events[2].record(stream)
        reached("launched")
        runtime.memcpyAsync(host.ctypes.data + scores_at, base + scores_at, total - scores_at,
                            runtime.memcpyDeviceToHost, stream.ptr)  # fmt: skip
        try:
            if check and kind != 3:
                verify()
            reached("checked")
        finally:  # nothing of this call's may be freed, nor the buffers refilled, while the GPU still uses them
            stream.synchronize()
        reached("synchronized")
        scores = host[scores_at:total].view(value_type).astype(out_type)  # a copy: the buffer is reused
    if timings is not None:
        timings["kernel_s"] = cupy.cuda.get_elapsed_time(events[0], events[2]) / 1e3
        timings["upload_s"] = cupy.cuda.get_elapsed_time(events[0], events[1]) / 1e3
        timings["total_s"] = time.perf_counter() - start
    return scores


def _long_border_values(pair_t_len, pair_q_len, rows: int, kind: int) -> np.ndarray:
    """Per pair, the values of the rows its chunks of 32 ``rows`` query rows pass down (H, and F for affine)."""
    chunks = -(-np.asarray(pair_q_len) // (32 * rows))
    return (chunks - 1) * (np.asarray(pair_t_len) + 1) * (2 if kind >= 2 else 1)


def _long_units(pair_t_len, pair_q_len, rows: int, kind: int):
    """The long-pair kernel's units of work for pairs of these lengths, at strip size ``rows``: the pair and the
    chunk of each unit (int32), chunk-major (every pair's chunk 0, then chunk 1, ...: dp.cu says why waits then
    always end), each pair's offset into the rows passed between its chunks (int64), and their total."""
    chunks = -(-np.asarray(pair_q_len) // (32 * rows))
    border_values = _long_border_values(pair_t_len, pair_q_len, rows, kind)
    # (chunk, pair) for each chunk a pair has, in row-major order of that grid: chunk-major
    unit_chunk, unit_pair = np.nonzero(np.arange(int(chunks.max(initial=0)))[:, None] < chunks[None, :])
    border_off = np.zeros(border_values.size, np.int64)
    np.cumsum(border_values[:-1], out=border_off[1:])
    return unit_pair.astype(np.int32), unit_chunk.astype(np.int32), border_off, int(border_values.sum())


def _launch(kernels, kind, value, stored, value_type, a, b, strips, pair_t_len, pair_q_len, plan, t_dev, t_off_dev,
            q_dev, q_off_dev, pair_t_dev, pair_q_dev, sub_dev, out_dev, match, mismatch, ins, dele, mode, ins_open,
            del_open, bound, cupy):  # fmt: skip
    """The kernels for pairs ``a:b`` on the current stream, one launch per strip size present."""
    piece_strips = strips[a:b]
    for rows in STRIPS:
        if kind == 4:  # edit distance: a segment of ``rows`` lanes per pair, 32 ``rows`` query rows a chunk
            chosen = a + np.flatnonzero(piece_strips == rows)
            if chosen.size == 0:
                continue
            per_warp = 32 // rows
            stride = int(pair_t_len[chosen].max()) + 1 if int(pair_q_len[chosen].max()) > 32 * rows else 0
            blocks = int(min(-(-chosen.size // (per_warp * _WARPS_PER_BLOCK)), 132 * 16))
            border = cupy.empty(max(1, blocks * _WARPS_PER_BLOCK * stride), dtype=cupy.int8)
            whole = chosen.size == b - a
            pair_t = pair_t_dev[a:b] if whole else cupy.asarray(plan[chosen, 0])
            pair_q = pair_q_dev[a:b] if whole else cupy.asarray(plan[chosen, 1])
            scores = out_dev[a:b] if whole else cupy.empty(chosen.size, dtype=cupy.int64)
            kernels.get_function(f"myers_warp<{rows}>")(
                (blocks,), (32 * _WARPS_PER_BLOCK,),
                (t_dev, t_off_dev, q_dev, q_off_dev, pair_t, pair_q, np.int32(chosen.size), border, np.int64(stride),
                 scores),
            )  # fmt: skip
            if not whole:
                out_dev[cupy.asarray(chosen)] = scores
            continue
        if piece_strips[0] == rows and piece_strips[-1] == rows and (piece_strips == rows).all():
            chosen = None  # the whole piece: slices, no gather
            count = b - a
        else:
            chosen = a + np.flatnonzero(piece_strips == rows)
            count = chosen.size
            if count == 0:
                continue
        index = slice(a, b) if chosen is None else chosen
        longest_t = int(pair_t_len[index].max())
        reach = (longest_t + int(pair_q_len[index].max()) + 32 * rows) * bound
        # The boundary row between chunks of 32 R rows, per warp: only for queries longer than one chunk.
        chunked = int(pair_q_len[index].max()) > 32 * rows
        stride = (longest_t + 2) * (2 if kind >= 2 else 1) if chunked else 0
        if kind == 0 and reach < (1 << 14) and rows >= 16:
            # Two pairs of one shape per lane, in 16-bit halves (for short strips the extra loads of the second
            # pair cost more than the halved arithmetic saves: 615 against 1,270 GCUPS at 250).
            pair_index = np.arange(a, b) if chosen is None else chosen
            units = _units(pair_index, pair_t_len, pair_q_len).ravel()
            blocks = int(min(-(-(units.size // 2) // _WARPS_PER_BLOCK), 132 * 16))
            border = cupy.empty(max(1, blocks * _WARPS_PER_BLOCK * stride), dtype=cupy.uint32)
            scores = cupy.empty(units.size, dtype=cupy.int64)
            kernels.get_function(f"nw16_warp<{rows}>")(
                (blocks,), (32 * _WARPS_PER_BLOCK,),
                (t_dev, t_off_dev, q_dev, q_off_dev, cupy.asarray(plan[units, 0]), cupy.asarray(plan[units, 1]),
                 np.int32(units.size // 2), np.int32(match), np.int32(mismatch), np.int32(ins), np.int32(dele),
                 border, np.int64(stride), scores),
            )  # fmt: skip
            out_dev[cupy.asarray(units)] = scores
            continue
        if chosen is None:
            pair_t, pair_q = pair_t_dev[a:b], pair_q_dev[a:b]
        else:
            pair_t, pair_q = cupy.asarray(plan[chosen, 0]), cupy.asarray(plan[chosen, 1])
        blocks = int(min(-(-count // _WARPS_PER_BLOCK), 132 * 16))
        border = cupy.empty(max(1, blocks * _WARPS_PER_BLOCK * stride), dtype=value_type)
        direct = chosen is None and out_dev.dtype == value_type
        scores = out_dev[a:b] if direct else cupy.empty(count, value_type)
        kernels.get_function(f"dp_warp<{rows},{kind},{value},{stored}>")(
            (blocks,), (32 * _WARPS_PER_BLOCK,),
            (t_dev, t_off_dev, q_dev, q_off_dev, pair_t, pair_q, np.int32(count), np.int32(match),
             np.int32(mismatch), np.int32(ins), np.int32(dele), np.int32(mode), np.int32(ins_open),
             np.int32(del_open), sub_dev, border, np.int64(stride), scores),
        )  # fmt: skip
        if chosen is None:
            if not direct:
                out_dev[a:b] = scores
        else:
            out_dev[cupy.asarray(chosen)] = scores


def _launch_long(kernels, kind, value, stored, value_type, pairs, rows, pair_t_len, pair_q_len, plan, t_dev, t_off_dev,
                 q_dev, q_off_dev, sub_dev, out_dev, match, mismatch, ins, dele, mode, ins_open, del_open,
                 resident_warps, cupy):  # fmt: skip
    """The long-pair kernel for the plan rows ``pairs`` on the current stream: each pair in chunks of 32 ``rows``
    query rows, one warp per chunk, in launches whose rows passed between chunks fit :data:`_LONG_BORDER_BYTES`."""
    border_values = _long_border_values(pair_t_len[pairs], pair_q_len[pairs], rows, kind)
    itemsize = np.dtype(value_type).itemsize
    start = 0
    while start < pairs.size:
        # as many pairs as fit the budget, and always at least one
        fits = np.cumsum(border_values[start:]) * itemsize <= _LONG_BORDER_BYTES
        stop = start + max(1, int(np.count_nonzero(fits)))
        group = pairs[start:stop]
        unit_pair, unit_chunk, border_off, border_size = _long_units(pair_t_len[group], pair_q_len[group], rows, kind)
        border = cupy.empty(max(1, border_size), dtype=value_type)
        # 0x80 in every byte: a value no cell takes, so a reader knows a cell not yet written (dp.cu)
        cupy.cuda.runtime.memsetAsync(border.data.ptr, 0x80, border.nbytes, cupy.cuda.get_current_stream().ptr)
        # the small arrays in two copies (each copy from pageable memory costs 20-40 us): the 64-bit ones (pair
        # sides, border offsets, the plan rows), then the units and the ticket counter (32-bit, the ticket 0)
        wide = cupy.asarray(np.concatenate([plan[group, 0], plan[group, 1], border_off, group]))
        narrow = cupy.asarray(np.concatenate([unit_pair, unit_chunk, [0]]).astype(np.int32))
        pair_t, pair_q, border_off_dev, group_dev = (wide[i * group.size : (i + 1) * group.size] for i in range(4))
        units = unit_pair.size
        ticket = narrow[2 * units :].view(cupy.uint32)
        scores = cupy.empty(group.size, dtype=value_type)
        blocks = int(min(-(-units // _LONG_WARPS_PER_BLOCK), 1 << 16))
        columns = long_columns(kind, value, rows, units, resident_warps)
        kernels.get_function(f"dp_long<{rows},{kind},{value},{stored},{columns}>")(
            (blocks,), (32 * _LONG_WARPS_PER_BLOCK,),
            (t_dev, t_off_dev, q_dev, q_off_dev, pair_t, pair_q, narrow[:units], narrow[units : 2 * units],
             np.int32(units), ticket, np.int32(match), np.int32(mismatch), np.int32(ins), np.int32(dele),
             np.int32(mode), np.int32(ins_open), np.int32(del_open), sub_dev, border, border_off_dev, scores),
        )  # fmt: skip
        out_dev[group_dev] = scores
        start = stop
