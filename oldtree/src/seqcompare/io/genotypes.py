"""Biallelic genotypes from VCF, PLINK 1 binary and CoMet's packed binary, in CoMet's 2-bit codes.

Every reader returns one :class:`Genotypes`: a ``(n_vectors, n_fields)`` uint8 matrix with one vector per
SNP and one field per individual, plus the names needed to report results.

Codes
-----
The two alleles of a SNP are ordered alphabetically (CoMet's rule): allele 0 is the alphabetically first
letter, allele 1 the later one, whichever of them is the reference. A VCF site with REF=G ALT=A therefore
has allele 0 = A (the ALT), and its genotype ``0/0`` is "two copies of allele 1".

- diploid (ploidy 2, CoMet's CCC method): 0 = two copies of allele 0, 1 = one copy of each,
  3 = two copies of allele 1, 2 = missing;
- haploid (ploidy 1, CoMet's DUO method): 0 = allele 0, 1 = allele 1, 2 = missing.

VCF lines are split in Python (one loop step per record, never per genotype); each record's genotypes
are decoded by NumPy over the line's bytes. PLINK and CoMet files are decoded through 256-entry lookup
tables, one table row per packed byte.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

import numpy as np

from .._jit import jit
from ..errors import InputError
from .fasta import read_bytes

# Allele-1 count (shifted by one, so missing = -1 lands at index 0) -> code.
_COUNT_TO_CODE = {
    1: np.array([2, 0, 1], dtype=np.uint8),
    2: np.array([2, 0, 1, 3], dtype=np.uint8),
}


@jit
def _codes_from_counts(counts, table, out) -> int:
    """``out[v, f] = table[counts[v, f] + 1]`` in one pass; the flat index of the first count outside
    ``-1 .. len(table) - 2``, or -1 when there is none."""
    n_vectors, n_fields = counts.shape
    top = table.shape[0] - 2
    for v in range(n_vectors):
        for f in range(n_fields):
            count = counts[v, f]
            if count < -1 or count > top:
                return v * n_fields + f
            out[v, f] = table[count + 1]
    return -1


# Code -> allele-1 count, -1 for missing; the haploid table has no entry for code 3 (checked separately).
_CODE_TO_COUNT = {
    1: np.array([0, 1, -1, -1], dtype=np.int8),
    2: np.array([0, 1, -1, 2], dtype=np.int8),
}

_BASES = frozenset("ACGT")

_TAB, _COLON, _SLASH, _PIPE, _DOT, _ZERO, _ONE = (ord(c) for c in "\t:/|.01")


def _default_names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(n)]


@dataclass
class Genotypes:
    """Biallelic genotype vectors (one per SNP) in CoMet's 2-bit codes.

    Diploid codes (``ploidy == 2``, the CCC method): 0 = two copies of allele 0, 1 = one copy of each,
    3 = two copies of allele 1, 2 = missing. Haploid codes (``ploidy == 1``, the DUO method): 0 = allele 0,
    1 = allele 1, 2 = missing. Allele 0 is the alphabetically first of the SNP's two letters.

    Attributes
    ----------
    codes : ndarray of uint8, shape (n_vectors, n_fields)
        The 2-bit codes, one row per SNP, C-contiguous.
    names : list of str
        Per vector: the SNP ID (VCF ID column, or ``'CHROM:POS'`` where the ID is ``'.'``; PLINK .bim ID).
    alleles : list of tuple of (str, str)
        Per vector: ``(allele 0, allele 1)``, alphabetically ordered.
    samples : list of str
        Per field: the individual's name.
    ploidy : int
        2 (diploid) or 1 (haploid).
    source : str
        Where the data came from, for messages.
    skipped : int
        Records the reader skipped (multi-allelic sites, records that are not single-base SNPs).
    """

    codes: np.ndarray
    names: list[str]
    alleles: list[tuple[str, str]]
    samples: list[str]
    ploidy: int
    source: str
    skipped: int = 0

    def __post_init__(self):
        if self.ploidy not in (1, 2):
            raise ValueError(f"ploidy must be 1 or 2, not {self.ploidy!r}")
        codes = np.ascontiguousarray(self.codes, dtype=np.uint8)
        if codes.ndim != 2:
            raise ValueError(f"codes must be 2-D (n_vectors, n_fields), not {codes.ndim}-D")
        self.codes = codes
        n_vectors, n_fields = codes.shape
        for label, values, expected in (
            ("names", self.names, n_vectors),
            ("alleles", self.alleles, n_vectors),
            ("samples", self.samples, n_fields),
        ):
            if len(values) != expected:
                axis = "fields" if label == "samples" else "vectors"
                raise ValueError(f"{len(values)} {label} given for {expected} {axis}")

    @property
    def n_vectors(self) -> int:
        return self.codes.shape[0]

    @property
    def n_fields(self) -> int:
        return self.codes.shape[1]

    @classmethod
    def from_counts(cls, counts, *, ploidy: int = 2, names=None, samples=None, alleles=None) -> Genotypes:
        """Build genotypes from allele-1 copy counts.

        Parameters
        ----------
        counts : array_like of int, shape (n_vectors, n_fields)
            Copies of allele 1 per vector and field, ``0..ploidy``, or -1 for missing.
        ploidy : {2, 1}
            2 for diploid (CCC) data, 1 for haploid (DUO) data.
        names : list of str, optional
            Vector names; default ``"snp1", "snp2", ...``.
        samples : list of str, optional
            Field names; default ``"sample1", "sample2", ...``.
        alleles : list of (str, str), optional
            Per-vector allele letters; default ``("A", "B")`` for every vector.

        Returns
        -------
        Genotypes
            With ``source`` ``"<array>"`` and ``skipped`` 0.

        Raises
        ------
        ValueError
            If ``counts`` is not a 2-D integer array, or holds a value outside ``-1..ploidy`` (the message
            names the first such value and its (vector, field)), or a name list has the wrong length.
        """
        if ploidy not in (1, 2):
            raise ValueError(f"ploidy must be 1 or 2, not {ploidy!r}")
        counts = np.asarray(counts)
        if counts.ndim != 2:
            raise ValueError(f"counts must be 2-D (n_vectors, n_fields), not {counts.ndim}-D")
        if counts.size and not (np.issubdtype(counts.dtype, np.integer) or counts.dtype == np.bool_):
            raise ValueError(f"counts must be integers, not {counts.dtype}")
        if counts.dtype == np.bool_ or counts.dtype.kind == "u" and counts.dtype.itemsize == 8:
            counts = counts.astype(np.int64)  # uint64 and int arithmetic would mix into floats in Numba
        codes = np.empty(counts.shape, dtype=np.uint8)
        bad = _codes_from_counts(counts, _COUNT_TO_CODE[ploidy], codes) if counts.size else -1
        if bad >= 0:
            vector, field = divmod(bad, counts.shape[1])
            raise ValueError(
                f"count {counts[vector, field]} at (vector {vector}, field {field}) is not an allele-1 count "
                f"for ploidy {ploidy} (expected 0..{ploidy}, or -1 for missing)"
            )
        n_vectors, n_fields = counts.shape
        return cls(
            codes=codes,
            names=list(names) if names is not None else _default_names("snp", n_vectors),
            alleles=[tuple(a) for a in alleles] if alleles is not None else [("A", "B")] * n_vectors,
            samples=list(samples) if samples is not None else _default_names("sample", n_fields),
            ploidy=ploidy,
            source="<array>",
        )

    def allele_counts(self) -> np.ndarray:
        """Copies of allele 1 per vector and field, -1 for missing (the inverse of :meth:`from_counts`).

        Returns
        -------
        ndarray of int8, shape (n_vectors, n_fields)

        Raises
        ------
        ValueError
            If a haploid matrix holds code 3, which has no haploid meaning.
        """
        if self.ploidy == 1 and (self.codes == 3).any():
            vector, field = (int(i) for i in np.argwhere(self.codes == 3)[0])
            raise ValueError(
                f"{self.source}: code 3 at (vector {vector}, field {field}) is not a haploid code"
            )
        return _CODE_TO_COUNT[self.ploidy][self.codes]


# --------------------------------------------------------------------------------------------------- VCF


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


class _VcfRecordError(Exception):
    """Raised by the per-record decoder; the reader adds file, line and SNP ID to the message."""


def _explain_bad_genotype(token: bytes, sample: str) -> str:
    """Why ``token`` (a genotype the fast checks rejected) cannot be used. Runs once, on the error path."""
    gt = _text(token.split(b":", 1)[0])
    if not gt:
        return f"sample '{sample}' has an empty genotype"
    alleles = gt.replace("|", "/").split("/")
    for allele in alleles:
        if allele == ".":
            continue
        if not allele.isdigit():
            return f"sample '{sample}' has a malformed genotype '{gt}'"
        if int(allele) > 1:
            return (
                f"sample '{sample}' has allele index {int(allele)} in genotype '{gt}', "
                "but the site has only alleles 0 and 1"
            )
    if len(alleles) > 2:
        return (
            f"sample '{sample}' has genotype '{gt}' with ploidy {len(alleles)}; "
            "only haploid and diploid genotypes are supported"
        )
    return f"sample '{sample}' has a malformed genotype '{gt}'"


def _decode_fixed_width(line: np.ndarray, n: int):
    """Fast path: every genotype is exactly ``0|1``-like (3 bytes) or ``0``-like (1 byte), tab-separated.

    Returns ``(alt_count, missing, token_ploidy)`` or None when the line does not fit (the general path then
    decides, and reports any error). Appending the tab lets the line be viewed as an (n, width + 1) matrix.
    """
    for width in (3, 1):
        if line.size != n * (width + 1) - 1:
            continue
        grid = np.empty(n * (width + 1), dtype=np.uint8)
        grid[:-1] = line
        grid[-1] = _TAB
        grid = grid.reshape(n, width + 1)
        if not (grid[:, width] == _TAB).all():
            return None
        first = grid[:, 0]
        if not ((first == _ZERO) | (first == _ONE) | (first == _DOT)).all():
            return None
        if width == 1:
            missing = first == _DOT
            return (first == _ONE).astype(np.int8), missing, np.where(missing, 0, 1).astype(np.int8)
        sep, second = grid[:, 1], grid[:, 2]
        if not ((sep == _SLASH) | (sep == _PIPE)).all():
            return None
        if not ((second == _ZERO) | (second == _ONE) | (second == _DOT)).all():
            return None
        missing = (first == _DOT) | (second == _DOT)
        alt = (first == _ONE).astype(np.int8) + (second == _ONE)
        # A wholly missing './.' fits any ploidy; a half-missing '0/.' is still diploid.
        ploidy = np.where((first == _DOT) & (second == _DOT), 0, 2).astype(np.int8)
        return alt, missing, ploidy
    return None


def _decode_general(line: np.ndarray, raw: bytes, samples: list[str]):
    """General path: genotypes of any width with trailing ``:``-separated fields, decoded with NumPy.

    Each token's GT ends at its first ':' or tab; GT widths 1 and 3 are the only legal ones, so any other
    token is an error, explained by :func:`_explain_bad_genotype`.
    """
    size = line.size
    tabs = np.flatnonzero(line == _TAB)
    starts = np.empty(tabs.size + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = tabs + 1
    delimiters = np.append(np.flatnonzero((line == _TAB) | (line == _COLON)), size)
    gt_len = delimiters[np.searchsorted(delimiters, starts)] - starts

    # A short last token would be read past the line's end: pad it; gt_len rules out what the pad supplies.
    padded = np.append(line, np.zeros(3, dtype=np.uint8))
    first, sep, second = padded[starts], padded[starts + 1], padded[starts + 2]
    first_ok = (first == _ZERO) | (first == _ONE) | (first == _DOT)
    second_ok = (second == _ZERO) | (second == _ONE) | (second == _DOT)
    diploid = (gt_len == 3) & ((sep == _SLASH) | (sep == _PIPE)) & second_ok
    good = first_ok & (diploid | (gt_len == 1))
    if not good.all():
        bad = int(np.argmin(good))
        token_end = int(tabs[bad]) if bad < tabs.size else size
        raise _VcfRecordError(_explain_bad_genotype(raw[int(starts[bad]) : token_end], samples[bad]))
    second_dot = diploid & (second == _DOT)
    missing = (first == _DOT) | second_dot
    alt = (first == _ONE).astype(np.int8) + (diploid & (second == _ONE))
    ploidy = np.where(diploid, 2, 1).astype(np.int8)
    ploidy[(first == _DOT) & (~diploid | second_dot)] = 0
    return alt, missing, ploidy


def read_vcf(path: str | os.PathLike, *, strict: bool = False) -> Genotypes:
    """Read the biallelic SNPs of a VCF file (plain or gzip) as CoMet genotype codes.

    Parameters
    ----------
    path : str or path-like
        The VCF file; gzip (including bgzip) is detected from the content.
    strict : bool
        If True, a record that is not a biallelic single-base SNP is an error instead of being skipped.

    Returns
    -------
    Genotypes
        One vector per kept record, one field per sample; ``skipped`` counts the records left out.

    Raises
    ------
    InputError
        If the file is missing, empty or has no ``#CHROM`` header; if a kept record's FORMAT does not start
        with GT, a genotype is malformed, uses an allele index other than 0 and 1, has ploidy 3 or more, or
        differs in ploidy from the rest of the file; if a record has a different number of samples from the
        header; if no record is kept; and (``strict``) on the first record that would be skipped.
        Messages name the file, the line number and the SNP ID, and the sample where one is at fault.
    """
    path = os.fspath(path)
    buffer = read_bytes(path)
    data = bytes(buffer)
    if isinstance(buffer, mmap.mmap):
        buffer.close()
    # isspace() stops at the first other byte; strip() would copy the whole image.
    if not data or data.isspace():
        raise InputError(f"{path}: empty file")

    lines = data.split(b"\n")
    del data
    header = None
    samples: list[str] = []
    counts_rows: list[np.ndarray] = []
    names: list[str] = []
    alleles: list[tuple[str, str]] = []
    skip_reasons = {"multi-allelic site": 0, "not a SNP": 0}
    file_ploidy = 0
    ploidy_origin = ""
    n_records = 0

    for index, raw_line in enumerate(lines):
        line_no = index + 1
        if raw_line.endswith(b"\r"):
            raw_line = raw_line[:-1]
        if not raw_line:
            continue
        if header is None:
            if raw_line.startswith(b"#CHROM"):
                header = raw_line.split(b"\t")
                if len(header) < 10 or header[8] != b"FORMAT":
                    raise InputError(
                        f"{path}: line {line_no}: the header has no FORMAT column and sample columns, "
                        "so the file holds no genotypes"
                    )
                samples = [_text(name) for name in header[9:]]
                continue
            if raw_line.startswith(b"#"):
                continue
            raise InputError(
                f"{path}: line {line_no}: record before the '#CHROM' header line (not a VCF file?)"
            )
        if raw_line.startswith(b"#"):
            continue

        n_records += 1
        fields = raw_line.split(b"\t", 9)
        snp_id = _text(fields[2]) if len(fields) > 2 else "?"
        if snp_id == "." and len(fields) > 1:
            snp_id = f"{_text(fields[0])}:{_text(fields[1])}"
        where = f"{path}: line {line_no} ({snp_id})"
        n_here = fields[9].count(b"\t") + 1 if len(fields) == 10 else 0
        if n_here != len(samples):
            raise InputError(f"{where}: has {n_here} samples, the header has {len(samples)}")

        ref, alt = _text(fields[3]).upper(), _text(fields[4]).upper()
        reason = None
        if "," in alt:
            reason = "multi-allelic site"
        elif ref not in _BASES or alt not in _BASES or ref == alt:
            reason = "not a SNP"
        if reason is not None:
            if strict:
                raise InputError(
                    f"{where}: {reason} (REF '{ref}', ALT '{alt}'); strict mode keeps only biallelic SNPs"
                )
            skip_reasons[reason] += 1
            continue
        if fields[8].split(b":", 1)[0] != b"GT":
            raise InputError(f"{where}: FORMAT '{_text(fields[8])}' does not start with GT")

        genotype_bytes = fields[9]
        line = np.frombuffer(genotype_bytes, dtype=np.uint8)
        try:
            decoded = _decode_fixed_width(line, len(samples))
            if decoded is None:
                decoded = _decode_general(line, genotype_bytes, samples)
        except _VcfRecordError as exc:
            raise InputError(f"{where}: {exc}") from None
        alt_count, missing, token_ploidy = decoded

        if file_ploidy == 0:
            known = np.flatnonzero(token_ploidy)
            if known.size:
                file_ploidy = int(token_ploidy[known[0]])
                ploidy_origin = f"line {line_no}, sample '{samples[known[0]]}'"
        if file_ploidy:
            clash = (token_ploidy != 0) & (token_ploidy != file_ploidy)
            if clash.any():
                s = int(np.argmax(clash))
                kind = {1: "haploid", 2: "diploid"}
                this = kind[int(token_ploidy[s])]
                raise InputError(
                    f"{where}: sample '{samples[s]}' has a {this} genotype but the file's first genotype "
                    f"({ploidy_origin}) is {kind[file_ploidy]}: mixed ploidy is not supported"
                )

        # Allele 1 is the alphabetically later letter: when that is REF, count REF copies instead of ALT.
        if ref > alt:
            alt_count = token_ploidy - alt_count
        counts = alt_count.astype(np.int8)
        counts[missing] = -1
        counts_rows.append(counts)
        names.append(snp_id)
        alleles.append((min(ref, alt), max(ref, alt)))

    if header is None:
        raise InputError(f"{path}: no '#CHROM' header line (not a VCF file?)")
    if n_records == 0:
        raise InputError(f"{path}: no records after the header")
    skipped = sum(skip_reasons.values())
    if not counts_rows:
        why = ", ".join(f"{reason}: {count}" for reason, count in skip_reasons.items() if count)
        raise InputError(f"{path}: no biallelic SNP records: all {skipped} records were skipped ({why})")

    ploidy = file_ploidy or 2
    codes = _COUNT_TO_CODE[ploidy][np.stack(counts_rows).astype(np.intp) + 1]
    return Genotypes(
        codes=codes, names=names, alleles=alleles, samples=samples, ploidy=ploidy,
        source=os.path.basename(path), skipped=skipped,
    )


# ------------------------------------------------------------------------------------------------- PLINK


def _plink_tables() -> tuple[np.ndarray, np.ndarray]:
    """(256, 4) code tables for .bed bytes: as stored, and with the .bim's two alleles swapped."""
    # PLINK 2-bit values: 00 hom allele A1 (column 5), 01 missing, 10 het, 11 hom A2 (column 6).
    a2_is_allele1 = np.array([0, 2, 1, 3], dtype=np.uint8)
    a1_is_allele1 = np.array([3, 2, 1, 0], dtype=np.uint8)
    pairs = (np.arange(256)[:, None] >> (2 * np.arange(4))[None, :]) & 3
    return a2_is_allele1[pairs], a1_is_allele1[pairs]


