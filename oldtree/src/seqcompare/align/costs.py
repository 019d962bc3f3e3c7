"""Alignment costs: one minimising form that covers plain costs, edit distance and score maximisation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import validation

BASES = "ACGTN"  # codes 0..4 of seqcompare.io.sequences; substitution tables are indexed by them
BIG = np.int64(1) << np.int64(60)  # "unreachable" for integer DP; far from overflow when costs are added


@dataclass(frozen=True)
class Costs:
    """Costs minimised by a global alignment (Needleman-Wunsch with Gotoh's affine gaps).

    A gap of length L in the target direction (an insertion, a step along a row) costs
    ``insert_open + L * insert_extend``; in the query direction (deletion) ``delete_open + L * delete_extend``.
    ``substitution[x, y]`` is the cost of aligning target code x with query code y.

    Use :meth:`seed`, :meth:`edit` or :meth:`scores` rather than the constructor. ``sign`` is -1 when the costs
    are negated scores: the reported value is then ``sign * cost`` (a score to maximise).
    """

    substitution: np.ndarray
    insert_open: int = 0
    insert_extend: int = 1
    delete_open: int = 0
    delete_extend: int = 1
    sign: int = 1

    def __post_init__(self):
        table = np.asarray(self.substitution)
        if table.shape != (len(BASES), len(BASES)):
            raise ValueError(f"substitution must be a {len(BASES)} x {len(BASES)} table over {', '.join(BASES)} "
                             f"(target code, query code), not of shape {table.shape}")  # fmt: skip
        if table.dtype.kind not in "iu":
            if table.dtype.kind not in "f" or not np.array_equal(table, np.round(table)) or not np.isfinite(table).all():
                raise ValueError(f"substitution must hold integers, not {table.dtype} values")
        object.__setattr__(self, "substitution", table.astype(np.int64))
        for name in ("insert_open", "insert_extend", "delete_open", "delete_extend"):
            object.__setattr__(self, name, validation.integer(getattr(self, name), name))
        if self.sign not in (1, -1):
            raise ValueError(f"sign must be 1 or -1, not {self.sign!r}")

    @classmethod
    def seed(cls, match: int = 0, mismatch: int = 1, insertion: int = 1, deletion: int = 1) -> Costs:
        """Costs C (match), X (mismatch), I (insertion), D (deletion) to minimise (linear gaps; insertion and deletion may differ)."""
        match, mismatch, insertion, deletion = (validation.integer(value, name) for value, name in
                                                 ((match, "match"), (mismatch, "mismatch"),
                                                  (insertion, "insertion"), (deletion, "deletion")))  # fmt: skip
        table = np.full((len(BASES), len(BASES)), mismatch, dtype=np.int64)
        np.fill_diagonal(table, match)
        return cls(table, 0, insertion, 0, deletion)

    @classmethod
    def edit(cls) -> Costs:
        """Levenshtein distance: every substitution, insertion and deletion costs 1."""
        return cls.seed(0, 1, 1, 1)

    @classmethod
    def scores(cls, match: int = 1, mismatch: int = -1, gap_open: int = 0, gap_extend: int = -1,
               matrix: np.ndarray | None = None) -> Costs:  # fmt: skip
        """Score maximisation (parasail/KSW2 style): ``match``/``mismatch`` or a substitution ``matrix`` over
        A, C, G, T, N, read as ``matrix[target code, query code]``; a gap of length L scores
        ``gap_open + L * gap_extend`` (both <= 0 as usual)."""
        match, mismatch, gap_open, gap_extend = (validation.integer(value, name) for value, name in
                                                 ((match, "match"), (mismatch, "mismatch"), (gap_open, "gap_open"),
                                                  (gap_extend, "gap_extend")))  # fmt: skip
        if matrix is None:
            table = np.full((len(BASES), len(BASES)), mismatch, dtype=np.int64)
            np.fill_diagonal(table, match)
        else:
            table = np.asarray(matrix)
            if table.shape != (len(BASES), len(BASES)):
                raise ValueError(f"matrix must be {len(BASES)} x {len(BASES)} over {', '.join(BASES)}, not of shape "
                                 f"{table.shape}")  # fmt: skip
            if table.dtype.kind not in "iu" and not (table.dtype.kind == "f" and np.isfinite(table).all()
                                                     and np.array_equal(table, np.round(table))):  # fmt: skip
                raise ValueError(f"matrix must hold integers, not {table.dtype} values")
            table = table.astype(np.int64)
        return cls(-table, -int(gap_open), -int(gap_extend), -int(gap_open), -int(gap_extend), sign=-1)

    @property
    def bound(self) -> int:
        """The largest magnitude any single step can add (for overflow checks)."""
        return int(max(np.abs(self.substitution).max(), abs(self.insert_open) + abs(self.insert_extend),
                       abs(self.delete_open) + abs(self.delete_extend)))  # fmt: skip
