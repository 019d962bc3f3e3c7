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
overlap or touch, and each merged window ``W`` gets the semi-global DP (free start and end in the sample,
starts in ``W``), bit-parallel (see :func:`_edit_windows`). Its ``D_W(e)`` is never below ``D(e)`` (it
minimises over fewer starts), and when ``D(e) <= k`` every optimal alignment lies in one candidate window, and
so in the one merged window holding base ``e - 1``: then ``D_W(e) = D(e)``, and the largest optimal start, the
largest ``s`` with ``edit(signature, sample[s:e]) = D(e)``, lies in ``W`` too, so the DP run backwards from
``e`` finds it before it leaves ``W``. Windows are disjoint after merging, so each end is reported once. With
costs above ``k`` read as ``k + 1``, the profile over a merged window and the positions just outside it (above
``k``: an alignment within ``k`` ending there would hold a base of a window that touches this one, and so be
merged into it) equals the whole profile read the same way, and a local minimum within ``k`` depends only on
costs read so.
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
    masks, masks_reversed, mask_offsets = _signature_masks(verifier.codes, verifier.offsets)
    pieces = []

    def task(bounds):
        first, last = bounds
        capacity = max(64, 4 * (last - first))
        parts = []
        while first < last:
            out = np.empty((capacity, 6), dtype=np.int64)
            written, first = _edit_windows(samples.codes, samples.offsets, samples.quality, verifier.offsets, masks,
                                           masks_reversed, mask_offsets, win_sample, win_signature, win_lo, win_hi,
                                           errors, first, last, out)  # fmt: skip
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


def _signature_masks(codes: np.ndarray, offsets: np.ndarray):
    """``(masks, masks_reversed, mask_offsets)``: Myers' match masks of every signature row, and of the row read
    backwards. Row ``r`` of ``m`` bases has ``w = ceil(m / 64)`` words per code from ``mask_offsets[r]``: bit
    ``i`` of word ``mask_offsets[r] + c * w + b`` is set when the row's base ``64 b + i`` meets code ``c`` (their
    base sets intersect, so N meets every base)."""
    lengths = np.diff(offsets)
    words = (lengths + 63) // 64 * BASE_MASKS.size
    mask_offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(words, out=mask_offsets[1:])
    masks = np.zeros(int(mask_offsets[-1]), dtype=np.uint64)
    masks_reversed = np.zeros_like(masks)
    _fill_masks(codes, offsets, mask_offsets, masks, masks_reversed)
    return masks, masks_reversed, mask_offsets


