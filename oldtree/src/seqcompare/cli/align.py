"""``seqcompare align``: alignment scores of many pairs of sequences, in every mode, with positions,
statistics, CIGARs, both strands, and score or identity matrices."""

from __future__ import annotations

from ..errors import InputError
from .common import (HelpFormatter, Log, add_common, check_cluster_options, dask_client, int_list, positive_int,
                     prepare)

MODES = ("global", "local", "semi-global", "infix", "prefix")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "align", help="alignment scores (global, local, semi-global, infix, prefix) of many pairs of sequences",
        description="Scores of target[i] against query[i] (two FASTA files), of every pair of one file "
        "(--all-vs-all), or of --pairs. Default: global edit distance. Output TSV: target, query, score; with any "
        "mode option also target_end and query_end (0-based, inclusive), and with --stats, --cigar or "
        "--both-strands target_start, target_end, query_start, query_end (an empty alignment starts one past "
        "its end), then strand, statistics and cigar as asked. --format matrix writes "
        "a score or identity matrix instead; --top N a database search's hits: each query's N best targets.",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("targets", help="FASTA or FASTQ (plain or gzip; '-' for standard input, FASTA)")
    parser.add_argument("queries", nargs="?", help="FASTA or FASTQ; pairs by order with the targets")
    parser.add_argument("--all-vs-all", action="store_true", help="every pair i < j of the targets (one file)")
    parser.add_argument("--pairs", metavar="FILE", help="TSV of (target name, query name) pairs to score")
    costs = parser.add_mutually_exclusive_group()
    costs.add_argument("--costs", metavar="C,X,I,D",
                       help="costs to minimise: match, mismatch, insertion, deletion (e.g. 0,1,1,1, the edit "
                            "distance)")  # fmt: skip
    costs.add_argument("--scores", metavar="MATCH,MISMATCH,OPEN,EXTEND",
                       help="scores to maximise: match, mismatch, gap open, gap extend (e.g. 2,-3,-5,-2; a gap of L "
                            "scores OPEN + L x EXTEND)")  # fmt: skip
    costs.add_argument("--matrix", metavar="NAME|FILE",
                       help="substitution matrix to maximise: BLOSUM45/50/62/80/90, PAM250, NUC.4.4, or a file in "
                            "the NCBI format; its letters are the alphabet. Needs --gap-open and --gap-extend")  # fmt: skip
    parser.add_argument("--gap-open", type=int, metavar="O",
                        help="with --matrix: a gap of L costs O + (L - 1) x E (parasail's convention; 11 and 1 are "
                             "CUDASW++'s default with BLOSUM62; BLAST's 11/1 is 12 and 1)")  # fmt: skip
    parser.add_argument("--gap-extend", type=int, metavar="E", help="with --matrix: see --gap-open")
    parser.add_argument("--mode", choices=MODES, default="global",
                        help="global: end to end; local: Smith-Waterman; semi-global: end gaps free (parasail's "
                             "sg); infix: the whole query anywhere in the target (edlib's HW); prefix: the whole "
                             "query against a prefix of the target (edlib's SHW)")  # fmt: skip
    parser.add_argument("--alphabet", choices=("dna", "protein", "bytes"),
                        help="letters without --matrix: dna (ACGTN, other IUPAC codes as N; the default), protein "
                             "(20 amino acids, B, Z, X, *), bytes (any byte, case-sensitive)")  # fmt: skip
    parser.add_argument("--both-strands", action="store_true",
                        help="DNA: also align each query's reverse complement and keep the better strand (a strand "
                             "column: + or -; positions stay on the query as given)")  # fmt: skip
    parser.add_argument("--stats", action="store_true",
                        help="add matches, similar (positive scores), mismatches, gap_columns, length and identity "
                             "(matches / length), as parasail's _stats functions count them")  # fmt: skip
    parser.add_argument("--cigar", action="store_true", help="add each alignment as a CIGAR (M, I: target letter "
                        "against a gap, D: query letter against a gap)")  # fmt: skip
    parser.add_argument("--format", choices=("tsv", "matrix"), default="tsv",
                        help="matrix: a table of every target (rows) against every query (columns), or of every "
                             "pair of one file with --all-vs-all (symmetric; infix and prefix are not, so every "
                             "ordered pair is aligned)")  # fmt: skip
    parser.add_argument("--top", type=positive_int, metavar="N",
                        help="a search: align every target with every query (with --all-vs-all, every ordered pair "
                             "of different records; with --pairs, those) and write each query's N best targets, "
                             "as query, rank (1 = best), target, score, then the columns above; ties go to the "
                             "earlier target")  # fmt: skip
    parser.add_argument("--value", choices=("score", "identity"), default="score",
                        help="what --format matrix holds")
    add_common(parser, cluster=True)
    parser.set_defaults(handler=run_command)


