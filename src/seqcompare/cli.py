"""The ``seqcompare`` command line: a thin layer over the Python API.

Data goes to stdout or ``-o FILE``; logs and progress go to stderr (progress only on a terminal, never with
``-q``). Bad input ends with one ``seqcompare: error: ...`` line and exit status 1; no partial output file
is left behind (files are written under a temporary name and renamed on success).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time

from . import __version__
from .errors import DeviceError, InputError

_IN_MEMORY_MATRIX_BYTES = 2 << 30


class _Log:
    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.started = time.perf_counter()

    def __call__(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.perf_counter() - self.started
            print(f"[seqcompare {elapsed:7.2f}s] {message}", file=sys.stderr, flush=True)

    def warn(self, message: str) -> None:
        print(f"seqcompare: warning: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def atomic_output(path: str | None):
    """Yield a binary handle: stdout for None or ``-``, else a temporary file renamed to ``path`` on success."""
    if path is None or path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"{path}: output directory {directory} does not exist")
    handle, temp = tempfile.mkstemp(prefix=".seqcompare-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _add_cluster_options(group) -> None:
    group.add_argument("--cluster", choices=("none", "local"), default="none",
                       help="local: run the tiles on a Dask LocalCluster on this machine (one worker per GPU with "
                            "--device cuda; needs the [distributed] extra)")  # fmt: skip
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on the existing Dask cluster at ADDRESS (e.g. tcp://host:8786); output files must "
                            "be on a path every worker can write")  # fmt: skip
    group.add_argument("--workers", type=_positive_int, metavar="N", help="workers of --cluster local")


@contextlib.contextmanager
def _dask_client(args, log):
    """A Dask client for ``--cluster local`` or ``--scheduler``, closed (with its local cluster) at the end."""
    if args.scheduler is None and args.cluster == "none":
        if args.workers:
            raise InputError("--workers sizes a Dask cluster: add --cluster local")
        yield None
        return
    if args.scheduler is not None and args.cluster != "none":
        raise InputError("--scheduler joins an existing cluster; do not combine it with --cluster")
    from .distributed import close, connect
    from .gpu._runtime import resolve_device

    client = connect(args.scheduler, workers=args.workers, device=resolve_device(args.device),
                     threads=args.threads, log=log)  # fmt: skip
    try:
        yield client
    finally:
        close(client)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text}")
    return value


def _add_hamming_parser(subparsers) -> None:
    from .metrics.hamming.methods import METHOD_DESCRIPTIONS, METHODS

    parser = subparsers.add_parser(
        "hamming",
        help="all-pairs Hamming / SNP distance matrix of a FASTA alignment",
        description="Pairwise SNP distances of an alignment (snp-dists 0.8.2 semantics and output by "
        "default), or query x reference distances with --ref.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="methods:\n" + "\n".join(f"  {k:8s} {v}" for k, v in METHOD_DESCRIPTIONS.items()),
    )
    parser.add_argument("alignment", help="FASTA alignment (plain or gzip; '-' for stdin)")
    parser.add_argument("--ref", metavar="FASTA", help="reference alignment: output query x reference")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the table here instead of stdout")

    semantics = parser.add_argument_group("what counts as a difference")
    semantics.add_argument("-a", "--all-chars", action="store_true",
                           help="count every differing character, not just A/C/G/T")  # fmt: skip
    semantics.add_argument("-k", "--keep-case", action="store_true", help="do not upper-case sequences")
    semantics.add_argument("--iupac", action="store_true",
                           help="ambiguity codes are base sets: A vs R = 0, A vs Y = 1")  # fmt: skip
    semantics.add_argument("--missing", metavar="CHARS", default="",
                           help="characters treated as missing (never counted)")  # fmt: skip
    semantics.add_argument("-x", "--max-count", type=_non_negative_int, metavar="X",
                           help="stop counting at X: report min(distance, X)")  # fmt: skip

    layout = parser.add_argument_group("output")
    layout.add_argument("-c", "--csv", action="store_true", help="comma-separated instead of tab-separated")
    layout.add_argument("-m", "--molten", action="store_true", help="long form: name1, name2, distance")
    layout.add_argument("-b", "--blank-corner", action="store_true", help="empty top-left header cell")
    layout.add_argument("--corner-label", default=None, metavar="TEXT",
                        help="top-left header cell (default: 'snp-dists 0.8.2', for drop-in output)")  # fmt: skip
    layout.add_argument("-L", "--lower-triangle", action="store_true",
                        help="only the lower triangle, diagonal included (streamed)")  # fmt: skip
    layout.add_argument("--max-dist", type=_non_negative_int, metavar="D",
                        help="only pairs within distance D, long form (never builds the matrix)")  # fmt: skip
    layout.add_argument("--knn", type=_positive_int, metavar="K",
                        help="the K nearest neighbours of each sequence, long form")  # fmt: skip
    layout.add_argument("--npy", metavar="FILE",
                        help="write the matrix as .npy (names in FILE.names.tsv) instead of text")  # fmt: skip

    run = parser.add_argument_group("execution")
    run.add_argument("--method", choices=METHODS, default="auto", help="algorithm (default: auto)")
    run.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                     help="where to compute: cuda = every visible NVIDIA GPU (needs the [cuda] extra); "
                          "auto = a GPU when one is usable")  # fmt: skip
    run.add_argument("--gpu-packer", choices=("planes", "ballot", "shared", "naive"), default="planes",
                     help="how GPU operands are built: from the CPU's bit planes (least PCIe traffic) or from "
                          "8-bit codes by a ballot, shared-memory or naive atomic kernel")  # fmt: skip
    run.add_argument("-j", "--threads", type=_positive_int, metavar="N", help="threads (default: all cores)")
    run.add_argument("--tile-size", type=_positive_int, metavar="N", help="tile edge (default: automatic)")
    run.add_argument("-q", "--quiet", action="store_true", help="no log messages and no progress bar")
    _add_cluster_options(run)
    parser.set_defaults(handler=_run_hamming)


def _check_hamming_options(args) -> None:
    modes = [name for name, on in (("--molten", args.molten), ("--lower-triangle", args.lower_triangle),
             ("--max-dist", args.max_dist is not None), ("--knn", args.knn is not None),
             ("--npy", args.npy is not None)) if on]  # fmt: skip
    if len(modes) > 1:
        raise InputError(f"choose one output layout; got {' and '.join(modes)}")
    if args.lower_triangle and args.ref:
        raise InputError("--lower-triangle needs a square matrix; it cannot be combined with --ref")
    if args.all_chars and args.iupac:
        raise InputError("--all-chars and --iupac are different semantics; choose one")
    if args.npy and args.output:
        raise InputError("--npy writes its own file; do not combine it with -o")


def _run_hamming(args) -> int:
    log = _Log(args.quiet)
    with _dask_client(args, log) as client:
        return _hamming_command(args, log, client)


def _hamming_command(args, log, client) -> int:
    import numpy as np

    from .io.fasta import duplicated_names, read_alignment
    from .io.tables import SNP_DISTS_CORNER, NameTable, write_header, write_long, write_rows
    from .metrics.hamming.api import distance_dtype, encode_inputs, resolve_method, run_hamming
    from .sinks import KnnSink, LowerTriangleSink, MatrixSink, PairsSink

    _check_hamming_options(args)
    query = read_alignment(args.alignment, threads=args.threads)
    log(f"read {query.n_sequences} sequences of length {query.length} from {args.alignment}")
    reference = None
    if args.ref:
        reference = read_alignment(args.ref, threads=args.threads)
        log(f"read {reference.n_sequences} reference sequences of length {reference.length} from {args.ref}")
        if reference.length != query.length:
            raise InputError(
                f"{args.ref}: reference sequences have length {reference.length} but the query "
                f"alignment {args.alignment} has length {query.length}"
            )
    for alignment in (query, reference):
        if alignment is not None:
            repeated = duplicated_names(alignment.names)
            if repeated:
                shown = ", ".join(repeated[:3]) + (" ..." if len(repeated) > 3 else "")
                log.warn(f"{alignment.source}: {len(repeated)} duplicated name(s): {shown}")

    alphabet = "all" if args.all_chars else "iupac" if args.iupac else "acgt"
    encoded = encode_inputs(query, reference, alphabet=alphabet, keep_case=args.keep_case,
                            missing=args.missing)  # fmt: skip
    try:
        method = resolve_method(args.method, args.device, encoded.space.n_codes)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    log(f"method {method}, {args.threads or 'all'} threads")
    separator = "," if args.csv else "\t"
    corner = None if args.blank_corner else (args.corner_label or SNP_DISTS_CORNER)
    row_names = NameTable(query.names)
    col_names = row_names if reference is None else NameTable(reference.names)
    symmetric = reference is None
    n_rows = query.n_sequences
    n_cols = n_rows if symmetric else reference.n_sequences
    dtype = distance_dtype(encoded.n_sites)
    common = dict(method=method, threads=args.threads, tile_size=args.tile_size,
                  progress=not args.quiet and sys.stderr.isatty(), device=args.device,
                  gpu_packer=args.gpu_packer, client=client)  # fmt: skip
    cap = args.max_count

    if args.max_dist is not None:
        cap = args.max_dist + 1 if cap is None else min(cap, args.max_dist + 1)
        rows, cols, values = run_hamming(encoded, PairsSink(args.max_dist, symmetric), cap=cap, **common)
        with atomic_output(args.output) as out:
            write_long(out, rows, cols, values, row_names, col_names, separator)
        log(f"wrote {values.size} pairs within distance {args.max_dist}")
        return 0
    if args.knn is not None:
        indices, distances = run_hamming(encoded, KnnSink(args.knn, n_rows, None if symmetric else n_cols),
                                         cap=cap, **common)  # fmt: skip
        rows = np.repeat(np.arange(n_rows), indices.shape[1])
        with atomic_output(args.output) as out:
            write_long(out, rows, indices.ravel(), distances.ravel(), row_names, col_names, separator)
        log(f"wrote {indices.shape[1]} nearest neighbours of each of {n_rows} sequences")
        return 0
    if args.npy is not None:
        sink = MatrixSink((n_rows, n_cols), symmetric, dtype, path=args.npy)
        try:
            with atomic_output(args.npy + ".names.tsv") as out:
                lines = [f"row\t{i}\t{name}" for i, name in enumerate(query.names)]
                if not symmetric:
                    lines += [f"column\t{i}\t{name}" for i, name in enumerate(reference.names)]
                out.write(("\n".join(["axis\tindex\tname", *lines]) + "\n").encode("utf-8", "surrogateescape"))
                run_hamming(encoded, sink, cap=cap, **common)
        except BaseException:
            sink.abort()
            raise
        log(f"wrote {n_rows} x {n_cols} matrix to {args.npy}")
        return 0
    if args.lower_triangle:
        with atomic_output(args.output) as out:
            write_header(out, col_names, separator, corner)
            sink = LowerTriangleSink(n_rows, lambda start, rows: write_rows(
                out, rows, start, row_names, separator, lower_triangle=True), dtype)  # fmt: skip
            run_hamming(encoded, sink, cap=cap, **common)
        return 0

    with contextlib.ExitStack() as stack:
        path = None
        if n_rows * n_cols * np.dtype(dtype).itemsize > _IN_MEMORY_MATRIX_BYTES:
            path = os.path.join(stack.enter_context(tempfile.TemporaryDirectory()), "matrix.npy")
        matrix = run_hamming(encoded, MatrixSink((n_rows, n_cols), symmetric, dtype, path=path), cap=cap, **common)
        with atomic_output(args.output) as out:
            if args.molten:
                block = max(1, (1 << 22) // max(1, n_cols))
                for lo in range(0, n_rows, block):
                    hi = min(n_rows, lo + block)
                    left = np.repeat(np.arange(lo, hi), n_cols)
                    right = np.tile(np.arange(n_cols), hi - lo)
                    write_long(out, left, right, matrix[lo:hi].ravel(), row_names, col_names, separator)
            else:
                write_header(out, col_names, separator, corner)
                write_rows(out, matrix, 0, row_names, separator)
    return 0


def _add_scan_parser(subparsers) -> None:
    from .signatures.common import DEFAULT_K, MAX_K, METHODS, REPORTS

    parser = subparsers.add_parser(
        "scan",
        help="which signatures (e.g. viral genomes) occur in which FASTQ samples, exactly",
        description="Find every (sample, signature) pair where the whole signature occurs in the sample, "
        "'N' on either side matching any base. Default output, one line per match: "
        "'sample: signature (confidence)', confidence = mean Phred score over the occurrence.",
    )
    parser.add_argument("samples", help="FASTQ samples (plain or gzip; '-' for stdin)")
    parser.add_argument("signatures", help="FASTA signatures (plain or gzip)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write matches here instead of stdout")
    parser.add_argument("--report", choices=REPORTS, default="first",
                        help="per pair: leftmost occurrence (default), highest confidence, or every occurrence")  # fmt: skip
    parser.add_argument("--tsv", action="store_true",
                        help="tab-separated with a header: sample, signature, offset (0-based), score")  # fmt: skip
    parser.add_argument("--integrity-hash", action="store_true",
                        help="add [sum of the sample's Phred scores mod 97] (the course's 2025 format)")  # fmt: skip
    parser.add_argument("--min-score", type=float, metavar="S",
                        help="occurrences with confidence below S do not count")  # fmt: skip
    parser.add_argument("--both-strands", action="store_true",
                        help="also match the reverse complement of each signature")  # fmt: skip
    parser.add_argument("--iupac-as-n", action="store_true",
                        help="read IUPAC codes other than N (R, Y, K, ...) as N instead of refusing them")  # fmt: skip
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="index: k-mer index with exact fallback (auto); reference: brute force (slow)")  # fmt: skip
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                        help="where the index method runs (cuda needs the [cuda] extra)")  # fmt: skip
    parser.add_argument("-k", type=int, default=DEFAULT_K, metavar="K",
                        help=f"index window, 1..{MAX_K} (speed only; default {DEFAULT_K})")  # fmt: skip
    parser.add_argument("-j", "--threads", type=_positive_int, metavar="N", help="threads (default: all cores)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no log messages")
    parser.set_defaults(handler=_run_scan)


def _run_scan(args) -> int:
    from .gpu import scan_helper
    from .signatures.common import MAX_K

    log = _Log(args.quiet)
    if not 1 <= args.k <= MAX_K:
        raise InputError(f"-k must be between 1 and {MAX_K}, got {args.k}")
    if args.device == "cuda" and args.method != "reference" and scan_helper.supported():
        result = _scan_with_helper(args, log)
    else:
        from concurrent.futures import ThreadPoolExecutor

        from .io.fastq import read_fastq
        from .signatures.api import prepare_signatures, scan

        # The signatures' index is built while the samples are parsed.
        with ThreadPoolExecutor(1) as background:
            prepared = background.submit(
                prepare_signatures, args.signatures, k=args.k, both_strands=args.both_strands,
                iupac_as_n=args.iupac_as_n, device=args.device if args.method != "reference" else None,
            )  # fmt: skip
            samples = read_fastq(args.samples, iupac_as_n=args.iupac_as_n, threads=args.threads)
            log(f"read {len(samples)} samples ({samples.codes.size} bases) from {args.samples}")
            signatures = prepared.result()
        log(f"indexed {len(signatures.signatures)} signatures ({signatures.signatures.codes.size} bases) from "
            f"{args.signatures}")
        result = scan(samples, signatures, report=args.report, min_score=args.min_score,
                      both_strands=args.both_strands, k=args.k, method=args.method, device=args.device,
                      threads=args.threads)  # fmt: skip
    log(f"found {len(result)} matches")
    text = "".join(line + "\n" for line in result.lines(tsv=args.tsv, integrity=args.integrity_hash))
    with atomic_output(args.output) as out:
        out.write(text.encode("utf-8", "surrogateescape"))
    return 0


def _scan_with_helper(args, log):
    """``--device cuda``: a forked helper starts CUDA while this process reads the inputs and does the
    compiled CPU passes (see :mod:`seqcompare.gpu.scan_helper`). The helper is forked first, before this
    process imports Numba, so that its CuPy import and CUDA start overlap all of this process's work."""
    from .gpu.scan_helper import ScanHelper

    with ScanHelper() as helper:
        from .engine import default_threads
        from .io.fastq import read_fastq
        from .signatures.api import prepare_signatures, scan_result

        threads = args.threads or default_threads()
        prepared = prepare_signatures(args.signatures, k=args.k, both_strands=args.both_strands,
                                      iupac_as_n=args.iupac_as_n, device=None)  # fmt: skip
        log(f"read {len(prepared.signatures)} signatures ({prepared.signatures.codes.size} bases) from "
            f"{args.signatures}")
        samples = read_fastq(args.samples, iupac_as_n=args.iupac_as_n, threads=threads)
        log(f"read {len(samples)} samples ({samples.codes.size} bases) from {args.samples}")
        threshold = -1.0 if args.min_score is None else float(args.min_score)
        rows = helper.rows(samples, prepared, args.report != "first", threshold, threads)
        log("scanned on the GPU by a helper process (" + ", ".join(f"{name[:-2].replace('_', ' ')} {value:.3f} s"
                                                               for name, value in helper.timings.items()) + ")")
    return scan_result(samples, prepared, rows, args.report)


