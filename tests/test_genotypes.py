import gzip
import os

import numpy as np
import pytest
from conftest import DATA

from seqcompare.errors import InputError
from seqcompare.io.genotypes import (
    Genotypes,
    read_comet,
    read_genotypes,
    read_plink,
    read_vcf,
    write_comet,
)

KG_VCF = os.path.join(DATA, "ccc_example", "1kg_chr1_2504.vcf.gz")
SARS_VCF = os.path.join(DATA, "ccc_example", "sarscov2_422.vcf.gz")

HEADER = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t{}\n"


def vcf(tmp_path, records, samples=("s1", "s2", "s3"), name="a.vcf", compress=False):
    """Write a VCF whose records are given as (chrom, pos, id, ref, alt, format, genotypes...) tuples."""
    text = HEADER.format("\t".join(samples))
    for rec in records:
        chrom, pos, snp, ref, alt, fmt, *gts = rec
        text += "\t".join([chrom, str(pos), snp, ref, alt, ".", "PASS", ".", fmt, *gts]) + "\n"
    data = text.encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if compress else data)
    return str(path)


def reference_codes(record_lines):
    """Straightforward per-genotype parse of VCF record lines into CoMet codes (kept records only)."""
    rows = []
    for line in record_lines:
        cols = line.rstrip("\r\n").split("\t")
        ref, alt = cols[3].upper(), cols[4].upper()
        if len(ref) != 1 or len(alt) != 1 or ref not in "ACGT" or alt not in "ACGT":
            continue
        row = []
        for token in cols[9:]:
            parts = token.split(":")[0].replace("|", "/").split("/")
            if "." in parts:
                row.append(2)
                continue
            n = sum(int(p) == 1 for p in parts)
            if ref > alt:
                n = len(parts) - n
            row.append(n if len(parts) == 1 else (0, 1, 3)[n])
        rows.append(row)
    return np.array(rows, dtype=np.uint8)


# ------------------------------------------------------------------------------------------ small VCFs


def test_vcf_codes_swap_phasing_missing_and_skips(tmp_path):
    path = vcf(
        tmp_path,
        [
            ("1", 100, "rs1", "A", "G", "GT", "0|0", "0/1", "1|1"),
            ("1", 150, "multi", "A", "T,G", "GT", "0|0", "0/1", "1|2"),
            ("1", 200, "rs2", "G", "A", "GT", "0|0", "1/0", "1|1"),  # REF > ALT: allele 1 is the REF
            ("1", 250, "indel", "AT", "A", "GT", "0|0", "0/1", "1|1"),
            ("1", 300, ".", "c", "t", "GT", "./.", ".|.", "0/."),
            ("1", 350, "mono", "C", ".", "GT", "0|0", "0|0", "0|0"),
            ("2", 400, "rs4", "T", "C", "GT", "1|0", ".", "0|0"),
        ],
    )
    g = read_vcf(path)
    assert g.ploidy == 2 and g.skipped == 3
    assert g.names == ["rs1", "rs2", "1:300", "rs4"]
    assert g.alleles == [("A", "G"), ("A", "G"), ("C", "T"), ("C", "T")]
    assert g.samples == ["s1", "s2", "s3"]
    assert g.source == "a.vcf"
    assert g.codes.dtype == np.uint8 and g.codes.flags.c_contiguous
    assert g.codes.tolist() == [[0, 1, 3], [3, 1, 0], [2, 2, 2], [1, 2, 3]]


def test_vcf_gt_with_trailing_fields(tmp_path):
    path = vcf(
        tmp_path,
        [
            ("1", 1, "a", "A", "C", "GT:DP", "0/1:12", "1|1:3", "./.:0"),
            ("1", 2, "b", "C", "A", "GT:DP:GQ", "0/0:1:99", "0|1", "1/1:.:."),
        ],
    )
    g = read_vcf(path)
    assert g.codes.tolist() == [[1, 3, 2], [3, 1, 0]]