_PLINK_AS_IS, _PLINK_SWAPPED = _plink_tables()
_BED_MAGIC = b"\x6c\x1b"


def _read_text_lines(path: str) -> list[tuple[int, list[str]]]:
    buffer = read_bytes(path)
    text = _text(bytes(buffer))
    if isinstance(buffer, mmap.mmap):
        buffer.close()
    return [(i + 1, line.split()) for i, line in enumerate(text.splitlines()) if line.strip()]


def read_plink(prefix_or_bed_path: str | os.PathLike) -> Genotypes:
    """Read a PLINK 1 binary fileset (``.bed``, ``.bim``, ``.fam``) as diploid CoMet genotype codes.

    Parameters
    ----------
    prefix_or_bed_path : str or path-like
        The fileset's prefix, or the path of any one of its three files.

    Returns
    -------
    Genotypes
        Ploidy 2, one vector per .bim line (named by its ID column), one field per .fam line (named by IID).
        Alleles are upper-cased and ordered alphabetically, so a .bim whose allele 1 sorts after its allele 2
        has its genotypes recoded accordingly.

    Raises
    ------
    InputError
        If a file is missing, a .bim or .fam line has too few columns, the .bed lacks the PLINK magic bytes,
        is individual-major, or its size disagrees with the SNP and sample counts.
    """
    prefix = os.fspath(prefix_or_bed_path)
    root, extension = os.path.splitext(prefix)
    if extension.lower() in (".bed", ".bim", ".fam"):
        prefix = root
    bed_path, bim_path, fam_path = (prefix + ext for ext in (".bed", ".bim", ".fam"))

    names, alleles, swap = [], [], []
    for line_no, cols in _read_text_lines(bim_path):
        if len(cols) < 6:
            raise InputError(
                f"{bim_path}: line {line_no}: expected 6 columns (chrom, id, cM, pos, a1, a2), "
                f"got {len(cols)}"
            )
        a1, a2 = cols[4].upper(), cols[5].upper()
        names.append(cols[1])
        alleles.append((min(a1, a2), max(a1, a2)))
        swap.append(a1 > a2)
    samples = []
    for line_no, cols in _read_text_lines(fam_path):
        if len(cols) < 6:
            raise InputError(
                f"{fam_path}: line {line_no}: expected 6 columns (FID IID father mother sex phenotype), "
                f"got {len(cols)}"
            )
        samples.append(cols[1])
    if not names:
        raise InputError(f"{bim_path}: no SNPs (empty .bim file)")
    if not samples:
        raise InputError(f"{fam_path}: no samples (empty .fam file)")

    buffer = read_bytes(bed_path)
    bed = np.frombuffer(buffer, dtype=np.uint8).copy() if len(buffer) else np.empty(0, dtype=np.uint8)
    if isinstance(buffer, mmap.mmap):
        buffer.close()
    if bed.size < 3 or bytes(bed[:2]) != _BED_MAGIC:
        raise InputError(f"{bed_path}: not a PLINK 1 .bed file (no magic bytes 0x6c 0x1b)")
    if bed[2] != 1:
        raise InputError(
            f"{bed_path}: mode byte 0x{bed[2]:02x} is not SNP-major (0x01); "
            "only SNP-major .bed files are supported"
        )
    n_snps, n_samples = len(names), len(samples)
    per_snp = (n_samples + 3) // 4
    body, expected = bed[3:], n_snps * per_snp
    if body.size != expected:
        problem = "is truncated" if body.size < expected else "has extra bytes"
        raise InputError(
            f"{bed_path}: {problem}: {body.size} genotype bytes, expected {expected} "
            f"({n_snps} SNPs in {os.path.basename(bim_path)} x {per_snp} bytes for "
            f"{n_samples} samples in {os.path.basename(fam_path)})"
        )
    packed = body.reshape(n_snps, per_snp)
    codes = _PLINK_AS_IS[packed].reshape(n_snps, per_snp * 4)[:, :n_samples]
    swap_rows = np.asarray(swap, dtype=bool)
    if swap_rows.any():
        codes[swap_rows] = _PLINK_SWAPPED[packed[swap_rows]].reshape(-1, per_snp * 4)[:, :n_samples]
    return Genotypes(
        codes=np.ascontiguousarray(codes), names=names, alleles=alleles, samples=samples, ploidy=2,
        source=os.path.basename(bed_path),
    )