def _add_ccc_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "ccc",
        help="CoMet's Custom Correlation Coefficient (2-way, 3-way) or DUO between SNPs across individuals",
        description="2x2 (2x2x2) CCC tables of every pair (triple) of SNPs, exactly as CoMet defines them. "
        "With --threshold only the entries above it are written (TSV: SNP, allele, ...; value), else all.",
    )
    parser.add_argument("genotypes", nargs="?", help="VCF (.vcf[.gz]), PLINK (.bed/.bim/.fam or prefix), or CoMet's "
                        "packed binary (with --num-vector and --num-field)")  # fmt: skip
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="output file (default stdout); .npy: values of every pair/triple, .bin: CoMet's records")  # fmt: skip
    parser.add_argument("--way", type=int, choices=(2, 3), default=2, help="pairs (2, default) or triples (3)")
    parser.add_argument("--metric", choices=("auto", "ccc", "duo"), default="auto",
                        help="auto: CCC for diploid genotypes, DUO for haploid")  # fmt: skip
    parser.add_argument("--no-sparse", dest="sparse", action="store_false",
                        help="CoMet's non-sparse mode: a missing genotype counts as one copy of each allele")  # fmt: skip
    parser.add_argument("--multiplier", type=float, metavar="M", help="front multiplier (CoMet: 9/2 CCC, 4 DUO)")
    parser.add_argument("--param", type=float, default=2.0 / 3.0, metavar="G", help="gamma (CoMet: 2/3)")
    parser.add_argument("--threshold", metavar="T",
                        help="keep entries with value > T; or tLL,tLH,tHH,tLLHH (3-way: tLLL,tLLH,tLHH,tHHH,tLLLHHH)")  # fmt: skip
    parser.add_argument("--format", choices=("auto", "tsv", "npy", "comet"), default="auto",
                        help="output format (auto: from the -o extension; TSV otherwise)")  # fmt: skip
    parser.add_argument("--checksum", action="store_true",
                        help="print the order- and decomposition-independent checksum on stderr, with -q too "
                        "(it is always in the log)")  # fmt: skip
    parser.add_argument("--histogram", metavar="FILE", help="write value histograms per entry class (TSV) here")
    parser.add_argument("--bins", type=_positive_int, default=100, metavar="N", help="histogram bins (default 100)")
    parser.add_argument("--strict", action="store_true",
                        help="refuse VCF records that are not biallelic SNPs instead of skipping them")  # fmt: skip
    parser.add_argument("--num-vector", type=_positive_int, metavar="N", help="SNPs in a CoMet binary input")
    parser.add_argument("--num-field", type=_positive_int, metavar="M", help="individuals in a CoMet binary input")
    parser.add_argument("--analytic", nargs=2, type=_positive_int, metavar=("N", "M"),
                        help="instead of an input: CoMet-style synthetic problem of N SNPs x M individuals, checked "
                        "exactly against its closed form")  # fmt: skip
    parser.add_argument("--method", choices=("auto", "reference", "blas", "bitmma"), default="auto",
                        help="blas: CPU GEMMs; bitmma: 1-bit tensor cores (--device cuda); reference: direct loops")  # fmt: skip
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu", help="where to compute")
    parser.add_argument("-j", "--threads", type=_positive_int, metavar="N",
                        help="cores for a --cluster local (default: all)")  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="no log messages")
    _add_cluster_options(parser)
    parser.set_defaults(handler=_run_ccc)