def test_vcf_haploid(tmp_path):
    path = vcf(
        tmp_path,
        [
            ("1", 1, "a", "T", "C", "GT", "0", "1", "."),  # allele 0 = C = ALT
            ("1", 2, "b", "A", "G", "GT:CLADE", "0:x", "1:longer_clade", ".:y"),
            ("1", 3, "c", "A", "G", "GT", ".", ".", "."),
        ],
    )
    g = read_vcf(path)
    assert g.ploidy == 1
    assert g.codes.tolist() == [[1, 0, 2], [0, 1, 2], [2, 2, 2]]
    assert g.allele_counts().tolist() == [[1, 0, -1], [0, 1, -1], [-1, -1, -1]]


def test_vcf_gzip_and_crlf_give_the_same_codes(tmp_path):
    records = [
        ("1", 1, "a", "A", "G", "GT", "0|1", "1|1", "./."),
        ("1", 2, "b", "T", "G", "GT", "0|0", "0|1", "1|1"),
    ]
    plain = read_vcf(vcf(tmp_path, records))
    zipped = read_vcf(vcf(tmp_path, records, name="a.vcf.gz", compress=True))
    assert zipped.source == "a.vcf.gz"
    crlf_path = tmp_path / "crlf.vcf"
    crlf_path.write_bytes((tmp_path / "a.vcf").read_bytes().replace(b"\n", b"\r\n"))
    crlf = read_vcf(crlf_path)
    assert np.array_equal(plain.codes, zipped.codes) and np.array_equal(plain.codes, crlf.codes)
    assert plain.codes.tolist() == [[1, 3, 2], [3, 1, 0]]


def test_vcf_fast_and_general_paths_agree(tmp_path, rng):
    # Fixed-width lines take the fast path; adding ':' fields or mixing widths forces the general one.
    samples = [f"s{i}" for i in range(37)]
    records, lines = [], []
    choices = np.array(["0|0", "0|1", "1|0", "1|1", "0/1", "./.", ".", "0/.", ".|1"])
    for i in range(60):
        gts = list(choices[rng.integers(0, len(choices), len(samples))])
        if i % 3 == 0:
            gts = [g + ":7" for g in gts]
        ref, alt = ("A", "G") if i % 2 else ("T", "C")
        fmt = "GT:DP" if i % 3 == 0 else "GT"
        records.append(("1", i + 1, f"r{i}", ref, alt, fmt, *gts))
        lines.append("\t".join(["1", str(i + 1), f"r{i}", ref, alt, ".", ".", ".", fmt, *gts]))
    g = read_vcf(vcf(tmp_path, records, samples=samples))
    assert np.array_equal(g.codes, reference_codes(lines))


@pytest.mark.parametrize(
    "record, reason",
    [
        (("1", 5, "rsM", "A", "C,T", "GT", "0|0", "0|1", "1|2"), "multi-allelic site"),
        (("1", 5, "rsM", "AC", "A", "GT", "0|0", "0|1", "1|1"), "not a SNP"),
        (("1", 5, "rsM", "A", "N", "GT", "0|0", "0|1", "1|1"), "not a SNP"),
    ],
)
def test_vcf_strict_rejects_what_is_otherwise_skipped(tmp_path, record, reason):
    path = vcf(tmp_path, [("1", 1, "ok", "A", "G", "GT", "0|0", "0|1", "1|1"), record])
    assert read_vcf(path).skipped == 1
    with pytest.raises(InputError, match=rf"a\.vcf: line 4 \(rsM\): {reason}"):
        read_vcf(path, strict=True)


