"""Occurrences within ``k`` mismatches or ``k`` edits: a pigeonhole filter on the exact index, then exact
verification of every candidate it yields.

Definitions (``N`` on either side matches any base at no cost, as in the exact scan; with ``iupac`` two codes
match when the sets of bases they stand for meet)
-------------------------------------------------------------------------------------------------------------
- **Mismatches.** An occurrence is an offset ``o`` where the signature, laid over the sample's bases
  ``o .. o + m``, differs in at most ``k`` of its ``m`` positions (Hamming, as ``seqkit locate -m``).
- **Edits.** For each end ``e`` of the sample (exclusive), ``D(e)`` is the least edit distance (substitutions,
  insertions, deletions, each 1) between the whole signature and any sample substring ``s .. e`` (edlib's HW
  mode; approximate string matching as Navarro 2001 defines it). Every end with ``D(e) <= k`` would report
  each match some ``2 k`` times over, at its neighbouring ends, so an occurrence is a local minimum of this
  profile within ``k``, at the rightmost end of its plateau: the nearest different costs on both sides are
  higher (or the sample ends there). This is the rule of Sassy's ``search``. The start is the largest ``s``
  of an alignment of cost ``D(e)`` (the shortest such alignment).

Why no occurrence is missed
---------------------------
Cut each signature of ``m`` bases into ``k + 1`` consecutive, disjoint pieces (``k < m``, so each holds a
base). An occurrence within ``k`` mismatches has at most ``k`` mismatched positions, so at least one piece holds
none: that piece occurs exactly (N matching anything) in the sample at ``o + a``, ``a`` its start in the
signature. An alignment of cost ``c <= k`` (edits) has at most ``c`` operations; a substitution or deletion
lies in one piece, an insertion between two signature bases in at most one, so again some piece ``[a, b)`` is
aligned without any operation: it occurs exactly at some sample position ``q``. The alignment then starts
at ``s >= q - a - c`` and ends at ``e <= q - a + m + c``.

The pieces are scanned as signatures of their own by the exact engine with every occurrence reported, whose
completeness is proved in :mod:`.index` (and holds on the GPU and on Dask, which give identical rows). So each
occurrence's offset ``o = q - a`` is among the candidates (mismatches), or its whole alignment lies in a
candidate's window ``[q - a - k, q - a + m + k)`` (edits). Every candidate is then verified exactly:
mismatches are counted at ``o``; for edits the windows of one (sample, signature) are merged where they
overlap or touch, and each merged window ``W`` gets the semi-global DP (free start and end in the sample),
restricted to the band of diagonals its candidates' alignments can use (see :func:`_edit_windows`).
Its ``D_W(e)`` is never below ``D(e)`` (it minimises over fewer starts), and when ``D(e) <= k`` every optimal
alignment lies in one candidate window, and so in the one merged window holding base ``e - 1``: then
``D_W(e) = D(e)`` and the largest optimal start is found there. Windows are disjoint after merging, so each
end is reported once. With costs above ``k`` read as ``k + 1``, the profile over a merged window and the
positions just outside it (above ``k``: an alignment within ``k`` ending there would hold a base of a window
that touches this one, and so be merged into it) equals the whole profile read the same way, and a local
minimum within ``k`` depends only on costs read so. The DP keeps only the rows whose cost can still reach ``k`` (Ukkonen's cut-off): a cell
above ``k`` leads only to cells above ``k``, since costs never fall along a path.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._jit import jit
from ..errors import InputError
from ..io.sequences import BASE_MASKS, SequenceSet

METRICS = ("mismatches", "edits")


@dataclass(frozen=True)
class Pieces:
    """The ``k + 1`` pieces of every signature row, as signature rows of their own for the exact engine.

    Attributes
    ----------
    codes, offsets : ndarray
        The pieces' bases, laid out as a :class:`~seqcompare.io.sequences.SequenceSet`'s.
    owner : ndarray of int64
        The signature row each piece comes from.
    start : ndarray of int64
        Where each piece starts in its signature.
    k_index : int
        The exact index's window length for the pieces: the shortest piece, at most the asked ``k``.
    """

    codes: np.ndarray
    offsets: np.ndarray
    owner: np.ndarray
    start: np.ndarray
    k_index: int


def errors_per_signature(errors, lengths: np.ndarray) -> np.ndarray:
    """Each signature's allowance: ``errors`` itself when it is an int, or a fraction of each signature's
    length, rounded down, when it is a float in ``[0, 1)`` (``0.05``: 5%). The fraction is taken as written
    (its shortest decimal form), in integers: 5% of 20 is 1, where 0.05 x 20 in doubles is 1.0000000000000002
    and 0.29 x 100 is 28.999999999999996."""
    if isinstance(errors, float):
        fraction = Fraction(str(errors))
        return (lengths.astype(np.int64) * fraction.numerator) // fraction.denominator
    return np.full(lengths.size, errors, dtype=np.int64)


def check_errors(errors: np.ndarray, lengths: np.ndarray, names, metric: str, source: str, shown) -> None:
    """Refuse allowances that would let a signature match anything (``errors >= length``): one line naming
    the shortest such signature."""
    too_short = np.flatnonzero(lengths <= errors)
    if too_short.size:
        row = int(too_short[np.argmin(lengths[too_short])])
        option = "--max-mismatches" if metric == "mismatches" else "--max-edits"
        raise InputError(f"{option} {shown} is too large for {source}: signature #{row + 1} '{names[row]}' has "
                         f"{int(lengths[row])} bases, so at most {int(lengths[row]) - 1} {metric} leave it "
                         "anything to match")  # fmt: skip


def split_into_pieces(codes: np.ndarray, offsets: np.ndarray, errors: np.ndarray, k: int) -> Pieces:
    """Cut every signature row of ``codes``/``offsets`` into ``errors[row] + 1`` pieces of near-equal length
    (piece ``j`` of a row of ``m`` bases cut in ``e + 1`` is ``[j m // (e + 1), (j + 1) m // (e + 1))``)."""
    lengths = np.diff(offsets)
    parts = errors + 1
    owner = np.repeat(np.arange(lengths.size, dtype=np.int64), parts)
    first_piece = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(parts, out=first_piece[1:])
    j = np.arange(owner.size, dtype=np.int64) - first_piece[owner]  # each piece's number within its row
    start = (lengths[owner] * j) // parts[owner]
    stop = (lengths[owner] * (j + 1)) // parts[owner]
    piece_lengths = stop - start
    piece_offsets = np.zeros(piece_lengths.size + 1, dtype=np.int64)
    np.cumsum(piece_lengths, out=piece_offsets[1:])
    # The pieces tile each row in order, so the rows' bases in order are the pieces' bases.
    piece_codes = codes[offsets[0] : offsets[-1]].copy()
    shortest = int(piece_lengths.min()) if piece_lengths.size else 1
    return Pieces(piece_codes, piece_offsets, owner, start, max(1, min(k, shortest)))


@dataclass(frozen=True)
class Verifier:
    """Turns the exact rows of the pieces into verified occurrence rows of the signatures.

    Called with the samples and the pieces' ``(sample, piece, offset, quality sum)`` rows, it returns
    ``(sample, signature row, offset, quality sum, distance, end)``: every occurrence within ``errors`` (see
    the module's definitions), its quality sum over the sample's bases ``offset .. end``, kept when that sum
    reaches ``threshold`` times ``end - offset``. ``errors`` holds each signature row's allowance.
    """

    metric: str
    errors: np.ndarray
    codes: np.ndarray
    offsets: np.ndarray
    owner: np.ndarray
    start: np.ndarray
    threshold: float
    threads: int = 1
    sample_codes: np.ndarray | None = None  # the samples' real codes, where the engine read IUPAC codes as N

    def __call__(self, samples, rows):
        if self.sample_codes is not None:
            samples = SequenceSet(samples.names, self.sample_codes, samples.offsets, samples.quality, samples.source)
        sample, piece, offset = rows[0], rows[1], rows[2]
        lengths = np.diff(self.offsets)
        signature = self.owner[piece]
        origin = offset - self.start[piece]  # where the whole signature would start
        if self.metric == "mismatches":
            found = _verified_mismatches(samples, sample, signature, origin, self, lengths)
        else:
            found = _verified_edits(samples, sample, signature, origin, self, lengths)
        sample, signature, begin, end, distance, total = found
        keep = ~(total < self.threshold * (end - begin))
        return sample[keep], signature[keep], begin[keep], total[keep], distance[keep], end[keep]


def _empty_rows(count: int = 6):
    return tuple(np.empty(0, dtype=np.int64) for _ in range(count))


def _chunks(count: int, threads: int) -> list:
    cuts = np.linspace(0, count, max(1, min(count, 8 * threads)) + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def _verified_mismatches(samples, sample, signature, origin, verifier: Verifier, lengths):
    """Candidates ``(sample, signature, origin)``, each once, counted and kept when within the errors."""
    if sample.size == 0:
        return _empty_rows()
    order = np.lexsort((origin, signature, sample))  # (np.unique over rows sorts as slowly as objects)
    sample, signature, origin = sample[order], signature[order], origin[order]
    first = np.ones(sample.size, dtype=bool)
    first[1:] = (sample[1:] != sample[:-1]) | (signature[1:] != signature[:-1]) | (origin[1:] != origin[:-1])
    sample, signature, origin = sample[first], signature[first], origin[first]
    count = np.empty(sample.size, dtype=np.int64)
    total = np.empty(sample.size, dtype=np.int64)

    def task(bounds):
        _count_mismatches(samples.codes, samples.offsets, samples.quality, verifier.codes, verifier.offsets, sample,
                          signature, origin, verifier.errors, bounds[0], bounds[1], count, total)  # fmt: skip

    with ThreadPoolExecutor(verifier.threads) as pool:
        list(pool.map(task, _chunks(sample.size, verifier.threads)))
    keep = count <= verifier.errors[signature]
    begin = origin[keep]
    return sample[keep], signature[keep], begin, begin + lengths[signature[keep]], count[keep], total[keep]


@jit(reads=("bases", "sample_offsets", "quality", "codes", "offsets"))
def _count_mismatches(bases, sample_offsets, quality, codes, offsets, sample, signature, origin, errors, first, last,
                      count, total):  # fmt: skip
    """``count[c]``: mismatches of candidate ``c`` (one more than its signature's ``errors`` once over),
    ``total[c]`` its quality sum."""
    for c in range(first, last):
        base = sample_offsets[sample[c]]
        size = sample_offsets[sample[c] + 1] - base
        o = origin[c]
        start = offsets[signature[c]]
        length = offsets[signature[c] + 1] - start
        allowed = errors[signature[c]]
        if o < 0 or o + length > size:
            count[c] = allowed + 1
            total[c] = 0
            continue
        mismatches = 0
        for p in range(length):
            a = codes[start + p]
            b = bases[base + o + p]
            if (BASE_MASKS[a] & BASE_MASKS[b]) == 0:  # base sets that do not meet (N meets every base)
                mismatches += 1
                if mismatches > allowed:
                    break
        count[c] = mismatches
        qsum = 0
        if mismatches <= allowed:
            for p in range(length):
                qsum += quality[base + o + p]
        total[c] = qsum


def _verified_edits(samples, sample, signature, origin, verifier: Verifier, lengths):
    """Candidate windows merged per (sample, signature), then the semi-global DP over each merged window."""
    if sample.size == 0:
        return _empty_rows()
    errors = verifier.errors
    sizes = np.diff(samples.offsets)[sample]
    lo = np.maximum(origin - errors[signature], 0)
    hi = np.minimum(origin + lengths[signature] + errors[signature], sizes)
    order = np.lexsort((lo, signature, sample))
    sample, signature, lo, hi, origin = sample[order], signature[order], lo[order], hi[order], origin[order]
    # Merge windows of one pair that overlap or touch: a new group starts where the pair changes or the window
    # starts past the furthest end so far.
    pair_start = np.ones(sample.size, dtype=bool)
    pair_start[1:] = (sample[1:] != sample[:-1]) | (signature[1:] != signature[:-1])
    group = _merge_groups(pair_start, lo, hi)
    heads = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    win_sample, win_signature, win_lo = sample[heads], signature[heads], lo[heads]
    win_hi = np.maximum.reduceat(hi, heads)
    # The band of diagonals (sample end minus signature bases consumed) the window's alignments can use.
    win_low_diagonal = np.minimum.reduceat(origin, heads) - errors[win_signature]
    win_high_diagonal = np.maximum.reduceat(origin, heads) + errors[win_signature]
    pieces = []

    def task(bounds):
        first, last = bounds
        capacity = max(64, 4 * (last - first))
        parts = []
        while first < last:
            out = np.empty((capacity, 6), dtype=np.int64)
            written, first = _edit_windows(samples.codes, samples.offsets, samples.quality, verifier.codes,
                                           verifier.offsets, win_sample, win_signature, win_lo, win_hi,
                                           win_low_diagonal, win_high_diagonal, errors, first, last, out)  # fmt: skip
            parts.append(out[:written].copy())
            capacity *= 2
        return parts

    with ThreadPoolExecutor(verifier.threads) as pool:
        for parts in pool.map(task, _chunks(win_sample.size, verifier.threads)):
            pieces.extend(parts)
    table = np.concatenate(pieces) if pieces else np.empty((0, 6), dtype=np.int64)
    return tuple(np.ascontiguousarray(table[:, c]) for c in range(6))


@jit
def _edit_row(out, written, sample, signature, start, end, cost, quality, base):
    qsum = 0
    for q in range(start, end):
        qsum += quality[base + q]
    out[written, 0] = sample
    out[written, 1] = signature
    out[written, 2] = start
    out[written, 3] = end
    out[written, 4] = cost
    out[written, 5] = qsum
    return written + 1


@jit
def _merge_groups(pair_start, lo, hi):
    """Group number of each window (sorted by pair, then start): one group per run of overlapping or touching
    windows of a pair."""
    group = np.empty(lo.size, np.int64)
    current = -1
    reach = 0
    for i in range(lo.size):
        if pair_start[i] or lo[i] > reach:
            current += 1
            reach = hi[i]
        elif hi[i] > reach:
            reach = hi[i]
        group[i] = current
    return group


@jit(reads=("bases", "sample_offsets", "quality", "codes", "offsets"))
def _edit_windows(bases, sample_offsets, quality, codes, offsets, win_sample, win_signature, win_lo, win_hi,
                  win_low_diagonal, win_high_diagonal, errors, first, last, out):  # fmt: skip
    """Semi-global DP of windows ``first:last``: rows ``(sample, signature, start, end, cost, quality sum)`` of
    the occurrences (the profile's local minima within the signature's ``errors``). Returns ``(rows written,
    next window)``: a window is only begun when ``out`` can hold all of its ends, so a caller with a full
    ``out`` calls again from the window returned.

    Cell ``(i, j)``: ``i`` signature bases against the sample up to ``j``; its diagonal is ``j - i``. The cells
    outside a window's band of diagonals, and those above the errors, are read as ``cap = errors + 1``. The band
    holds every alignment the window answers for: one within ``e`` edits through an exact piece at origin ``o``
    keeps to the diagonals ``o - e .. o + e``, as each insertion or deletion moves it by one. Columns are kept
    in place: column ``j`` reads the last column's rows from its own band's first row less one, which that
    column computed, and below its ``top`` (the last row within the errors, -1 for none) every row is cap."""
    written = np.int64(0)  # not a literal 0: one specialization of _edit_row
    longest = 0
    for w in range(first, last):
        longest = max(longest, offsets[win_signature[w] + 1] - offsets[win_signature[w]])
    cost = np.empty(longest + 1, np.int64)
    begin = np.empty(longest + 1, np.int64)
    for w in range(first, last):
        lo = win_lo[w]
        hi = win_hi[w]
        if written + (hi - lo) > out.shape[0]:
            return written, w
        base = sample_offsets[win_sample[w]]
        start = offsets[win_signature[w]]
        m = offsets[win_signature[w] + 1] - start
        allowed = errors[win_signature[w]]
        cap = allowed + 1
        low = win_low_diagonal[w]
        high = win_high_diagonal[w]
        # Column lo: no sample base consumed; row i costs i deletions, from a start in the band.
        top = -1
        if low <= lo <= high:
            top = min(m, allowed, lo - low)
            for i in range(top + 1):
                cost[i] = i
                begin[i] = lo
        previous = cap  # the profile at column lo: all m signature bases deleted, m > errors
        previous_begin = lo
        falling = False
        for j in range(lo + 1, hi + 1):
            b = bases[base + j - 1]
            first_row = max(0, j - high)
            last_row = min(m, j - low)
            new_top = -1
            if first_row <= last_row:
                if first_row == 0:
                    diagonal = cost[0] if top >= 0 else cap
                    diagonal_begin = begin[0]
                    cost[0] = 0
                    begin[0] = j
                    up = 0
                    up_begin = j
                    new_top = 0
                    i = 1
                else:
                    diagonal = cost[first_row - 1] if first_row - 1 <= top else cap
                    diagonal_begin = begin[first_row - 1]
                    up = cap
                    up_begin = -1
                    i = first_row
                while i <= last_row:
                    if i > top + 1 and up >= allowed:
                        break  # left and diagonal are cap here, so only up + 1 could stay within the errors
                    left = cost[i] if i <= top else cap
                    left_begin = begin[i]
                    a = codes[start + i - 1]
                    best = diagonal + (0 if (BASE_MASKS[a] & BASE_MASKS[b]) != 0 else 1)
                    best_begin = diagonal_begin
                    # Equal costs: the larger start (the shortest alignment).
                    if left + 1 < best or (left + 1 == best and left_begin > best_begin):
                        best = left + 1
                        best_begin = left_begin
                    if up + 1 < best or (up + 1 == best and up_begin > best_begin):
                        best = up + 1
                        best_begin = up_begin
                    if best > cap:
                        best = cap
                    diagonal = left
                    diagonal_begin = left_begin
                    cost[i] = best
                    begin[i] = best_begin
                    up = best
                    up_begin = best_begin
                    if best <= allowed:
                        new_top = i
                    i += 1
            top = new_top
            # The profile's local minima (Sassy's rule): the cost of the last end is reported when costs fell
            # into its plateau and rise after it.
            here = cost[m] if top == m else cap
            if falling and here > previous and previous <= allowed:
                written = _edit_row(out, written, win_sample[w], win_signature[w], previous_begin, j - 1, previous,
                                    quality, base)  # fmt: skip
            falling = here < previous or (falling and here == previous)
            previous = here
            previous_begin = begin[m]
        # Past the window the costs are above the errors.
        if falling and previous <= allowed:
            written = _edit_row(out, written, win_sample[w], win_signature[w], previous_begin, hi, previous, quality,
                                base)  # fmt: skip
    return written, last