def _run_ccc(args) -> int:
    import numpy as np

    from .correlation.analytic import all_items, analytic_problem, closed_form_products
    from .correlation.api import ccc
    from .correlation.formulas import Metric, tables
    from .io.genotypes import Genotypes, read_comet, read_genotypes

    log = _Log(args.quiet)
    if args.analytic:
        n_vectors, n_fields = args.analytic
        metric_name = "ccc" if args.metric == "auto" else args.metric
        problem, groups = analytic_problem(n_vectors, n_fields, Metric(metric_name, args.sparse))
        genotypes = Genotypes(problem, [f"snp{i + 1}" for i in range(n_vectors)], [("A", "B")] * n_vectors,
                              [f"sample{i + 1}" for i in range(n_fields)], 2 if metric_name == "ccc" else 1,
                              "analytic")  # fmt: skip
    elif args.genotypes is None:
        raise InputError("give a genotype file, or --analytic N M")
    elif args.num_vector or args.num_field:
        if not (args.num_vector and args.num_field):
            raise InputError("a CoMet binary input needs both --num-vector and --num-field")
        ploidy = 1 if args.metric == "duo" else 2
        genotypes = read_comet(args.genotypes, args.num_vector, args.num_field, ploidy=ploidy)
    else:
        options = {"strict": True} if args.strict and ".vcf" in args.genotypes.lower() else {}
        genotypes = read_genotypes(args.genotypes, **options)
    if not args.analytic:
        skipped = f", skipped {genotypes.skipped} records that are not biallelic SNPs" if genotypes.skipped else ""
        log(f"read {genotypes.codes.shape[0]} SNPs x {genotypes.codes.shape[1]} individuals (ploidy "
            f"{genotypes.ploidy}) from {args.genotypes}{skipped}")
    metric = args.metric if args.metric != "auto" else ("ccc" if genotypes.ploidy == 2 else "duo")
    if metric == "ccc" and genotypes.ploidy == 1:
        raise InputError(f"{genotypes.source}: haploid genotypes have one allele per individual; use --metric duo")
    output_format = args.format
    if output_format == "auto":
        lower = (args.output or "").lower()
        output_format = "npy" if lower.endswith(".npy") else "comet" if lower.endswith(".bin") else "tsv"
    if output_format == "npy" and args.threshold is not None:
        raise InputError("--threshold writes entries (TSV or CoMet records), not a .npy of every table")
    with _dask_client(args, log) as client:
        result = ccc(genotypes, way=args.way, metric=metric, sparse=args.sparse, multiplier=args.multiplier,
                     param=args.param, threshold=args.threshold, method=args.method, device=args.device,
                     histogram=args.bins if args.histogram else None, keep_tables=bool(args.analytic),
                     client=client)  # fmt: skip
    log(f"{args.way}-way {metric.upper()}{'' if args.sparse else ' (non-sparse)'} by {result.method}: "
        f"{result.comparisons:.4g} comparisons in {result.seconds:.3f} s = {result.rate:.4g} per second, "
        f"checksum {result.checksum}")
    if args.checksum:
        print(f"checksum {result.checksum} (nonzero entries {result.checksum.entries}, value sum "
              f"{result.checksum.value_sum:.10g})", file=sys.stderr, flush=True)  # fmt: skip
    if args.analytic:
        index = all_items(genotypes.codes.shape[0], args.way)
        expected = tables(closed_form_products(index, genotypes.codes.shape[0], groups, result.metric, args.way),
                          args.way, result.metric.counted_bits)  # fmt: skip
        if not (np.array_equal(result.index, index) and np.array_equal(result.tables, expected)):
            raise InputError("analytic check FAILED: the tallies differ from the closed form")
        log(f"analytic check: all {len(index)} tables equal the closed form exactly")
        return 0
    if args.histogram:
        with atomic_output(args.histogram) as out:
            edges, counts = result.histogram["edges"], result.histogram["counts"]
            lines = ["class\tlow\thigh\tcount"]
            for name, row in zip(result.histogram["classes"], counts):
                lines += [f"{name}\t{edges[b]:.6g}\t{edges[b + 1]:.6g}\t{row[b]}" for b in range(len(row))]
            out.write(("\n".join(lines) + "\n").encode())
    with atomic_output(args.output) as out:
        _write_ccc(out, result, genotypes, output_format)
    return 0