# ------------------------------------------------------------------------------------------ CoMet binary

# Element e of a packed byte is (byte >> 2e) & 3, so unpacking is one table lookup per byte.
_COMET_UNPACK = ((np.arange(256)[:, None] >> (2 * np.arange(4))[None, :]) & 3).astype(np.uint8)


def read_comet(path: str | os.PathLike, n_vectors: int, n_fields: int, *, ploidy: int = 2) -> Genotypes:
    """Read CoMet's packed 2-bit genotype file (the CoMet tool's input format).

    The file is raw: no header, vector after vector, each padded to whole bytes (``ceil(n_fields / 4)``
    bytes per vector), four elements per byte from the least significant bits up.

    Parameters
    ----------
    path : str or path-like
        The packed file.
    n_vectors, n_fields : int
        The matrix shape, which the file does not record.
    ploidy : {2, 1}
        How to interpret the codes: 2 (CCC) or 1 (DUO).

    Returns
    -------
    Genotypes
        With default names ``"snp1", ...``, samples ``"sample1", ...`` and alleles ``("A", "B")``.

    Raises
    ------
    InputError
        If the file is missing, its size is not ``n_vectors * ceil(n_fields / 4)``, or (haploid) it holds
        code 3.
    ValueError
        If the shape or ploidy is invalid.
    """
    path = os.fspath(path)
    if ploidy not in (1, 2):
        raise ValueError(f"ploidy must be 1 or 2, not {ploidy!r}")
    if n_vectors < 1 or n_fields < 1:
        raise ValueError(f"n_vectors and n_fields must be positive, not {n_vectors} and {n_fields}")
    per_vector = (n_fields + 3) // 4
    expected = n_vectors * per_vector
    buffer = read_bytes(path)
    if len(buffer) != expected:
        raise InputError(
            f"{path}: size {len(buffer)} bytes, expected {expected} "
            f"({n_vectors} vectors x {per_vector} bytes for {n_fields} fields)"
        )
    packed = np.frombuffer(buffer, dtype=np.uint8).reshape(n_vectors, per_vector)
    codes = np.ascontiguousarray(_COMET_UNPACK[packed].reshape(n_vectors, per_vector * 4)[:, :n_fields])
    del packed
    if isinstance(buffer, mmap.mmap):
        buffer.close()
    if ploidy == 1 and (codes == 3).any():
        vector, field = (int(i) for i in np.argwhere(codes == 3)[0])
        raise InputError(f"{path}: code 3 at vector {vector + 1}, field {field + 1} has no haploid meaning")
    return Genotypes(
        codes=codes, names=_default_names("snp", n_vectors), alleles=[("A", "B")] * n_vectors,
        samples=_default_names("sample", n_fields), ploidy=ploidy, source=os.path.basename(path),
    )


