"""``seqcompare ccc``: CoMet's Custom Correlation Coefficient (and DUO) between every pair or triple of SNPs."""

from __future__ import annotations

import os
import sys

from ..errors import InputError
from .common import HelpFormatter, Log, add_cluster, add_output, add_quiet, add_threads, dask_client, finite_float, \
    positive_int, prepare


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "ccc",
        help="CoMet's Custom Correlation Coefficient (2-way, 3-way) or DUO between SNPs across individuals",
        description="2x2 (2x2x2) CCC tables of every pair (triple) of SNPs, exactly as CoMet defines and computes "
        "them. With --threshold only the entries above it are written (TSV: SNP, allele, ...; value), else all.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("genotypes", nargs="?",
                        help="VCF (.vcf[.gz]; '-' for a VCF on standard input), PLINK (.bed/.bim/.fam or prefix), or "
                             "CoMet's packed binary (with --num-vector and --num-field)")  # fmt: skip
    add_output(parser, "output file (default: standard output); .npy: values of every pair/triple, .bin: CoMet's "
               "records, in CoMet's order")  # fmt: skip
    parser.add_argument("--way", type=int, choices=(2, 3), default=2, help="pairs (2) or triples (3)")
    parser.add_argument("--metric", choices=("auto", "ccc", "duo"), default="auto",
                        help="auto: CCC for diploid genotypes, DUO for haploid")  # fmt: skip
    parser.add_argument("--no-sparse", dest="sparse", action="store_false",
                        help="CoMet's non-sparse mode: a missing genotype counts as one copy of each allele")  # fmt: skip
    parser.add_argument("--multiplier", type=finite_float, metavar="M",
                        help="front multiplier M > 0 (default: CoMet's 9/2 for CCC, 4 for DUO)")  # fmt: skip
    parser.add_argument("--param", type=finite_float, default=2.0 / 3.0, metavar="G",
                        help="gamma, between 0 and 1 (default: CoMet's 2/3)")  # fmt: skip
    parser.add_argument("--threshold", metavar="T",
                        help="keep entries whose value, rounded to single precision as CoMet compares it, is > T; "
                             "or tLL,tLH,tHH,tLLHH (3-way: tLLL,tLLH,tLHH,tHHH,tLLLHHH)")  # fmt: skip
    parser.add_argument("--format", choices=("auto", "tsv", "npy", "comet"), default="auto",
                        help="output format (auto: from the -o extension; TSV otherwise)")  # fmt: skip
    parser.add_argument("--checksum", action="store_true",
                        help="print the checksums on standard error, with -q too: seqcompare's (independent of "
                             "order and decomposition) and CoMet's 'metrics checksum' of the same values")  # fmt: skip
    parser.add_argument("--histogram", metavar="FILE", help="write value histograms per entry class (TSV) here")
    parser.add_argument("--bins", type=positive_int, default=100, metavar="N", help="histogram bins")
    parser.add_argument("--strict", action="store_true",
                        help="refuse VCF records that are not biallelic SNPs instead of skipping them")  # fmt: skip
    parser.add_argument("--num-vector", type=positive_int, metavar="N", help="SNPs in a CoMet binary input")
    parser.add_argument("--num-field", type=positive_int, metavar="M", help="individuals in a CoMet binary input")
    parser.add_argument("--analytic", nargs=2, type=positive_int, metavar=("N", "M"),
                        help="instead of an input: CoMet-style synthetic problem of N SNPs x M individuals, checked "
                             "exactly against its closed form")  # fmt: skip
    parser.add_argument("--method", choices=("auto", "reference", "blas", "bitmma"), default="auto",
                        help="blas: CPU GEMMs; bitmma: 1-bit tensor cores on a GPU (implies --device cuda); "
                             "reference: direct loops")  # fmt: skip
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default=None,
                        help="where to compute (default: cpu; cuda with --method bitmma)")  # fmt: skip
    add_threads(parser, "cores for a --cluster local (default: all)")
    add_quiet(parser)
    add_cluster(parser)
    parser.set_defaults(handler=run_command)


def _inputs(path: str | None) -> list:
    """The files an input names: a PLINK prefix or member stands for its three files."""
    if path is None or path == "-":
        return []
    root, extension = os.path.splitext(path)
    if extension.lower() in (".bed", ".bim", ".fam"):
        return [path] + [root + other for other in (".bed", ".bim", ".fam")]
    return [path] + [path + other for other in (".bed", ".bim", ".fam")]


def _check_options(args) -> None:
    from ..ccc.reductions import Threshold

    if args.analytic and args.genotypes is not None:
        raise InputError("--analytic makes its own problem; give either a genotype file or --analytic N M")
    if not args.analytic and args.genotypes is None:
        raise InputError("give a genotype file, or --analytic N M")
    if args.method == "bitmma" and args.device in (None, "cpu"):
        if args.device == "cpu":
            raise InputError("--method bitmma runs on a GPU; use --device cuda (or --method blas on the CPU)")
        args.device = "cuda"
    args.device = args.device or "cpu"
    if args.multiplier is not None and not args.multiplier > 0:
        raise InputError(f"--multiplier must be greater than 0, not {args.multiplier}")
    if not 0.0 <= args.param <= 1.0:
        raise InputError(f"--param (gamma) must be between 0 and 1, where every weight 1 - gamma f stays in [0, 1]; "
                         f"not {args.param}")  # fmt: skip
    if args.threshold is not None:
        try:
            args.threshold = Threshold.parse(args.threshold, args.way)
        except ValueError as exc:
            raise InputError(f"--threshold: {exc}") from None