def _write_ccc(out, result, genotypes, output_format: str) -> None:
    import numpy as np

    way = result.way
    if result.entry_index is not None:
        index, bits, value = result.entry_index, result.entry_bits, result.entry_value
    else:
        n_items = len(result.index)
        index = np.repeat(result.index, 1 << way, axis=0)
        entry = np.tile(np.arange(1 << way), n_items)
        bits = (entry[:, None] >> np.arange(way - 1, -1, -1)) & 1
        value = result.values.reshape(-1)
    if output_format == "npy":
        np.save(out, result.values)
        return
    if output_format == "comet":
        record = np.empty(len(value), dtype=[(f"i{x}", "<u4") for x in range(way)] + [("value", "<f4")])
        for x in range(way):
            record[f"i{x}"] = 2 * index[:, x] + bits[:, x]
        record["value"] = value
        out.write(record.tobytes())
        return
    names, alleles = genotypes.names, genotypes.alleles
    header = "\t".join([f"snp_{c}\tallele_{c}" for c in "ijk"[:way]] + ["value"])
    lines = [header]
    for row in range(len(value)):
        fields = []
        for x in range(way):
            vector = int(index[row, x])
            fields += [names[vector], alleles[vector][int(bits[row, x])]]
        fields.append(repr(float(value[row])))
        lines.append("\t".join(fields))
    out.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))