def write_comet(path: str | os.PathLike, codes) -> None:
    """Write codes in CoMet's packed 2-bit format, atomically.

    Parameters
    ----------
    path : str or path-like
        Destination, written as :mod:`seqcompare.io.output` writes every output: complete or not at all, and
        never replacing a device, a FIFO or a symbolic link.
    codes : Genotypes or array_like of uint8, shape (n_vectors, n_fields)
        Codes 0..3. Pad bits of each vector's last byte are written as zeros.

    Raises
    ------
    ValueError
        If ``codes`` is not 2-D or holds a value above 3.
    """
    if isinstance(codes, Genotypes):
        codes = codes.codes
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D (n_vectors, n_fields), not {codes.ndim}-D")
    if codes.size and (codes.min() < 0 or codes.max() > 3):
        raise ValueError("codes must be 2-bit values 0..3")
    n_vectors, n_fields = codes.shape
    per_vector = (n_fields + 3) // 4
    padded = np.zeros((n_vectors, per_vector * 4), dtype=np.uint8)
    padded[:, :n_fields] = codes
    quads = padded.reshape(n_vectors, per_vector, 4)
    packed = quads[..., 0] | (quads[..., 1] << 2) | (quads[..., 2] << 4) | (quads[..., 3] << 6)

    from .output import open_output

    with open_output(os.fspath(path), "path") as out:
        out.write(packed.astype(np.uint8).tobytes())