@pytest.mark.parametrize(
    "records, message",
    [
        (
            [
                ("1", 1, "a", "A", "G", "GT", "0|0", "0|1", "1|1"),
                ("1", 2, "b", "A", "G", "GT", "0", "0", "1"),
            ],
            r"line 4 \(b\): sample 's1' has a haploid genotype .*line 3, sample 's1'.* mixed ploidy",
        ),
        (
            [("1", 1, "a", "A", "G", "GT", "0", ".", "1|1")],
            r"line 3 \(a\): sample 's3' has a diploid genotype .*mixed ploidy",
        ),
        (
            [("1", 1, "a", "A", "G", "GT", "0|0", "0/1/1", "1|1")],
            r"line 3 \(a\): sample 's2' has genotype '0/1/1' with ploidy 3",
        ),
        (
            [("1", 1, "a", "A", "G", "GT", "0|0", "0|1")],
            r"line 3 \(a\): has 2 samples, the header has 3",
        ),
        (
            [("1", 1, "a", "A", "G", "GT", "0|0", "0|1", "1|1", "0|0")],
            r"line 3 \(a\): has 4 samples, the header has 3",
        ),
        (
            [("1", 1, "a", "A", "G", "GT", "0|0", "0|2", "1|1")],
            r"line 3 \(a\): sample 's2' has allele index 2 in genotype '0\|2'",
        ),
        (
            [("1", 1, "a", "A", "G", "GT", "0|0", "0|1", "x|1")],
            r"line 3 \(a\): sample 's3' has a malformed genotype 'x\|1'",
        ),
        (
            [("1", 1, "a", "A", "G", "GT", "0|0", "", "1|1")],
            r"line 3 \(a\): sample 's2' has an empty genotype",
        ),
        (
            [("1", 1, "a", "A", "G", "DP:GT", "3:0|0", "3:0|1", "3:1|1")],
            r"line 3 \(a\): FORMAT 'DP:GT' does not start with GT",
        ),
        (
            [("1", 1, "a", "A", "C,G", "GT", "0", "1", "2"), ("1", 2, "b", "AA", "G", "GT", "0", "1", "1")],
            r"no biallelic SNP records: all 2 records were skipped \(multi-allelic site: 1, not a SNP: 1\)",
        ),
    ],
)
def test_vcf_errors_name_file_line_and_snp(tmp_path, records, message):
    with pytest.raises(InputError, match=r"a\.vcf: .*" + message):
        read_vcf(vcf(tmp_path, records))


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty file"),
        (b"\n\n", "empty file"),
        (b"##fileformat=VCFv4.2\n", "no '#CHROM' header line"),
        (b"1\t2\t3\n", "line 1: record before the '#CHROM' header line"),
        (b"#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts1\n", "no records after the header"),
        (b"#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n1\t2\t.\tA\tC\t.\t.\t.\n", "no FORMAT column"),
    ],
)
def test_vcf_file_level_errors(tmp_path, content, message):
    path = tmp_path / "b.vcf"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_vcf(path)


def test_missing_file(tmp_path):
    missing = str(tmp_path / "nope.vcf")
    with pytest.raises(InputError, match=f"^{missing}: no such file$"):
        read_vcf(missing)
    with pytest.raises(InputError, match="no such file"):
        read_plink(tmp_path / "nope")
    with pytest.raises(InputError, match="no such file"):
        read_comet(tmp_path / "nope.bin", 1, 1)


# ------------------------------------------------------------------------------------------ real VCFs


@pytest.fixture(scope="module")
def kg():
    return read_vcf(KG_VCF)


def test_1kg_vcf_shape_and_first_records(kg):
    assert kg.codes.shape == (4294, 2504)
    assert kg.ploidy == 2 and kg.skipped == 2
    assert kg.samples[:3] == ["HG00096", "HG00097", "HG00099"]
    assert kg.names[:2] == ["rs564508827", "rs75416295"]
    # rs6685318 (REF A, ALT T): HG00096 is 1|1, HG00105 (field 7) is 1|0.
    assert kg.names[3] == "rs6685318" and kg.alleles[3] == ("A", "T")
    assert kg.codes[3, 0] == 3 and kg.codes[3, 7] == 1
    lines = []
    with gzip.open(KG_VCF, "rt") as handle:
        for line in handle:
            if not line.startswith("#"):
                lines.append(line)
            if len(lines) == 50:
                break
    expected = reference_codes(lines)
    assert np.array_equal(kg.codes[: len(expected)], expected)
    assert set(np.unique(kg.codes).tolist()) <= {0, 1, 3}