def _add_dp_parsers(subparsers) -> None:
    align = subparsers.add_parser(
        "align", help="global alignment scores (Needleman-Wunsch) of many pairs of sequences",
        description="Scores of target[i] against query[i] (two FASTA files), of every pair of one file "
        "(--all-vs-all), or of --pairs. Default: edit distance. Output TSV: target, query, score[, cigar].",
    )  # fmt: skip
    align.add_argument("targets", help="FASTA (plain or gzip)")
    align.add_argument("queries", nargs="?", help="FASTA; pairs by order with the targets")
    align.add_argument("--all-vs-all", action="store_true", help="every pair i < j of the targets")
    align.add_argument("--pairs", metavar="FILE", help="TSV of (target name, query name) pairs to score")
    costs = align.add_mutually_exclusive_group()
    costs.add_argument("--costs", metavar="C,X,I,D",
                       help="the seed's costs, minimised: match, mismatch, insertion, deletion (e.g. 0,1,1,1)")  # fmt: skip
    costs.add_argument("--scores", metavar="MATCH,MISMATCH,OPEN,EXTEND",
                       help="scores, maximised: match, mismatch, gap open, gap extend (e.g. 2,-3,-5,-2)")  # fmt: skip
    align.add_argument("--cigar", action="store_true", help="add each alignment as a CIGAR (M, I, D)")
    align.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                       help="where to compute (cuda needs the [cuda] extra)")  # fmt: skip
    align.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    align.add_argument("-j", "--threads", type=_positive_int, metavar="N", help="threads (default: all cores)")
    align.add_argument("-q", "--quiet", action="store_true", help="no log messages")
    align.set_defaults(handler=_run_align)

    dtw = subparsers.add_parser(
        "dtw", help="dynamic time warping distances of many pairs of signals",
        description="DTW (|a - b| cost) of signal[i] against query[i], or of every pair of one file. Signals: "
        ".npy (2-D, one series per row) or text/CSV, one series per line (commas or whitespace).",
    )  # fmt: skip
    dtw.add_argument("signals", help=".npy or text/CSV file of signals")
    dtw.add_argument("queries", nargs="?", help="a second file: pairs by order")
    dtw.add_argument("--mode", choices=("full", "open-end", "subsequence"), default="full",
                     help="full M[n][m]; open-end: min over the last row (the seed's); subsequence: free start and end")  # fmt: skip
    dtw.add_argument("--window", type=int, metavar="W", help="Sakoe-Chiba band: |i - j| <= max(W, |n - m|)")
    dtw.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                     help="where to compute (cuda: no --window; needs the [cuda] extra)")  # fmt: skip
    dtw.add_argument("--skip-columns", type=int, default=0, metavar="K",
                     help="ignore the first K values of each text line (e.g. 1 for UCR files' class labels)")  # fmt: skip
    dtw.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    dtw.add_argument("-j", "--threads", type=_positive_int, metavar="N", help="threads (default: all cores)")
    dtw.add_argument("-q", "--quiet", action="store_true", help="no log messages")
    dtw.set_defaults(handler=_run_dtw)