@jit(reads=("codes", "offsets", "mask_offsets"))
def _fill_masks(codes, offsets, mask_offsets, masks, masks_reversed):
    for row in range(offsets.size - 1):
        start = offsets[row]
        m = offsets[row + 1] - start
        words = (m + 63) // 64
        for c in range(BASE_MASKS.size):
            first = mask_offsets[row] + c * words
            for i in range(m):
                if (BASE_MASKS[codes[start + i]] & BASE_MASKS[c]) != 0:
                    masks[first + i // 64] |= np.uint64(1) << np.uint64(i % 64)
                    back = m - 1 - i
                    masks_reversed[first + back // 64] |= np.uint64(1) << np.uint64(back % 64)


@jit
def _myers_column(masks, first, pv, mv, words, top_delta, last_bit):
    """Advance a column of Myers' bit-vector DP by one sample base (Myers 1999, in Hyyrö's form for several words):
    ``pv``/``mv`` hold the +1/-1 vertical differences of the column's ``64 words`` rows, ``masks[first:first +
    words]`` the rows that meet the base, and ``top_delta`` is the horizontal difference entering at the top (0
    when every start is free, +1 for a start pinned at column 0). Returns the horizontal difference of the row
    at bit ``last_bit`` of the last word: the signature's last row, whose cost it moves."""
    one = np.uint64(1)
    high = np.uint64(63)
    carry = top_delta
    delta = 0
    for w in range(words):
        eq = masks[first + w]
        p = pv[w]
        m = mv[w]
        xv = eq | m
        if carry < 0:
            eq |= one
        xh = (((eq & p) + p) ^ p) | eq
        ph = m | ~(xh | p)
        mh = p & xh
        if w == words - 1:
            delta = np.int64((ph >> last_bit) & one) - np.int64((mh >> last_bit) & one)
        next_carry = np.int64(ph >> high) - np.int64(mh >> high)
        ph <<= one
        mh <<= one
        if carry < 0:
            mh |= one
        elif carry > 0:
            ph |= one
        pv[w] = mh | ~(xv | ph)
        mv[w] = ph & xv
        carry = next_carry
    return delta


@jit
def _largest_start(bases, base, masks_reversed, first, pv, mv, words, last_bit, m, end, cost, lowest):
    """The largest ``s >= lowest`` with ``edit(signature, sample[s:end]) == cost``, the least cost of an alignment
    ending at ``end``: the signature and the sample read backwards from ``end``, the start pinned there, until the
    last row first costs ``cost`` (-1 if it never does)."""
    for w in range(words):
        pv[w] = np.uint64(0xFFFFFFFFFFFFFFFF)
        mv[w] = np.uint64(0)
    score = m
    s = end
    while s > lowest:
        s -= 1
        score += _myers_column(masks_reversed, first + bases[base + s] * words, pv, mv, words, np.int64(1), last_bit)
        if score == cost:
            return s
    return -1


@jit(reads=("bases", "sample_offsets", "quality", "offsets", "masks", "masks_reversed", "mask_offsets"))
def _edit_windows(bases, sample_offsets, quality, offsets, masks, masks_reversed, mask_offsets, win_sample,
                  win_signature, win_lo, win_hi, errors, first, last, out):  # fmt: skip
    """Semi-global DP of windows ``first:last``: rows ``(sample, signature, start, end, cost, quality sum)`` of
    the occurrences (the profile's local minima within the signature's ``errors``). Returns ``(rows written,
    next window)``: a window is only begun when ``out`` can hold all of its ends, so a caller with a full
    ``out`` calls again from the window returned.

    The profile ``D_W(e)`` over a window ``[lo, hi)`` is the last row of the DP of the signature against the
    window with every start free, computed bit-parallel (:func:`_myers_column`); costs above the errors are read
    as ``cap = errors + 1``. The start of a reported end is found afterwards, by the DP run backwards from it
    (:func:`_largest_start`): the largest start of an alignment of that cost, which lies in the window."""
    written = np.int64(0)  # not a literal 0: one specialization of _edit_row
    longest = 0
    for w in range(first, last):
        longest = max(longest, offsets[win_signature[w] + 1] - offsets[win_signature[w]])
    most_words = (longest + 63) // 64
    pv = np.empty(most_words, np.uint64)
    mv = np.empty(most_words, np.uint64)
    back_pv = np.empty(most_words, np.uint64)
    back_mv = np.empty(most_words, np.uint64)
    for w in range(first, last):
        lo = win_lo[w]
        hi = win_hi[w]
        if written + (hi - lo) > out.shape[0]:
            return written, w
        base = sample_offsets[win_sample[w]]
        signature = win_signature[w]
        m = offsets[signature + 1] - offsets[signature]
        allowed = errors[signature]
        cap = allowed + 1
        words = (m + 63) // 64
        last_bit = np.uint64(m - 1 - 64 * (words - 1))
        first_mask = mask_offsets[signature]
        for word in range(words):  # column lo: no sample base consumed, row i costs i
            pv[word] = np.uint64(0xFFFFFFFFFFFFFFFF)
            mv[word] = np.uint64(0)
        score = m
        previous = cap  # the profile at column lo: all m signature bases deleted, m > errors
        falling = False
        for j in range(lo + 1, hi + 1):
            # (np.int64, not a literal: one specialization of _myers_column for both calls)
            score += _myers_column(masks, first_mask + bases[base + j - 1] * words, pv, mv, words, np.int64(0),
                                   last_bit)  # fmt: skip
            here = min(score, cap)
            # The profile's local minima (Sassy's rule): the cost of the last end is reported when costs fell
            # into its plateau and rise after it.
            if falling and here > previous and previous <= allowed:
                start = _largest_start(bases, base, masks_reversed, first_mask, back_pv, back_mv, words, last_bit, m,
                                       j - 1, previous, max(lo, j - 1 - m - previous))  # fmt: skip
                written = _edit_row(out, written, win_sample[w], signature, start, j - 1, previous, quality, base)
            falling = here < previous or (falling and here == previous)
            previous = here
        # Past the window the costs are above the errors.
        if falling and previous <= allowed:
            start = _largest_start(bases, base, masks_reversed, first_mask, back_pv, back_mv, words, last_bit, m, hi,
                                   previous, max(lo, hi - m - previous))  # fmt: skip
            written = _edit_row(out, written, win_sample[w], signature, start, hi, previous, quality, base)
    return written, last
