"""How reads.fastq and signatures.fasta were made (kept for provenance; needs ../shared/data of the project).

signatures.fasta: 12 real viral sequences, unmodified, from viral_refs/all_viral_refs.fasta.
reads.fastq: the first 40 real Oxford Nanopore lambda-phage reads of ont_lambda_reads (names, bases and
quality strings as sequenced), into 16 of which signatures were planted: the signature (or its reverse
complement) replaces the read's bases at a random offset, the read keeping its own quality string, and in 6
of them extra N runs were written over the planted copy (those bases get Phred 0). Seeded; run from the
repository root: python data/scan_example/build.py
"""

import numpy as np

from seqcompare.io.fasta import read_sequences
from seqcompare.io.fastq import read_fastq
from seqcompare.io.sequences import BASES, SequenceSet

SHARED = "../shared/data"
CHOSEN = ["PRRSV2-ORF5_DQ478308.1", "Oropouche-S_NC_005777.1", "H2N2-Korea1968-ns", "H1N1pdm-ns", "H1N1-PR8-ns",
          "H3N2-ns", "H1N1pdm-mp", "H3N2-mp", "FluB-Brisbane2008-ns", "FluB-Brisbane2008-mp", "H1N1pdm-np",
          "H1N1-PR8-mp"]


def main():
    rng = np.random.default_rng(2026)
    refs = read_sequences(f"{SHARED}/viral_refs/all_viral_refs.fasta", iupac_as_n=True)
    index = {name: i for i, name in enumerate(refs.names)}
    chosen = [refs.sequence(index[name]) for name in CHOSEN]
    reads = read_fastq(f"{SHARED}/ont_lambda_reads/ERA476754_lambda_ont.fastq")
    letters = np.frombuffer(BASES, dtype=np.uint8)
    with open("data/scan_example/signatures.fasta", "wb") as out:
        for name, codes in zip(CHOSEN, chosen):
            text = letters[codes].tobytes()
            out.write(b">" + name.encode() + b"\n" + b"\n".join(text[i : i + 70] for i in range(0, len(text), 70)) + b"\n")
    planted = []
    rows, quals = [], []
    for r in range(40):
        codes = reads.sequence(r).copy()
        quality = reads.quality[reads.offsets[r] : reads.offsets[r + 1]].copy()
        if r % 5 in (1, 3) or r % 7 == 0:
            s = int(rng.integers(0, len(chosen)))
            signature = chosen[s].copy()
            strand = "+"
            if rng.random() < 0.3:
                signature = np.where(signature == 4, 4, 3 - signature)[::-1].astype(np.uint8)
                strand = "-"
            if signature.size < codes.size:
                at = int(rng.integers(0, codes.size - signature.size))
                codes[at : at + signature.size] = signature
                if len(planted) % 3 == 0:
                    for start in rng.integers(at, at + signature.size - 8, 6):
                        codes[start : start + 8] = 4
                codes_n = codes == 4
                quality[codes_n] = 0
                planted.append((reads.names[r], CHOSEN[s], at, strand))
        rows.append(codes)
        quals.append(quality)
    with open("data/scan_example/reads.fastq", "wb") as out:
        for r in range(40):
            out.write(b"@" + reads.names[r].encode() + b"\n" + letters[rows[r]].tobytes() + b"\n+\n"
                      + (quals[r] + 33).tobytes() + b"\n")
    with open("data/scan_example/planted.tsv", "w") as out:
        out.write("read\tsignature\toffset\tstrand\n")
        for row in planted:
            out.write("\t".join(map(str, row)) + "\n")


if __name__ == "__main__":
    main()