def _log_gcups(log, what: str, result, seconds: float) -> None:
    log(f"{len(result.scores)} {what}, {result.cells:.4g} cells in {seconds:.3f} s = "
        f"{result.cells / max(seconds, 1e-9) / 1e9:.3g} GCUPS")


def _int_list(text: str, count: int, option: str) -> list:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if len(values) != count:
        raise InputError(f"{option} needs {count} comma-separated integers, got {text!r}")
    return values


def _run_align(args) -> int:
    import time as clock

    from .dp.api import align
    from .dp.costs import Costs
    from .io.fasta import read_sequences

    log = _Log(args.quiet)
    if args.costs:
        costs = Costs.seed(*_int_list(args.costs, 4, "--costs"))
    elif args.scores:
        costs = Costs.scores(*_int_list(args.scores, 4, "--scores"))
    else:
        costs = Costs.edit()
    targets = read_sequences(args.targets, iupac_as_n=True)
    queries = read_sequences(args.queries, iupac_as_n=True) if args.queries else None
    if queries is None and not (args.all_vs_all or args.pairs):
        raise InputError("give a second FASTA (pairs by order), --all-vs-all, or --pairs")
    pairs = None
    if args.pairs:
        pairs = _named_pairs(args.pairs, targets.names, (queries or targets).names)
    started = clock.perf_counter()
    result = align(targets, queries if queries is not None else (targets if pairs is not None else None),
                   costs=costs, pairs=pairs, cigar=args.cigar, threads=args.threads, device=args.device)  # fmt: skip
    _log_gcups(log, "alignments", result, clock.perf_counter() - started)
    query_names = (queries or targets).names
    lines = ["target\tquery\tscore" + ("\tcigar" if args.cigar else "")]
    for k, (t, q) in enumerate(result.pairs):
        line = f"{targets.names[t]}\t{query_names[q]}\t{result.scores[k]}"
        lines.append(line + (f"\t{result.cigars[k]}" if args.cigar else ""))
    with atomic_output(args.output) as out:
        out.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    return 0


