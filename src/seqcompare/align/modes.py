"""Alignment modes on the CPU: global, local, semi-global, infix and prefix, any alphabet and matrix, with end
and start positions, parasail's statistics and CIGARs.

The model (spec/dp.md's Gotoh recurrence, maximised; parasail's conventions): ``scores[a, b]`` scores target code
``a`` against query code ``b``; a gap of length L costs ``gap_open + (L - 1) * gap_extend``. The query runs down
the rows ``i``, the target along the columns ``j``. Ties are broken as parasail breaks them (see
:func:`~seqcompare.align.reference.mode_reference`), and the statistics follow the path parasail's ``_stats``
functions follow: at each cell the diagonal if it gives the best score, else the vertical gap, else the
horizontal one; a gap state extends unless opening is strictly better. That path is also the one the traceback
takes, so the CIGAR, the start positions and the statistics all describe one alignment.

Statistics, per pair (parasail's ``matches``, ``similar`` and ``length``, plus the aligned pairs): ``matches``
counts aligned pairs of the same code, ``similar`` pairs whose score is positive, ``pairs`` aligned pairs, and
``length`` the alignment's columns, where, as parasail counts them, gaps along the first row or column (leading
gaps of a global alignment) are not columns.

:class:`ModeScorer` is what :class:`~seqcompare.align.work.PairWork` runs: its ``cpu`` spreads pairs over threads,
its ``gpu`` runs :mod:`.modes_gpu`. The compiled kernels are in :mod:`.mode_kernels` (imported when first
needed, with Numba).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..progress import SILENT
from .alphabets import Alphabet
from .batch import cigar_string, cigar_strings, equal_work_bounds

MODE_CODES = {"global": 0, "local": 1, "semi-global": 2, "infix": 3, "prefix": 4}
MIN_LANE_PAIRS = 4  # fewer pairs of one query go to the scalar kernel (the lanes run about 10x its rate)
# The most direction codes (bytes) a group of lanes keeps to trace its pairs in its sweep: 1 kb pairs need 4 MB.
TRACE_BYTES = 1 << 27
# Pairs whose query and target together are shorter keep a path's counts in 16-bit fields of one word (the lanes).
PACKED_COUNTS_BELOW = 1 << 16
# Pairs whose query and target together are shorter, and whose scores stay within NARROW_SCORES_BELOW, take int32
# lanes (mode_pairs_lanes: twice the lanes of int64; a start is then row << 15 | column, a count word two 15-bit
# fields, and the kernel's floor -2**30).
NARROW_PATHS_BELOW = 1 << 15
NARROW_SCORES_BELOW = 1 << 29
PROFILE_BYTES = 1 << 30  # target profiles kept for reuse by other queries, at most
# Columns of the positions and counts arrays.
POSITIONS = ("target_start", "target_end", "query_start", "query_end")
COUNTS = ("matches", "similar", "pairs", "length")


@dataclass(frozen=True)
class ModeScoring:
    """What a mode alignment maximises.

    Attributes
    ----------
    mode : str
        One of :data:`MODE_CODES`.
    scores : numpy.ndarray of int64, shape (K, K)
        ``scores[target code, query code]``.
    gap_open, gap_extend : int
        A gap of length L costs ``gap_open + (L - 1) * gap_extend`` (``gap_open >= gap_extend``).
    alphabet : Alphabet
        The codes' alphabet.
    sign : int
        The reported value is ``sign * score``: -1 turns the maximised score back into a cost.
    """

    mode: str
    scores: np.ndarray
    gap_open: int
    gap_extend: int
    alphabet: Alphabet
    sign: int = 1

    @property
    def bound(self) -> int:
        """The largest magnitude one column can add to a score."""
        return int(max(np.abs(self.scores).max(initial=0), abs(self.gap_open), abs(self.gap_extend)))


def _check_start(pair: int, start_j: int, start_i: int, position) -> None:
    """A traceback must start where the scores' pass said (``position`` as :data:`POSITIONS`)."""
    if (start_j, start_i) != (position[0], position[2]):
        raise AssertionError(f"pair {pair}: the traceback starts at ({start_j}, {start_i}), the scores' pass "
                             f"at ({position[0]}, {position[2]})")  # fmt: skip