def test_sarscov2_haploid_vcf_matches_plain_parse():
    g = read_vcf(SARS_VCF)
    with gzip.open(SARS_VCF, "rt") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    expected = reference_codes(lines)
    assert g.ploidy == 1
    assert g.codes.shape == expected.shape == (404, 422)
    assert g.skipped == len(lines) - 404
    assert np.array_equal(g.codes, expected)
    assert g.names[0] == "C186T" and g.alleles[0] == ("C", "T")


# ---------------------------------------------------------------------------------------------- PLINK


def plink_files(tmp_path, bed_body, magic=b"\x6c\x1b\x01"):
    # 3 SNPs x 5 samples: 2 bytes per SNP, the second holding one sample and 6 pad bits.
    (tmp_path / "g.bim").write_text("1\tsnpA\t0\t100\tA\tG\n1 snpB 0 200 T C\n1\tsnpC\t0.5\t300\tg\ta\n")
    (tmp_path / "g.fam").write_text("".join(f"F{i} I{i} 0 0 1 -9\n" for i in range(5)))
    (tmp_path / "g.bed").write_bytes(magic + bed_body)
    return str(tmp_path / "g")


# PLINK 2-bit values, sample 0 in the low bits: 00 hom col-5 allele, 01 missing, 10 het, 11 hom col-6 allele.
BED_BODY = bytes(
    [
        0b11_10_01_00, 0b10,  # snpA (A, G): 00 01 10 11 | 10
        0b01_11_00_00, 0b11,  # snpB (T, C), swapped: 00 00 11 01 | 11
        0b10_10_10_10, 0b11111100,  # snpC (G, A), swapped: 10 10 10 10 | 00, pad bits set (ignored)
    ]
)


def test_plink_codes_with_swapped_alleles_and_padding(tmp_path):
    prefix = plink_files(tmp_path, BED_BODY)
    for target in (prefix, prefix + ".bed", prefix + ".bim", prefix + ".fam"):
        g = read_plink(target)
        assert g.codes.tolist() == [[0, 2, 1, 3, 1], [3, 3, 0, 2, 0], [1, 1, 1, 1, 3]]
        assert g.names == ["snpA", "snpB", "snpC"]
        assert g.alleles == [("A", "G"), ("C", "T"), ("A", "G")]
        assert g.samples == ["I0", "I1", "I2", "I3", "I4"]
        assert g.ploidy == 2 and g.source == "g.bed" and g.codes.flags.c_contiguous
    assert np.array_equal(read_genotypes(prefix).codes, g.codes)


@pytest.mark.parametrize(
    "body, magic, message",
    [
        (BED_BODY[:-1], b"\x6c\x1b\x01", "is truncated: 5 genotype bytes, expected 6"),
        (BED_BODY + b"\x00", b"\x6c\x1b\x01", "has extra bytes: 7 genotype bytes, expected 6"),
        (BED_BODY, b"\x6c\x1c\x01", "not a PLINK 1 .bed file"),
        (b"", b"", "not a PLINK 1 .bed file"),
        (BED_BODY, b"\x6c\x1b\x00", "not SNP-major"),
    ],
)
def test_plink_bed_errors(tmp_path, body, magic, message):
    prefix = plink_files(tmp_path, body, magic)
    with pytest.raises(InputError, match=r"g\.bed: .*" + message):
        read_plink(prefix)


def test_plink_short_bim_line(tmp_path):
    prefix = plink_files(tmp_path, BED_BODY)
    (tmp_path / "g.bim").write_text("1 snpA 0 100 A\n")
    with pytest.raises(InputError, match=r"g\.bim: line 1: expected 6 columns"):
        read_plink(prefix)


# ---------------------------------------------------------------------------------------- CoMet binary