def _named_pairs(path: str, target_names: list, query_names: list):
    import numpy as np

    targets = {name: i for i, name in enumerate(target_names)}
    queries = {name: i for i, name in enumerate(query_names)}
    pairs = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                fields = line.split()
                if not fields or fields[0].startswith("#"):
                    continue
                if len(fields) < 2 or fields[0] not in targets or fields[1] not in queries:
                    raise InputError(f"{path}: line {number}: expected a target name and a query name, got {line.strip()!r}")
                pairs.append((targets[fields[0]], queries[fields[1]]))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def _read_signals(path: str, skip: int):
    import numpy as np

    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if path.lower().endswith(".npy"):
        array = np.load(path, allow_pickle=False)
        return list(array) if array.ndim == 2 else [array]
    series = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            fields = line.replace(",", " ").split()
            if not fields:
                continue
            try:
                values = [int(x) for x in fields[skip:]]
            except ValueError:
                try:
                    values = [float(x) for x in fields[skip:]]
                except ValueError as exc:
                    raise InputError(f"{path}: line {number}: not a number ({exc})") from None
            series.append(np.array(values))
    if not series:
        raise InputError(f"{path}: no signals")
    if any(s.dtype.kind == "f" for s in series):
        series = [s.astype(np.float64) for s in series]
    return series


def _run_dtw(args) -> int:
    import time as clock

    from .dp.api import dtw

    log = _Log(args.quiet)
    signals = _read_signals(args.signals, args.skip_columns)
    queries = _read_signals(args.queries, args.skip_columns) if args.queries else None
    started = clock.perf_counter()
    result = dtw(signals, queries, mode=args.mode, window=args.window, threads=args.threads, device=args.device)
    _log_gcups(log, "DTW distances", result, clock.perf_counter() - started)
    lines = ["i\tj\tdistance"] + [f"{i}\t{j}\t{value!r}" if isinstance(value, float) else f"{i}\t{j}\t{value}"
                                   for (i, j), value in zip(result.pairs.tolist(), result.scores.tolist())]  # fmt: skip
    with atomic_output(args.output) as out:
        out.write(("\n".join(lines) + "\n").encode())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seqcompare",
        description="Exact all-pairs comparison of sequences and genotype vectors at hardware speed.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"seqcompare {__version__}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    _add_hamming_parser(subparsers)
    _add_scan_parser(subparsers)
    _add_ccc_parser(subparsers)
    _add_dp_parsers(subparsers)
    _add_simulate_parser(subparsers)
    return parser


