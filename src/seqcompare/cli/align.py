"""``seqcompare align``: global alignment scores (Needleman-Wunsch) of many pairs of sequences."""

from __future__ import annotations

from ..errors import InputError
from .common import HelpFormatter, Log, add_common, check_cluster_options, dask_client, int_list, prepare


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "align", help="global alignment scores (Needleman-Wunsch) of many pairs of sequences",
        description="Scores of target[i] against query[i] (two FASTA files), of every pair of one file "
        "(--all-vs-all), or of --pairs. Default: edit distance. Output TSV: target, query, score[, cigar].",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("targets", help="FASTA (plain or gzip; '-' for standard input)")
    parser.add_argument("queries", nargs="?", help="FASTA; pairs by order with the targets")
    parser.add_argument("--all-vs-all", action="store_true", help="every pair i < j of the targets (one file)")
    parser.add_argument("--pairs", metavar="FILE", help="TSV of (target name, query name) pairs to score")
    costs = parser.add_mutually_exclusive_group()
    costs.add_argument("--costs", metavar="C,X,I,D",
                       help="costs to minimise: match, mismatch, insertion, deletion (e.g. 0,1,1,1, the edit "
                            "distance)")  # fmt: skip
    costs.add_argument("--scores", metavar="MATCH,MISMATCH,OPEN,EXTEND",
                       help="scores to maximise: match, mismatch, gap open, gap extend (e.g. 2,-3,-5,-2)")  # fmt: skip
    parser.add_argument("--cigar", action="store_true", help="add each alignment as a CIGAR (M, I, D)")
    add_common(parser, cluster=True)
    parser.set_defaults(handler=run_command)


def run_command(args) -> int:
    from ..align.costs import Costs

    if args.all_vs_all and args.queries:
        raise InputError("--all-vs-all compares the targets with each other; do not give a second FASTA too")
    if args.all_vs_all and args.pairs:
        raise InputError("--all-vs-all and --pairs choose the pairs differently; give one")
    if args.queries is None and not (args.all_vs_all or args.pairs):
        raise InputError("give a second FASTA (pairs by order), --all-vs-all, or --pairs")
    if args.costs:
        costs = Costs.seed(*int_list(args.costs, 4, "--costs"))
    elif args.scores:
        costs = Costs.scores(*int_list(args.scores, 4, "--scores"))
    else:
        costs = Costs.edit()
    check_cluster_options(args)
    prepare(args, [args.targets, args.queries, args.pairs], start_cuda=args.cluster == "none" and not args.scheduler)
    log = Log(args.quiet)

    import time

    from ..align.api import align
    from ..io.fasta import read_sequences
    from ..io.output import open_output

    targets = read_sequences(args.targets, iupac_as_n=True)
    queries = read_sequences(args.queries, iupac_as_n=True) if args.queries else None
    log.duplicates(args.targets, targets.names)
    if queries is not None:
        log.duplicates(args.queries, queries.names)
    pairs = None
    if args.pairs:
        pairs = _named_pairs(args.pairs, targets.names, (queries or targets).names)
    with dask_client(args, log) as client:
        started = time.perf_counter()
        result = align(targets, queries if queries is not None else (targets if pairs is not None else None),
                       costs=costs, pairs=pairs, cigar=args.cigar, threads=args.threads, device=args.device,
                       progress=log.progress, client=client)  # fmt: skip
    log_rate(log, "alignments", result, time.perf_counter() - started)
    query_names = (queries or targets).names
    lines = ["target\tquery\tscore" + ("\tcigar" if args.cigar else "")]
    for k, (t, q) in enumerate(result.pairs):
        line = f"{targets.names[t]}\t{query_names[q]}\t{result.scores[k]}"
        lines.append(line + (f"\t{result.cigars[k]}" if args.cigar else ""))
    with open_output(args.output) as out:
        out.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    return 0


def log_rate(log, what: str, result, seconds: float) -> None:
    log(f"{len(result.scores)} {what}, {result.cells:.4g} cells in {seconds:.3f} s = "
        f"{result.cells / max(seconds, 1e-9) / 1e9:.3g} GCUPS")


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
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not text") from None
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)
