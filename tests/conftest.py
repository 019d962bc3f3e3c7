import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Numba compiles on first use; property tests must not count that against a deadline.
settings.register_profile("seqcompare", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("seqcompare")

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "data")


def has_gpu() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with CuPy on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture(scope="session")
def sarscov2():
    from seqcompare.io.fasta import read_alignment

    return read_alignment(os.path.join(DATA, "sarscov2_338.fasta.gz"))


@pytest.fixture(scope="session")
def sarscov2_oracle(sarscov2):
    """The real alignment's matrix as snp-dists 0.8.2 wrote it (its golden file; the command that made it is in
    tests/data/golden/README.md): a peer's numbers, sharing no code with ours, read in 0.03 s where the vector
    method took 7 s in every test process."""
    import gzip

    with gzip.open(os.path.join(os.path.dirname(__file__), "data", "golden", "snp-dists", "sarscov2_338.tsv.gz"),
                   "rt") as handle:  # fmt: skip
        rows = [line.split("\t") for line in handle.read().splitlines()[1:]]
    assert [row[0] for row in rows] == list(sarscov2.names)
    return np.array([row[1:] for row in rows], dtype=np.int64)


def random_alignment(rng, n, m, alphabet=b"ACGTN-acgtRYKMSWn"):
    """Random related sequences over ``alphabet`` (a root plus per-sequence noise)."""
    symbols = np.frombuffer(alphabet, dtype=np.uint8)
    root = symbols[rng.integers(0, len(symbols), m)]
    rows = np.repeat(root[None, :], n, axis=0)
    noise = rng.random((n, m)) < 0.3
    rows[noise] = symbols[rng.integers(0, len(symbols), int(noise.sum()))]
    return rows


def planted_with_dense_ns(rng, lengths, sample_length):
    """One sample per signature length, each carrying a copy of its signature with an N every 5 bases (so no
    clean index window can find it: only the exact fallback can). Returns (samples, signatures) SequenceSets."""
    from seqcompare.io.sequences import SequenceSet

    signatures, samples, quals = [], [], []
    for length in lengths:
        signature = rng.integers(0, 4, length)
        sample = rng.integers(0, 4, sample_length)
        at = int(rng.integers(0, sample_length - length))
        copy = signature.copy()
        copy[rng.integers(0, 3) :: 5] = 4
        sample[at : at + length] = copy
        sample[at + length : at + length + 30 : 7] = 4
        signatures.append("".join("ACGTN"[c] for c in signature))
        samples.append("".join("ACGTN"[c] for c in sample))
        quals.append(np.where(sample == 4, 0, 20 + rng.integers(0, 15, sample.size)))
    return SequenceSet.from_strings(samples, qualities=quals), SequenceSet.from_strings(signatures)


def small_vcf(path, ids=("snp0", "snp1", "snp2", "snp3", "snp4")):
    """A diploid VCF of ``len(ids)`` SNPs x 6 samples at ``path`` (returned), genotypes rotating per record."""
    samples = "\t".join(f"s{i}" for i in range(6))
    rows = ["##fileformat=VCFv4.2", f"#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t{samples}"]
    genotypes = ["0/0", "0/1", "1/1", "0/1", "0/0", "1/1"]
    for k, name in enumerate(ids):
        rows.append(f"1\t{100 + k}\t{name}\tA\tG\t.\t.\t.\tGT\t" + "\t".join(np.roll(genotypes, k)))
    path.write_text("\n".join(rows) + "\n")
    return path


# Every engine's tests take this parameter: one body for the CPU and the GPU (the GPU run is marked ``gpu`` and
# skipped where no GPU is usable).
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def developing_example(monkeypatch):
    """Run the worked example of docs/DEVELOPING.md as written (from the repository root); its namespace."""
    root = os.path.join(os.path.dirname(__file__), os.pardir)
    with open(os.path.join(root, "docs", "DEVELOPING.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text[text.index("### Worked example") :]
    code = section[section.index("```python\n") + len("```python\n") : section.index("\n```\n")]
    monkeypatch.chdir(root)
    namespace = {"__name__": "developing_example"}
    exec(compile(code, "docs/DEVELOPING.md", "exec"), namespace)
    return namespace


def run_command(*args) -> "subprocess.CompletedProcess":
    """``seqcompare ARGS`` run in this process, returned as ``subprocess.run(..., capture_output=True,
    text=True)`` returns a fresh one: the exit status and what went to stdout and stderr. A fresh interpreter
    would pay Python's, NumPy's and Numba's start (about a second) in every call; ``tests/test_cli.py`` runs
    ``python -m seqcompare`` itself."""
    import contextlib
    import io
    import subprocess

    from seqcompare.cli import main

    out, err = io.BytesIO(), io.StringIO()
    text_out = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    with contextlib.redirect_stdout(text_out), contextlib.redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as stop:  # argparse's own exits
            code = stop.code if isinstance(stop.code, int) else 1
    text_out.flush()
    return subprocess.CompletedProcess(list(args), code, out.getvalue().decode(), err.getvalue())


def unpack(bases, nmask, word0, lengths):
    """Base codes and offsets of records packed 2 bits a base with an N mask (:func:`seqcompare.io.sequences.pack_words`),
    decoded by NumPy alone."""
    codes = []
    for start, length in zip(word0, lengths):
        words = -(-int(length) // 32)
        base = (bases[start : start + words, None] >> (2 * np.arange(32, dtype=np.uint64))) & np.uint64(3)
        is_n = (nmask[start : start + words, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)
        codes.append(np.where(is_n.ravel() == 1, 4, base.ravel()).astype(np.uint8)[: int(length)])
    offsets = np.zeros(len(codes) + 1, dtype=np.int64)
    np.cumsum([c.size for c in codes], out=offsets[1:])
    return (np.concatenate(codes) if codes else np.empty(0, np.uint8)), offsets