def equal_and_other_scores(table: np.ndarray, letters) -> tuple[int, int] | None:
    """``(match, mismatch)`` where ``letters`` (codes) each score ``match`` against themselves and ``mismatch``
    against each other under ``table`` (one letter: its own score twice); None where they do not, or for no
    letters."""
    among = table[np.ix_(letters, letters)]
    same, other = np.diagonal(among), among[~np.eye(len(among), dtype=bool)]
    if not same.size or (same != same[0]).any() or (other.size and (other != other[0]).any()):
        return None
    return int(same[0]), int(other[0] if other.size else same[0])


@dataclass
class ModeScorer:
    """Alignments in a mode (:class:`ModeScoring`) of pairs of codes; with ``q_reverse`` (the queries' reverse
    complements, laid out as ``q_codes``) each pair also tries the query's other strand and keeps the better
    (the forward strand on ties). With ``paths`` the start positions and counts are made too; without (and
    without CIGARs), they are -1. Both strands need the paths: a reverse alignment's end on the query as given
    is its start on the reverse complement. Without ``ends`` (nor the paths) the positions are ``(k, 0)``: the
    scores alone, which the GPU's search kernel finds faster."""

    t_codes: np.ndarray
    t_off: np.ndarray
    q_codes: np.ndarray
    q_off: np.ndarray
    scoring: ModeScoring
    cigar: bool = False
    q_reverse: np.ndarray | None = None
    paths: bool = True
    ends: bool = True

    @property
    def needs_paths(self) -> bool:
        """Whether the pass must carry the paths: asked for, or needed by CIGARs or the reverse strand."""
        return self.paths or self.cigar or self.q_reverse is not None

    def _by_query(self) -> np.ndarray:
        """The table transposed, as the scalar kernels read it (a query code's row contiguous)."""
        return np.ascontiguousarray(self.scoring.scores.T, dtype=np.int64)

    def _lanes(self, q_codes, plan, threads, report, scores, positions) -> np.ndarray:
        """Scores and ends, into ``scores`` and ``positions``, by :func:`.mode_kernels.mode_strips`: each query's
        pairs, targets sorted by length, in groups of a vector's 16-bit lanes (threads over groups); the pairs of
        queries met by fewer than :data:`MIN_LANE_PAIRS` targets in groups of lanes that each have their own
        query. Returns the pairs left out (fewer than :data:`MIN_LANE_PAIRS` of those, for the scalar kernel: a
        vector of mostly padding costs more than it gives)."""
        from .._simd import lanes_of
        from .mode_kernels import LANE_PAD, LANE_PAD_16, STRIP, mode_strips

        threads = threads or os.cpu_count() or 1
        k = len(plan)
        t_len = np.diff(self.t_off)[plan[:, 0]].astype(np.int64)
        s = self.scoring
        size = s.scores.shape[0]
        # by_query[b, a]: query code b against target code a; column `size` is the padding's. Groups whose values
        # provably stay within 16 bits run in int16 (twice the lanes a vector), the others in int32.
        # Row `size` too: the padding of the query to whole strips of rows.
        by_query = {np.int32: np.full((size + 1, size + 1), LANE_PAD, dtype=np.int32),
                    np.int16: np.full((size + 1, size + 1), LANE_PAD_16, dtype=np.int16)}  # fmt: skip
        for table in by_query.values():
            table[:size, :size] = s.scores.T
        q_len = np.diff(self.q_off)[plan[:, 1]].astype(np.int64)
        top = int(max(0, s.scores.max(initial=0)))
        lowest_score = int(max(0, -s.scores.min(initial=0)))
        order = np.lexsort((-t_len, plan[:, 1]))
        groups, left_out, start = [], [], 0
        # Cut where the query changes or the group is full. Not where target lengths fall: a lane's padding costs
        # less than the scalar kernel (31 UniProt proteins, 24 to 5,478 residues, against each other on 2 threads:
        # 1.6 s in groups padded to their longest, 2.1 s cut where lengths fell 4x, 4.6 s scalar).
        for at in range(1, k + 1):
            if at == k or plan[order[at], 1] != plan[order[start], 1] or at - start == lanes_of(np.dtype(np.int16)):
                (groups if at - start >= MIN_LANE_PAIRS else left_out).append(order[start:at])
                start = at
        # Pairs whose query few others share (pairs by order): lanes of their own queries, queries and targets of
        # like lengths together (sorted longest first), each lane's letter picking its row of the targets' profile.
        mixed = []
        if left_out:
            lone = np.concatenate(left_out)
            # Pairs whose letters all score one value against themselves and one against the others come first,
            # in groups of their own: those compare codes (see mode_strips), and one read with an N among them
            # would send its whole group the slower way.
            other_letters = ~self._equal_letter_pairs(q_codes, plan[lone])
            lone = lone[np.lexsort((-t_len[lone], -q_len[lone], other_letters))]
            width = lanes_of(np.dtype(np.int16))
            cut = len(lone) - len(lone) % width
            if len(lone) - cut < MIN_LANE_PAIRS:
                left_out = [lone[cut:]]
            else:
                left_out, cut = [], len(lone)
            mixed = [lone[a : min(a + width, cut)] for a in range(0, cut, width)]
        mode = np.int64(MODE_CODES[s.mode])
        profiles, kept = {}, [0]

        def narrow(group) -> bool:
            """Whether every value of the group's DP stays within +-2**13 (the padding's -2**13 added to it then
            stays within int16), and every column number within int16 (targets under 2**15: longer ones, with a
            short query, once wrapped local mode's target ends). Local scores are at least -(open + extend) and
            at most the shorter side times the best score. In the other modes a cell is at most that too, and at
            least what the path of two gaps gives it (every mode's cell is a maximum over paths that include that
            one): -(2 open + (n + m) extend) over the group's padded sides, with one more open below it for the gap
            states and the lowest score below it for a diagonal step before the maximum."""
            longest_t, m = int(t_len[group].max()), int(q_len[group].max())
            if longest_t >= 1 << 15:  # the lanes count columns in their own type: a target's end must fit it
                return False
            highest = min(longest_t, m) * top
            if s.mode == "local":
                reach = highest + s.gap_open + s.gap_extend
            elif min(s.gap_open, s.gap_extend) < 0:  # gaps that reward: the plain bound of a column's change
                reach = (longest_t + m + 1) * (s.bound + 1)
            else:
                lowest = 3 * s.gap_open + (longest_t + m) * s.gap_extend + lowest_score
                reach = max(highest, lowest)
            return reach < (1 << 13)

        def work(group, shared: bool = True):
            b = plan[group[0], 1]
            kind = np.int16 if narrow(group) else np.int32
            width = lanes_of(np.dtype(kind))
            if len(group) > width:  # a group of 16-bit size in 32-bit lanes: two vectors
                half = len(group) // 2
                work(group[:half], shared)
                work(group[half:], shared)
                return
            lengths = np.zeros(width, np.int64)
            lengths[: len(group)] = t_len[group]
            if not shared:
                own_queries(group, kind, width, lengths)
                return
            profile = profiles.get((kind, plan[group, 0].tobytes()))
            if profile is None:
                codes = np.full((int(lengths.max()), width), size, dtype=np.int64)  # the padding code
                for lane, a in enumerate(plan[group, 0].tolist()):
                    codes[: lengths[lane], lane] = self.t_codes[self.t_off[a] : self.t_off[a + 1]]
                # (query code, column, lane), contiguous: the kernel loads a lane vector of it a cell row. Kept
                # for the other queries of the same targets (a search meets each group once a query).
                profile = np.ascontiguousarray(by_query[kind][:, codes])
                if kept[0] + profile.nbytes <= PROFILE_BYTES:
                    profiles[(kind, plan[group, 0].tobytes())] = profile
                    kept[0] += profile.nbytes
            query = q_codes[self.q_off[b] : self.q_off[b + 1]]
            padded = np.full(-(-max(1, query.size) // STRIP) * STRIP, size, dtype=np.int64)
            padded[: query.size] = query
            shared_query = (np.empty(0, kind), np.empty(0, np.int64), np.full(width, query.size, np.int64),
                            np.empty(0, kind))  # fmt: skip
            run_lanes(group, kind, width, profile, padded, query.size, lengths, shared_query)

        def own_queries(group, kind, width, lengths):
            """The lanes of ``group``'s pairs, each with its own query: the targets' profile as for a shared query,
            and the queries' codes laid lane by lane, padded."""
            codes = np.full((int(lengths.max()), width), size, dtype=np.int64)  # the padding code
            lane_lengths = np.zeros(width, np.int64)
            lane_lengths[: len(group)] = q_len[group]
            rows = np.full((-(-max(1, int(lane_lengths.max())) // STRIP) * STRIP, width), size, dtype=kind)
            for lane, (a, b) in enumerate(plan[group].tolist()):
                codes[: lengths[lane], lane] = self.t_codes[self.t_off[a] : self.t_off[a + 1]]
                rows[: lane_lengths[lane], lane] = q_codes[self.q_off[b] : self.q_off[b + 1]]
            letters = np.flatnonzero(np.bincount(rows.reshape(-1), minlength=size + 1)[:size]).astype(np.int64)
            equal = equal_letters(letters, codes, kind)
            if equal.size:  # the targets' codes: each cell's score is a compare and a select (see mode_strips)
                profile = np.ascontiguousarray(codes.astype(kind)[None])
            else:
                profile = np.ascontiguousarray(by_query[kind][:, codes])
            run_lanes(group, kind, width, profile, np.full(rows.shape[0], size, np.int64), lane_lengths.max(), lengths,
                      (rows.reshape(-1), letters, lane_lengths, equal))  # fmt: skip

        def equal_letters(query_letters, target_codes, kind) -> np.ndarray:
            """``[match, mismatch, padding score, padding code]`` where every letter of the group scores one value
            against itself and one against every other (DNA under NUC.4.4, or match and mismatch costs), as
            :func:`.mode_kernels.mode_strips` takes them; else empty."""
            present = np.union1d(query_letters, np.flatnonzero(np.bincount(target_codes.reshape(-1),
                                                                           minlength=size + 1)[:size]))  # fmt: skip
            scores = equal_and_other_scores(s.scores, present)
            if scores is None:
                return np.empty(0, kind)
            pad = LANE_PAD_16 if kind is np.int16 else LANE_PAD
            return np.array([*scores, pad, size], dtype=kind)

        def run_lanes(group, kind, width, profile, padded, m, lengths, lanes):
            got = (np.empty(width, np.int64), np.empty(width, np.int64), np.empty(width, np.int64))
            steps = (kind(s.gap_open), kind(s.gap_extend), kind(-(1 << 14) if kind is np.int16 else -(1 << 30)), mode)
            mode_strips(profile, padded, np.int64(m), lengths, *steps, *got, *lanes)
            scores[group] = got[0][: len(group)]
            positions[group, 1] = got[1][: len(group)]
            positions[group, 3] = got[2][: len(group)]
            report.update(len(group))

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, groups))
            list(pool.map(lambda group: work(group, shared=False), mixed))
        return np.concatenate(left_out) if left_out else np.zeros(0, np.int64)

    def _equal_letter_pairs(self, q_codes, pairs, scored: bool = False):
        """Whether each pair (rows of ``pairs``: target, query) holds only letters of the largest set, taken
        greedily from the most frequent letter down, whose members score one value against themselves and one
        against each other (A, C, G and T under NUC.4.4, not N); with ``scored``, also those two values
        (``(match, mismatch)``, None for no letters)."""
        table = self.scoring.scores
        size = table.shape[0]

        def sample(codes):  # the letters' order only steers the choice: a million codes a side tell it
            return codes[:: max(1, codes.size // (1 << 20))]

        counts = (np.bincount(sample(self.t_codes), minlength=size)[:size]
                  + np.bincount(sample(q_codes), minlength=size)[:size])  # fmt: skip
        chosen: list = []
        for letter in np.argsort(-counts, kind="stable").tolist():
            if counts[letter] == 0:
                break
            if equal_and_other_scores(table, chosen + [letter]) is not None:
                chosen.append(letter)
        outside = np.ones(256, dtype=np.uint8)
        outside[chosen] = 0
        translation = outside.tobytes()

        def clean(codes, offsets, which):
            """Whether sequences ``which`` hold none of the other letters (counted between their offsets). Codes
            are bytes: ``bytes.translate`` marks them in one C pass (NumPy's indexing would widen each to 8)."""
            marks = np.ascontiguousarray(codes, np.uint8).tobytes().translate(translation)
            marked = np.flatnonzero(np.frombuffer(marks, np.uint8))
            return np.searchsorted(marked, offsets[which + 1]) == np.searchsorted(marked, offsets[which])

        found = clean(self.t_codes, self.t_off, pairs[:, 0]) & clean(q_codes, self.q_off, pairs[:, 1])
        return (found, equal_and_other_scores(table, chosen) if chosen else None) if scored else found

    def _strand(self, q_codes, plan, threads, report):
        threads = threads or os.cpu_count() or 1
        k = len(plan)
        scores = np.empty(k, np.int64)
        positions = np.full((k, 4), -1, np.int64)
        counts = np.full((k, 4), -1, np.int64)
        traced = np.full(k, None, dtype=object)  # CIGARs traced in the lanes' sweep (None: not traced there)
        if k == 0:
            return scores, positions, counts, traced
        from .mode_kernels import (LANE_LIMIT, NARROW_PATH_LANES, PATH_LANES, mode_pairs, mode_pairs_lanes,
                                   mode_scores)  # fmt: skip

        t_len, q_len = np.diff(self.t_off)[plan[:, 0]], np.diff(self.q_off)[plan[:, 1]]
        paths = self.needs_paths
        reach = (int((t_len + q_len).max()) + 1) * (self.scoring.bound + 1)
        rest = np.arange(k)
        if not paths and reach < LANE_LIMIT and k >= MIN_LANE_PAIRS:
            # Queries met by several targets: lanes that share a query vectorise (see mode_strips); the rest below.
            rest = self._lanes(q_codes, plan, threads, report, scores, positions)
            if not rest.size:
                return scores, positions, counts, traced
        lanes = 0
        # Paths in int32 lanes (twice as many a vector) where every pair's query and target together are shorter
        # than NARROW_PATHS_BELOW, no score can reach 2**29 (a start and a count word then hold two 15-bit
        # fields) and the pairs fill a group of them; else int64 lanes (fewer pairs: not the one-pair kernel).
        together = int((t_len[rest] + q_len[rest]).max(initial=0))  # the longest pair, query and target
        narrow = rest.size >= NARROW_PATH_LANES and reach < NARROW_SCORES_BELOW and together < NARROW_PATHS_BELOW
        s = self.scoring
        equal = np.zeros(0, np.int64)
        clean_pairs = 0  # the first pairs of ``rest`` that take ``equal``; the others the table's scores
        if paths and rest.size >= (NARROW_PATH_LANES if narrow else PATH_LANES):
            # Paths in lanes of pairs (mode_pairs_lanes), pairs of like lengths side by side: chunks of whole
            # groups, each group's work its longest target times its longest query.
            rest = rest[np.lexsort((q_len[rest], t_len[rest]))]
            lanes = NARROW_PATH_LANES if narrow else PATH_LANES
            # Scores by a compare of the codes where every letter present scores match or mismatch; where some
            # pairs hold another letter (an N among A, C, G and T), the others still do, in groups of their own.
            letters = np.flatnonzero(np.bincount(self.t_codes, minlength=s.scores.shape[0])[: s.scores.shape[0]]
                                     + np.bincount(q_codes, minlength=s.scores.shape[0])[: s.scores.shape[0]])
            scored = equal_and_other_scores(s.scores, letters)
            if scored is not None:
                equal, clean_pairs = np.array(scored, np.int64), rest.size
            else:
                clean, scored = self._equal_letter_pairs(q_codes, plan[rest], scored=True)
                if scored is not None and clean.sum() >= lanes:
                    rest = np.concatenate([rest[clean], rest[~clean]])  # each part still sorted by lengths
                    equal, clean_pairs = np.array(scored, np.int64), int(clean.sum())
            bounds = []
            for lo, hi in ((0, clean_pairs), (clean_pairs, rest.size)):  # no group holds pairs of both parts
                if hi > lo:
                    part_pairs = rest[lo:hi]
                    groups = np.arange(0, hi - lo, lanes)
                    work = (np.maximum.reduceat(t_len[part_pairs], groups)
                            * np.maximum(np.maximum.reduceat(q_len[part_pairs], groups), 1) + 1)  # fmt: skip
                    bounds += [lo + min(hi - lo, b * lanes) for b in equal_work_bounds(work, threads)]
            bounds = sorted(set(bounds))
        else:
            bounds = equal_work_bounds(t_len[rest] * np.maximum(q_len[rest], 1) + 1, threads)
        pair_t, pair_q = np.ascontiguousarray(plan[rest, 0]), np.ascontiguousarray(plan[rest, 1])
        by_query = self._by_query()
        # The kernels write the pairs they are given in order: the rest's own arrays, put back after.
        part = (np.empty(rest.size, np.int64), np.full((rest.size, 4), -1, np.int64),
                np.full((rest.size, 4), -1, np.int64))  # fmt: skip
        steps = (by_query, np.int64(s.gap_open), np.int64(s.gap_extend), np.int64(MODE_CODES[s.mode]), *part[:2])
        # CIGARs: the lanes keep each cell's direction and trace every pair back in their sweep (no second pass),
        # where a group's directions fit TRACE_BYTES; the rest are traced one pair at a time (_cigars).
        trace = bool(lanes and self.cigar)
        ops_end = np.cumsum(t_len[rest] + q_len[rest]) if trace else np.zeros(0, np.int64)
        ops = np.empty(int(ops_end[-1]) if trace and ops_end.size else 0, np.uint8)
        ops_first = np.full((rest.size if trace else 0, 3), -1, np.int64)
        tracing = (np.int64(TRACE_BYTES if trace else 0), ops, ops_end, ops_first)
        # A path's four counts in one word of 16-bit fields where no path can reach 2**16 columns.
        packed = bool(lanes) and not narrow and together < PACKED_COUNTS_BELOW
        lane_type = np.zeros(1, np.int32 if narrow else np.int64)
        by_table = np.zeros(0, np.int64)

        def chunk(first, last):
            if lanes:
                mode_pairs_lanes(self.t_codes, self.t_off, q_codes, self.q_off, pair_t, pair_q, first, last, *steps,
                                 part[2], *tracing, equal if first < clean_pairs else by_table, packed,
                                 lane_type)  # fmt: skip
            elif paths:
                mode_pairs(self.t_codes, self.t_off, q_codes, self.q_off, pair_t, pair_q, first, last, *steps, part[2])
            else:
                mode_scores(self.t_codes, self.t_off, q_codes, self.q_off, pair_t, pair_q, first, last, *steps)
            report.update(last - first)

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(chunk, bounds[:-1], bounds[1:]))
        scores[rest], positions[rest], counts[rest] = part
        if trace:
            done = np.flatnonzero(ops_first[:, 0] >= 0)
            for at in done:
                _check_start(rest[at], ops_first[at, 2], ops_first[at, 1], positions[rest[at]])
            traced[rest[done]] = cigar_strings(ops, ops_first[done, 0], ops_end[done])
        return scores, positions, counts, traced

    def cpu(self, plan: np.ndarray, threads: int | None, report=SILENT):
        """``(scores, positions (k, 4), counts (k, 4), reverse (k,), CIGARs)`` of ``plan``'s pairs: raw
        maximised scores; positions as :data:`POSITIONS` (0-based, inclusive; an empty alignment starts one past
        its end); counts as :data:`COUNTS`; reverse True where the query's reverse complement aligned (its
        positions are then on the query as given)."""
        scores, positions, counts, traced = self._strand(self.q_codes, plan, threads, report)
        if not (self.ends or self.needs_paths):
            positions = positions[:, :0]  # the kernels found the ends anyway; the GPU's scores-only pass does not
        return self._finish(plan, scores, positions, counts, threads, self._strand_runner(threads), traced=traced)

    def _strand_runner(self, threads):
        return lambda plan: self._strand(self.q_reverse, plan, threads, SILENT)

    def _finish(self, plan, scores, positions, counts, threads, other_strand, gpu: bool = False, traced=None):
        """Both strands' better (where the reverse one is asked for), and the CIGARs: those ``traced`` (the CPU's
        lanes trace their pairs in their sweep; None where they did not) and the rest by traceback."""
        reverse = np.zeros(len(plan), dtype=bool)
        if self.q_reverse is not None and len(plan):
            r_scores, r_positions, r_counts, *r_traced = other_strand(plan)
            reverse = r_scores > scores
            scores = np.where(reverse, r_scores, scores)
            positions = np.where(reverse[:, None], r_positions, positions)
            counts = np.where(reverse[:, None], r_counts, counts)
            if traced is not None:
                traced = np.where(reverse, r_traced[0], traced)
        cigars = np.empty(0, dtype=object)
        if self.cigar:
            if traced is None:
                traced = np.full(len(plan), None, dtype=object)
            missing = np.flatnonzero(np.equal(traced, None))
            cigars = traced.copy()
            if missing.size:
                cigars[missing] = (self._gpu_cigars if gpu else self._cigars)(plan[missing], scores[missing],
                                                                             positions[missing], reverse[missing],
                                                                             threads)  # fmt: skip
        if reverse.any():  # the reverse strand's query positions, on the query as given
            q_len = np.diff(self.q_off)[plan[:, 1]]
            start, end = positions[:, 2].copy(), positions[:, 3].copy()
            positions[:, 2] = np.where(reverse, q_len - 1 - end, start)
            positions[:, 3] = np.where(reverse, q_len - 1 - start, end)
        return scores, positions, counts, reverse, cigars

    def _gpu_cigars(self, plan, scores, positions, reverse, threads) -> np.ndarray:
        """CIGARs by traceback on the GPU (each strand's pairs in one call), checked as :meth:`_cigars` checks."""
        from .modes_gpu import traceback_on_gpu

        s = self.scoring
        cigars = np.empty(len(plan), dtype=object)
        for strand in (False, True):
            chosen = np.flatnonzero(reverse == strand)
            if not chosen.size:
                continue
            q_codes = self.q_reverse if strand else self.q_codes
            found, end_scores, starts = traceback_on_gpu(
                self.t_codes, self.t_off, q_codes, self.q_off, plan[chosen], s.scores, s.gap_open, s.gap_extend,
                s.gap_open, s.gap_extend, MODE_CODES[s.mode], positions[chosen, 3] + 1, positions[chosen, 1] + 1)
            expected = np.stack([positions[chosen, 2], positions[chosen, 0]], axis=1)
            if not (np.array_equal(starts, expected) and np.array_equal(end_scores, scores[chosen])):
                raise AssertionError("the GPU's traceback does not start or score where the scores' pass said")
            cigars[chosen] = found
        return cigars

    def _cigars(self, plan, scores, positions, reverse, threads) -> np.ndarray:
        """CIGARs by traceback (threads over pairs), each checked to start where the scores' pass said."""
        from .mode_kernels import mode_traceback

        s = self.scoring
        by_query = self._by_query()
        steps = (np.int64(s.gap_open), np.int64(s.gap_extend), np.int64(MODE_CODES[s.mode]))

        def one(k):
            a, b = plan[k]
            t = self.t_codes[self.t_off[a] : self.t_off[a + 1]]
            codes = self.q_reverse if reverse[k] else self.q_codes
            q = codes[self.q_off[b] : self.q_off[b + 1]]
            end_i, end_j = positions[k, 3] + 1, positions[k, 1] + 1
            ops = np.empty(end_i + end_j, np.uint8)
            at, start_i, start_j = mode_traceback(t, q, by_query, *steps, np.int64(end_i), np.int64(end_j), ops)
            _check_start(k, start_j, start_i, positions[k])
            return cigar_string(ops[at:])

        with ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
            return np.array(list(pool.map(one, range(len(plan)))) + [None], dtype=object)[:-1]

    def gpu(self, plan: np.ndarray):
        """As :meth:`cpu`, on the GPU (:mod:`.modes_gpu`): the scores' pass, and the CIGARs by traceback there."""
        from .modes_gpu import mode_pairs_on_gpu

        s = self.scoring
        paths = self.needs_paths
        run = lambda q_codes, plan: mode_pairs_on_gpu(self.t_codes, self.t_off, q_codes, self.q_off, plan,  # noqa: E731
                                                      s.scores, s.gap_open, s.gap_extend, MODE_CODES[s.mode], paths,
                                                      self.ends)  # fmt: skip
        scores, positions, counts = run(self.q_codes, plan)
        return self._finish(plan, scores, positions, counts, None, lambda plan: run(self.q_reverse, plan), gpu=True)