def run_command(args) -> int:
    from ..align.costs import Costs

    _check_mode_options(args)
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
        costs = None if args.matrix else Costs.edit()
    check_cluster_options(args)
    prepare(args, [args.targets, args.queries, args.pairs], start_cuda=args.cluster == "none" and not args.scheduler)
    log = Log(args.quiet)

    import time

    from ..align.api import align
    from ..io.output import open_output

    in_mode = _in_mode(args)
    matrix = None
    if in_mode and args.matrix:
        from ..align.matrices import substitution_matrix

        matrix = substitution_matrix(args.matrix)  # read once: it gives the alphabet here and the scores to align
    options = {"mode": args.mode, "matrix": matrix, "gap_open": args.gap_open, "gap_extend": args.gap_extend,
               "alphabet": args.alphabet, "both_strands": args.both_strands,
               "stats": args.stats or args.value == "identity"} if in_mode else {}
    targets, queries = _read(args, in_mode, matrix)
    log.duplicates(args.targets, targets.names)
    if queries is not None:
        log.duplicates(args.queries, queries.names)
    query_set = queries if queries is not None else targets
    pairs = None
    if args.pairs:
        pairs = _named_pairs(args.pairs, targets.names, query_set.names)
    elif args.top is not None:
        from ..align.api import every_pair

        pairs = every_pair(len(targets), None if queries is None else len(queries))
    elif args.format == "matrix":
        pairs = _matrix_plan(len(targets), len(query_set), queries is None and args.mode not in ("infix", "prefix"))
    second = queries if queries is not None else (targets if pairs is not None else None)
    with dask_client(args, log) as client:
        started = time.perf_counter()
        run = lambda **chosen: align(targets, second, costs=costs, threads=args.threads, device=args.device,  # noqa: E731
                                     client=client, **chosen)  # fmt: skip
        if args.top is not None and _hits_again(args, in_mode):
            result = _search_hits(run, pairs, args.top, args.cigar, options, log.progress)
        else:
            result = run(pairs=pairs, cigar=args.cigar, progress=log.progress, **options)
            if args.top is not None:
                result = result.best(args.top)
    log_rate(log, "alignments", result, time.perf_counter() - started, len(pairs) if args.top is not None else None)
    if args.format == "matrix":
        text = _matrix_text(result, targets.names, query_set.names, args.value, queries is None)
    elif args.top is not None:
        text = _table_text(result, targets.names, query_set.names, args, ranked=True)
    else:
        text = _table_text(result, targets.names, query_set.names, args)
    with open_output(args.output) as out:
        out.write(text.encode("utf-8", "surrogateescape"))
    return 0


def _hits_again(args, in_mode: bool) -> bool:
    """Whether a search (``--top``) scores every pair alone first, then aligns its hits again for the rest: where
    statistics or CIGARs are asked (the paths then cost only the hits), or a mode's ends on the GPU (its
    scores-only pass is faster). On the CPU the scores' pass finds the ends anyway. Both strands keep one pass:
    a strand's choice needs the paths."""
    if args.both_strands:
        return False
    if args.stats or args.cigar:
        return True
    if not in_mode or args.device == "cpu":
        return False
    from ..cuda.runtime import resolve_device

    return resolve_device(args.device) == "cuda"


def _search_hits(run, pairs, top: int, cigar: bool, options: dict, progress):
    """Each query's ``top`` best hits of a search, in two passes: every pair's score alone (the GPU's fastest
    pass; no positions, statistics or CIGARs), then the hits again with everything asked. The second pass must
    give the first's scores (the same model on the same pairs), which is checked."""
    import numpy as np

    first = run(pairs=pairs, progress=progress, **{**options, "stats": False}, positions=False)
    best = first.best(top)
    hits = run(pairs=best.pairs, cigar=cigar, **options)
    if not np.array_equal(hits.scores, best.scores):
        raise AssertionError("the hits' second pass does not give the scores of the search")
    hits.cells = first.cells
    return hits


def _in_mode(args) -> bool:
    """Whether any option needs the modes' path (positions and statistics)."""
    return bool(args.mode != "global" or args.matrix or args.alphabet or args.both_strands or args.stats
                or args.value == "identity")  # fmt: skip