def run_command(args) -> int:
    _check_options(args)
    prepare(args, _inputs(args.genotypes), {"-o": args.output, "--histogram": args.histogram})
    log = Log(args.quiet)
    genotypes, groups = _read(args, log)
    output_format = args.format
    if output_format == "auto":
        lower = (args.output or "").lower()
        output_format = "npy" if lower.endswith(".npy") else "comet" if lower.endswith(".bin") else "tsv"
    if output_format == "npy" and args.threshold is not None:
        raise InputError("--threshold writes entries (TSV or CoMet records), not a .npy of every table")
    from ..ccc.api import ccc

    with dask_client(args, log) as client:
        try:
            result = ccc(genotypes, way=args.way, metric=args.metric, sparse=args.sparse, multiplier=args.multiplier,
                         param=args.param, threshold=args.threshold, method=args.method, device=args.device,
                         histogram=args.bins if args.histogram else None, keep_tables=bool(args.analytic),
                         comet_checksum=args.checksum, client=client, progress=log.progress)  # fmt: skip
        except ValueError as exc:
            raise InputError(str(exc)) from None
    metric = result.metric.name
    log(f"{args.way}-way {metric.upper()}{'' if args.sparse else ' (non-sparse)'} by {result.method}: "
        f"{result.comparisons:.4g} comparisons in {result.seconds:.3f} s = {result.rate:.4g} per second, "
        f"checksum {result.checksum}")
    if args.checksum:
        print(f"checksum {result.checksum} (nonzero entries {result.checksum.entries}, value sum "
              f"{result.checksum.value_sum:.10g})", file=sys.stderr, flush=True)  # fmt: skip
        print(f"comet metrics checksum {result.comet_checksum}", file=sys.stderr, flush=True)
    if args.analytic:
        _check_analytic(args, genotypes, groups, result, log)
        return 0
    _write(args, result, genotypes, output_format)
    return 0


def _read(args, log):
    from ..ccc.analytic import analytic_problem
    from ..ccc.formulas import Metric
    from ..io.genotypes import Genotypes, read_comet, read_genotypes

    if args.analytic:
        n_vectors, n_fields = args.analytic
        metric_name = "ccc" if args.metric == "auto" else args.metric
        problem, groups = analytic_problem(n_vectors, n_fields, Metric(metric_name, args.sparse))
        genotypes = Genotypes(problem, [f"snp{i + 1}" for i in range(n_vectors)], [("A", "B")] * n_vectors,
                              [f"sample{i + 1}" for i in range(n_fields)], 2 if metric_name == "ccc" else 1,
                              "analytic")  # fmt: skip
        return genotypes, groups
    if args.num_vector or args.num_field:
        if not (args.num_vector and args.num_field):
            raise InputError("a CoMet binary input needs both --num-vector and --num-field")
        ploidy = 1 if args.metric == "duo" else 2
        genotypes = read_comet(args.genotypes, args.num_vector, args.num_field, ploidy=ploidy)
    else:
        options = {"strict": True} if args.strict and (".vcf" in args.genotypes.lower() or args.genotypes == "-") else {}
        genotypes = read_genotypes(args.genotypes, **options)
    skipped = f", skipped {genotypes.skipped} records that are not biallelic SNPs" if genotypes.skipped else ""
    log(f"read {genotypes.codes.shape[0]} SNPs x {genotypes.codes.shape[1]} individuals (ploidy "
        f"{genotypes.ploidy}) from {args.genotypes}{skipped}")
    log.duplicates(args.genotypes, genotypes.names, "SNP name")
    log.duplicates(args.genotypes, genotypes.samples, "sample name")
    if args.metric == "ccc" and genotypes.ploidy == 1:
        raise InputError(f"{args.genotypes}: haploid genotypes have one allele per individual; use --metric duo")
    return genotypes, None


def _check_analytic(args, genotypes, groups, result, log) -> None:
    import numpy as np

    from ..ccc.analytic import all_items, closed_form_products
    from ..ccc.formulas import tables

    index = all_items(genotypes.codes.shape[0], args.way)
    expected = tables(closed_form_products(index, genotypes.codes.shape[0], groups, result.metric, args.way),
                      args.way, result.metric.counted_bits)  # fmt: skip
    if not (np.array_equal(result.index, index) and np.array_equal(result.tables, expected)):
        raise InputError("analytic check FAILED: the tallies differ from the closed form")
    log(f"analytic check: all {len(index)} tables equal the closed form exactly")


def _write(args, result, genotypes, output_format: str) -> None:
    from ..io.ccc import write_comet_records, write_histogram, write_npy, write_tsv
    from ..io.output import open_output

    if args.histogram:
        with open_output(args.histogram, "--histogram") as out:
            write_histogram(out, result.histogram)
    with open_output(args.output) as out:
        if output_format == "npy":
            write_npy(out, result)
        elif output_format == "comet":
            write_comet_records(out, result)
        else:
            write_tsv(out, result, genotypes)
