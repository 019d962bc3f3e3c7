"""``seqcompare scan``: which signatures (viral genomes, genes, primers) occur in which FASTQ samples."""

from __future__ import annotations

from ..errors import InputError
from .common import HelpFormatter, Log, add_common, check_cluster_options, dask_client, positive_int, prepare


def add_parser(subparsers) -> None:
    from ..scan.common import DEFAULT_K, MAX_K, METHODS, REPORTS

    parser = subparsers.add_parser(
        "scan",
        help="which signatures (e.g. viral genomes) occur in which FASTQ samples, exactly",
        description="Find every (sample, signature) pair where the whole signature occurs in the sample, "
        "'N' on either side matching any base. Default output, one line per match: "
        "'sample: signature (confidence)', confidence = mean Phred score over the occurrence.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("samples", help="FASTQ samples (plain or gzip; '-' for standard input)")
    parser.add_argument("signatures", help="FASTA signatures (plain or gzip)")
    parser.add_argument("--report", choices=REPORTS, default="first",
                        help="per pair: leftmost occurrence, highest confidence, or every occurrence")  # fmt: skip
    parser.add_argument("--tsv", action="store_true",
                        help="tab-separated with a header: sample, signature, offset (0-based), score")  # fmt: skip
    parser.add_argument("--integrity-hash", action="store_true",
                        help="add [sum of the sample's Phred scores mod 97] to each line, a check that two runs "
                             "read the same qualities")  # fmt: skip
    parser.add_argument("--min-score", type=float, metavar="S",
                        help="occurrences with confidence below S do not count")  # fmt: skip
    parser.add_argument("--both-strands", action="store_true",
                        help="also match the reverse complement of each signature")  # fmt: skip
    parser.add_argument("--iupac-as-n", action="store_true",
                        help="read IUPAC codes other than N (R, Y, K, ...) as N instead of refusing them")  # fmt: skip
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="index: k-mer index with an exact fallback (auto); reference: brute force (slow)")  # fmt: skip
    parser.add_argument("--kmer", type=positive_int, default=DEFAULT_K, metavar="K",
                        help=f"k-mer length of the signatures' index, 1..{MAX_K}; changes the speed, never the result")  # fmt: skip
    add_common(parser, cluster=True)
    parser.set_defaults(handler=run_command)


def run_command(args) -> int:
    from ..scan import gpu_helper
    from ..scan.common import MAX_K

    if not 1 <= args.kmer <= MAX_K:
        raise InputError(f"--kmer must be between 1 and {MAX_K}, not {args.kmer}")
    check_cluster_options(args)
    on_cluster = args.cluster != "none" or args.scheduler is not None
    if on_cluster and args.method == "reference":
        raise InputError("--method reference runs in this process only; drop --cluster/--scheduler")
    helper = args.device == "cuda" and args.method != "reference" and not on_cluster and gpu_helper.supported()
    prepare(args, [args.samples, args.signatures], start_cuda=not (helper or on_cluster))
    log = Log(args.quiet)
    if helper:
        result = _scan_with_helper(args, log)
    elif on_cluster:
        result = _scan_on_cluster(args, log)
    else:
        from concurrent.futures import ThreadPoolExecutor

        from ..io.fastq import read_fastq
        from ..scan.api import prepare_signatures, scan

        # The signatures' index is built while the samples are parsed.
        with ThreadPoolExecutor(1) as background:
            prepared = background.submit(
                prepare_signatures, args.signatures, k=args.kmer, both_strands=args.both_strands,
                iupac_as_n=args.iupac_as_n, device=args.device if args.method != "reference" else None,
            )  # fmt: skip
            samples = read_fastq(args.samples, iupac_as_n=args.iupac_as_n, threads=args.threads)
            log(f"read {len(samples)} samples ({samples.codes.size} bases) from {args.samples}")
            signatures = prepared.result()
        log(f"indexed {len(signatures.signatures)} signatures ({signatures.signatures.codes.size} bases) from "
            f"{args.signatures}")
        _warn_duplicates(log, args, samples, signatures.signatures)
        result = scan(samples, signatures, report=args.report, min_score=args.min_score,
                      both_strands=args.both_strands, k=args.kmer, method=args.method, device=args.device,
                      threads=args.threads, progress=log.progress)  # fmt: skip
    log(f"found {len(result)} matches")
    _write(args, result)
    return 0


def _scan_on_cluster(args, log):
    """``--cluster``/``--scheduler``: chunks of samples over the workers, each building the index once."""
    from ..io.fastq import read_fastq
    from ..scan.api import prepare_signatures, scan

    prepared = prepare_signatures(args.signatures, k=args.kmer, both_strands=args.both_strands,
                                  iupac_as_n=args.iupac_as_n, device=None)  # fmt: skip
    samples = read_fastq(args.samples, iupac_as_n=args.iupac_as_n, threads=args.threads)
    log(f"read {len(samples)} samples ({samples.codes.size} bases) from {args.samples}")
    _warn_duplicates(log, args, samples, prepared.signatures)
    with dask_client(args, log) as client:
        return scan(samples, prepared, report=args.report, min_score=args.min_score, both_strands=args.both_strands,
                    k=args.kmer, device=args.device, progress=log.progress, client=client)  # fmt: skip


def _warn_duplicates(log, args, samples, signatures) -> None:
    log.duplicates(args.samples, samples.names, "sample name")
    log.duplicates(args.signatures, signatures.names, "signature name")


def _write(args, result) -> None:
    from ..io.output import open_output

    text = "".join(line + "\n" for line in result.lines(tsv=args.tsv, integrity=args.integrity_hash))
    with open_output(args.output) as out:
        out.write(text.encode("utf-8", "surrogateescape"))


def _scan_with_helper(args, log):
    """``--device cuda``: a forked helper starts CUDA while this process reads the inputs and does the
    compiled CPU passes (see :mod:`seqcompare.scan.gpu_helper`). The helper is forked first, before this
    process imports Numba, so that its CuPy import and CUDA start overlap all of this process's work."""
    from ..scan.gpu_helper import ScanHelper

    with ScanHelper() as helper:
        from ..allpairs import default_threads
        from ..io.fastq import read_fastq
        from ..scan.api import prepare_signatures, scan_result

        threads = args.threads or default_threads()
        prepared = prepare_signatures(args.signatures, k=args.kmer, both_strands=args.both_strands,
                                      iupac_as_n=args.iupac_as_n, device=None)  # fmt: skip
        log(f"read {len(prepared.signatures)} signatures ({prepared.signatures.codes.size} bases) from "
            f"{args.signatures}")
        samples = read_fastq(args.samples, iupac_as_n=args.iupac_as_n, threads=threads)
        log(f"read {len(samples)} samples ({samples.codes.size} bases) from {args.samples}")
        _warn_duplicates(log, args, samples, prepared.signatures)
        threshold = -1.0 if args.min_score is None else float(args.min_score)
        rows = helper.rows(samples, prepared, args.report != "first", threshold, threads)
        log("scanned on the GPU by a helper process (" + ", ".join(f"{name[:-2].replace('_', ' ')} {value:.3f} s"
                                                               for name, value in helper.timings.items()) + ")")
    return scan_result(samples, prepared, rows, args.report)