def _check_mode_options(args) -> None:
    """One line for each combination the options cannot mean, before any input is read."""
    if args.matrix and (args.gap_open is None or args.gap_extend is None):
        raise InputError("--matrix needs --gap-open and --gap-extend (a gap of L costs OPEN + (L - 1) x EXTEND; "
                         "11 and 1 are CUDASW++'s default with BLOSUM62; BLAST's 11/1 is 12 and 1 here)")  # fmt: skip
    if not args.matrix and (args.gap_open is not None or args.gap_extend is not None):
        raise InputError("--gap-open and --gap-extend go with --matrix (with --scores the gaps are its OPEN and "
                         "EXTEND)")  # fmt: skip
    if args.value == "identity" and args.format != "matrix":
        raise InputError("--value chooses what --format matrix holds; with TSV output use --stats for identity")
    if args.format == "matrix" and args.pairs:
        raise InputError("--format matrix aligns every target with every query; it cannot take --pairs")
    if args.top is not None and args.format == "matrix":
        raise InputError("--top writes each query's best hits as TSV; --format matrix writes every pair: give one")
    if args.format == "matrix" and args.cigar:
        raise InputError("--format matrix holds one number per pair; --cigar needs the TSV output")


def _read(args, in_mode: bool, matrix=None):
    """The targets and queries (None without a second file), in the alphabet the options choose (``matrix``'s
    letters where one is given)."""
    from ..io.fastq import read_fasta_or_fastq

    if not in_mode:
        read = lambda path: read_fasta_or_fastq(path, iupac_as_n=True)  # noqa: E731
    else:
        from ..align.alphabets import from_letters, named

        if matrix is not None:
            alphabet = from_letters(matrix.name, matrix.letters)
        else:
            alphabet = named(args.alphabet or "dna")
        read = lambda path: read_fasta_or_fastq(path, alphabet=alphabet)  # noqa: E731
    return read(args.targets), (read(args.queries) if args.queries else None)


def _matrix_plan(n_targets: int, n_queries: int, symmetric: bool):
    """Every (target, query) pair; of one file's symmetric scores, the pairs i <= j only."""
    import numpy as np

    if symmetric:
        i, j = np.triu_indices(n_targets)
        return np.stack([i, j], axis=1).astype(np.int64)
    from ..align.api import every_pair

    return every_pair(n_targets, n_queries)


def _matrix_text(result, target_names, query_names, value: str, one_file: bool) -> str:
    """A tab-separated matrix: a header of query names, then each target's row (mirrored for one file)."""
    import numpy as np

    numbers = result.identity if value == "identity" else result.scores
    table = np.zeros((len(target_names), len(query_names)), dtype=numbers.dtype)
    t, q = result.pairs[:, 0], result.pairs[:, 1]
    if one_file:
        table[q, t] = numbers
    table[t, q] = numbers
    shown = np.char.mod("%.6g", table) if value == "identity" else table.astype(str)
    lines = ["\t" + "\t".join(query_names)]
    lines += [name + "\t" + "\t".join(row) for name, row in zip(target_names, shown.tolist())]
    return "\n".join(lines) + "\n"


def _table_text(result, target_names, query_names, args, ranked: bool = False) -> str:
    """One TSV line per pair: names, score, then positions, strand, statistics and CIGAR as asked. ``ranked``:
    pairs grouped by query, best first (:meth:`PairScores.best`), written as query, rank, target, score, ..."""
    import numpy as np

    targets = np.asarray(target_names, dtype=object)[result.pairs[:, 0]]
    queries = np.asarray(query_names, dtype=object)[result.pairs[:, 1]]
    if ranked:
        from ..align.api import run_ranks

        rank = run_ranks(result.pairs[:, 1])
        header, columns = ["query", "rank", "target", "score"], [queries, rank, targets, result.scores]
    else:
        header, columns = ["target", "query", "score"], [targets, queries, result.scores]
    if result.positions is not None and (args.stats or args.cigar or args.both_strands):
        header += ["target_start", "target_end", "query_start", "query_end"]
        columns += list(result.positions.T)
    elif result.positions is not None:  # the faster pass: ends only
        header += ["target_end", "query_end"]
        columns += [result.positions[:, 1], result.positions[:, 3]]
    if args.both_strands:
        header.append("strand")
        columns.append(np.where(result.reverse, "-", "+"))
    if args.stats:
        header += ["matches", "similar", "mismatches", "gap_columns", "length", "identity"]
        columns += [result.matches, result.counts[:, 1], result.mismatches, result.gap_columns, result.length,
                    np.char.mod("%.6g", result.identity)]  # fmt: skip
    if args.cigar:
        header.append("cigar")
        columns.append(result.cigars)
    rows = zip(*[column.tolist() if hasattr(column, "tolist") else column for column in columns])
    return "\n".join(["\t".join(header)] + ["\t".join(map(str, row)) for row in rows]) + "\n"


def log_rate(log, what: str, result, seconds: float, count: int | None = None) -> None:
    """One line: how many ``what`` (``count``, else the result's), the cells, the time and GCUPS."""
    log(f"{len(result.scores) if count is None else count} {what}, {result.cells:.4g} cells in {seconds:.3f} s = "
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