# -------------------------------------------------------------------------------------------- dispatch


def read_genotypes(path: str | os.PathLike, **options) -> Genotypes:
    """Read genotypes, choosing the reader from the file name.

    ``.vcf``/``.vcf.gz``/``.vcf.bgz`` and ``-`` (standard input) go to :func:`read_vcf`; ``.bed``/``.bim``/``.fam``, or a prefix with an
    existing ``.bed``, to :func:`read_plink`; anything else to :func:`read_comet` when ``n_vectors`` and
    ``n_fields`` are given.

    Parameters
    ----------
    path : str or path-like
        The file (or PLINK prefix).
    **options
        Passed to the chosen reader (``strict`` for VCF; ``n_vectors``, ``n_fields``, ``ploidy`` for CoMet).

    Returns
    -------
    Genotypes

    Raises
    ------
    InputError
        If the format cannot be told from the name, or the chosen reader rejects the file.
    """
    path = os.fspath(path)
    lower = path.lower()
    if path == "-" or lower.endswith((".vcf", ".vcf.gz", ".vcf.bgz")):
        return read_vcf(path, **options)
    if lower.endswith((".bed", ".bim", ".fam")) or os.path.exists(path + ".bed"):
        return read_plink(path, **options)
    if "n_vectors" in options and "n_fields" in options:
        return read_comet(path, **options)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    raise InputError(
        f"{path}: cannot tell the genotype format from the name; use .vcf/.vcf.gz, a PLINK .bed/.bim/.fam, "
        "or give n_vectors and n_fields for a CoMet packed file"
    )