def _add_simulate_parser(subparsers) -> None:
    parser = subparsers.add_parser("simulate", help="write seeded simulated inputs for benchmarks and tests")
    kinds = parser.add_subparsers(title="what to simulate", dest="kind", metavar="KIND", required=True)
    aln = kinds.add_parser("alignment", help="a DNA alignment of related sequences (outbreak-like)")
    aln.add_argument("-n", "--sequences", type=_positive_int, required=True, help="number of sequences")
    aln.add_argument("-l", "--length", type=_positive_int, required=True, help="alignment length")
    aln.add_argument("--seed", type=int, default=0)
    aln.add_argument("--substitution-rate", type=float, default=0.015)
    aln.add_argument("--n-rate", type=float, default=0.005)
    aln.add_argument("--gap-runs", type=_non_negative_int, default=3)
    aln.add_argument("--lineages", type=_positive_int, default=8, help="founder lineages (default: 8)")
    aln.add_argument("--private-rate", type=float, metavar="RATE",
                     help="substitutions per site each sequence gains on its own (default: substitution rate / 2)")
    aln.add_argument("--width", type=_non_negative_int, default=0, help="wrap lines (0: one line per record)")
    aln.add_argument("-o", "--output", metavar="FILE", help="FASTA output (default: stdout)")
    aln.set_defaults(handler=_run_simulate_alignment)

    sc = kinds.add_parser("scan", help="signatures (FASTA) and samples (FASTQ) as the course's generators make them")
    sc.add_argument("--signatures", type=_non_negative_int, default=1000, help="number of signatures (1000)")
    sc.add_argument("--signature-length", type=_positive_int, nargs=2, default=(3000, 10000), metavar=("MIN", "MAX"))
    sc.add_argument("--clean-samples", type=_non_negative_int, default=2000, help="virus-free samples (2000)")
    sc.add_argument("--infected-samples", type=_non_negative_int, default=20, help="samples carrying signatures (20)")
    sc.add_argument("--max-per-sample", type=_positive_int, default=2,
                    help="an infected sample carries 1..this many signatures (2)")  # fmt: skip
    sc.add_argument("--sample-length", type=_non_negative_int, nargs=2, default=(100_000, 200_000),
                    metavar=("MIN", "MAX"))  # fmt: skip
    sc.add_argument("--phred", type=_non_negative_int, nargs=2, default=(10, 30), metavar=("MIN", "MAX"),
                    help="range of per-sample mean Phred scores (10 30)")  # fmt: skip
    sc.add_argument("--n-ratio", type=float, default=0.1, help="probability that a base is N (0.1)")
    sc.add_argument("--seed", type=int, default=0)
    sc.add_argument("--stamp", help="name stamp: sample_<stamp>_<k> (default: the seed)")
    sc.add_argument("--samples-out", metavar="FASTQ", required=True)
    sc.add_argument("--signatures-out", metavar="FASTA", required=True)
    sc.add_argument("--truth", metavar="TSV", help="also write where signatures were planted")
    sc.set_defaults(handler=_run_simulate_scan)


def _run_simulate_alignment(args) -> int:
    from .simulate import format_fasta, simulate_alignment

    names, sequences = simulate_alignment(
        args.sequences, args.length, seed=args.seed, substitution_rate=args.substitution_rate,
        n_rate=args.n_rate, gap_runs=args.gap_runs, lineages=args.lineages, private_rate=args.private_rate,
    )  # fmt: skip
    with atomic_output(args.output) as out:
        for chunk in format_fasta(names, sequences, width=args.width):
            out.write(chunk)
    return 0


def _run_simulate_scan(args) -> int:
    from .simulate import simulate_scan, write_fastq, write_sequences_fasta

    if not 0.0 <= args.n_ratio <= 1.0:
        raise InputError(f"--n-ratio must be between 0 and 1, got {args.n_ratio}")
    data = simulate_scan(
        n_signatures=args.signatures, signature_length=tuple(sorted(args.signature_length)),
        n_clean=args.clean_samples, n_infected=args.infected_samples, max_per_sample=args.max_per_sample,
        sample_length=tuple(sorted(args.sample_length)), phred=tuple(sorted(args.phred)), n_ratio=args.n_ratio,
        seed=args.seed, stamp=args.stamp,
    )  # fmt: skip
    outputs = [(args.samples_out, lambda handle: write_fastq(handle, data.samples)),
               (args.signatures_out, lambda handle: write_sequences_fasta(handle, data.signatures))]  # fmt: skip
    if args.truth:
        def write_truth(handle):
            handle.write(b"sample\tsignature\toffset\n")
            for i, s, o in data.planted:
                handle.write(f"{data.samples.names[i]}\t{data.signatures.names[s]}\t{o}\n".encode())

        outputs.append((args.truth, write_truth))
    for path, write in outputs:
        with atomic_output(path) as out:
            write(out)
    return 0


@contextlib.contextmanager
def _numba_without_blas_probe():
    """Keep Numba from importing SciPy's BLAS while its CPU target loads, for this command only.

    When SciPy is installed, Numba's first dispatch imports ``scipy.linalg.cython_blas`` to see whether
    ``np.dot`` can be compiled: 0.15-0.3 s of every CLI run (see docs/DEVELOPING.md). No seqcompare kernel
    calls BLAS from Numba; the ``matrix`` method's BLAS is NumPy's own, which this does not touch.
    """
    name = "scipy.linalg.cython_blas"
    blocked = name not in sys.modules
    if blocked:
        sys.modules[name] = None  # an import of it now fails fast with ImportError
    try:
        yield
    finally:
        if blocked and sys.modules.get(name, 0) is None:
            del sys.modules[name]


def entry() -> None:
    """The ``seqcompare`` console script: :func:`main`, then an immediate exit once the output is flushed.

    Skipping the interpreter's teardown (CuPy's memory pools and CUDA context, Numba's state) saves ~0.3 s
    per GPU run; every output file is complete and renamed before :func:`main` returns."""
    status = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``seqcompare`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        with _numba_without_blas_probe():
            return args.handler(args)
    except (InputError, DeviceError) as exc:
        print(f"seqcompare: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # Downstream closed the pipe (e.g. `| head`): not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
        return 0
    except KeyboardInterrupt:
        print("seqcompare: interrupted", file=sys.stderr)
        return 130