@pytest.mark.parametrize("n_fields", [1, 3, 4, 5, 33, 64, 65])
def test_comet_round_trip(tmp_path, rng, n_fields):
    codes = rng.choice(np.array([0, 1, 2, 3], dtype=np.uint8), size=(7, n_fields))
    codes[0, 0] = 2
    path = tmp_path / "g.bin"
    write_comet(path, codes)
    assert path.stat().st_size == 7 * ((n_fields + 3) // 4)
    g = read_comet(path, 7, n_fields)
    assert np.array_equal(g.codes, codes) and g.codes.flags.c_contiguous
    assert g.names[0] == "snp1" and g.samples[-1] == f"sample{n_fields}" and g.alleles[0] == ("A", "B")
    haploid = np.where(codes == 3, 1, codes).astype(np.uint8)
    counts = np.where(haploid == 2, -1, haploid.astype(np.int8))
    write_comet(path, Genotypes.from_counts(counts, ploidy=1))
    assert np.array_equal(read_comet(path, 7, n_fields, ploidy=1).codes, haploid)
    assert [p.name for p in tmp_path.iterdir()] == ["g.bin"]


def test_comet_bit_layout_and_zero_padding(tmp_path):
    path = tmp_path / "g.bin"
    write_comet(path, np.array([[0, 1, 2, 3, 1], [3, 3, 3, 3, 2]], dtype=np.uint8))
    assert path.read_bytes() == bytes([0b11_10_01_00, 0b01, 0xFF, 0b10])
    path.write_bytes(bytes([0b11_10_01_00, 0b11111101]))  # pad bits set on read are ignored
    assert read_genotypes(path, n_vectors=1, n_fields=5).codes.tolist() == [[0, 1, 2, 3, 1]]


def test_comet_errors(tmp_path):
    path = tmp_path / "g.bin"
    path.write_bytes(bytes(10))
    expected = r"g\.bin: size 10 bytes, expected 9 \(3 vectors x 3 bytes for 9 fields\)"
    with pytest.raises(InputError, match=expected):
        read_comet(path, 3, 9)
    path.write_bytes(b"\x03")
    with pytest.raises(InputError, match="code 3 at vector 1, field 1 has no haploid meaning"):
        read_comet(path, 1, 1, ploidy=1)
    with pytest.raises(ValueError, match="0..3"):
        write_comet(path, np.array([[0, 4]]))
    with pytest.raises(InputError, match="cannot tell the genotype format"):
        read_genotypes(path)


# ------------------------------------------------------------------------------------------- counts


def test_from_counts_round_trip_and_defaults(rng):
    for ploidy in (1, 2):
        counts = rng.integers(-1, ploidy + 1, size=(6, 9)).astype(np.int8)
        g = Genotypes.from_counts(counts, ploidy=ploidy)
        assert g.codes.dtype == np.uint8 and g.ploidy == ploidy
        assert np.array_equal(g.allele_counts(), counts) and g.allele_counts().dtype == np.int8
    assert Genotypes.from_counts([[0, 1, 2, -1]]).codes.tolist() == [[0, 1, 3, 2]]
    assert Genotypes.from_counts([[0, 1, -1]], ploidy=1).codes.tolist() == [[0, 1, 2]]
    g = Genotypes.from_counts(np.zeros((2, 3), dtype=int))
    assert g.names == ["snp1", "snp2"] and g.samples == ["sample1", "sample2", "sample3"]
    assert g.alleles == [("A", "B"), ("A", "B")]
    g = Genotypes.from_counts([[1]], names=["x"], samples=["y"], alleles=[("C", "T")])
    assert (g.names, g.samples, g.alleles) == (["x"], ["y"], [("C", "T")])


@pytest.mark.parametrize(
    "counts, ploidy, message",
    [
        ([[0, 1, 2], [0, 1, 3]], 2, r"count 3 at \(vector 1, field 2\)"),
        ([[0, -2]], 2, r"count -2 at \(vector 0, field 1\)"),
        ([[0, 1], [2, 0]], 1, r"count 2 at \(vector 1, field 0\)"),
        ([[0.5]], 2, "must be integers"),
        ([0, 1], 2, "must be 2-D"),
    ],
)
def test_from_counts_rejects_bad_values(counts, ploidy, message):
    with pytest.raises(ValueError, match=message):
        Genotypes.from_counts(counts, ploidy=ploidy)
