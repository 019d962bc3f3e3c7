"""``seqcompare dtw``: dynamic time warping distances of many pairs of signals."""

from __future__ import annotations

from .common import (HelpFormatter, Log, add_common, check_cluster_options, dask_client, non_negative_int,
                     positive_int, prepare)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "dtw", help="dynamic time warping distances of many pairs of signals",
        description="DTW (|a - b| cost) of signal[i] against query[i], or of every pair of one file. Signals: "
        ".npy (2-D, one series per row) or text/CSV, one series per line (commas or whitespace).",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("signals", help=".npy or text/CSV file of signals ('-': text on standard input)")
    parser.add_argument("queries", nargs="?", help="a second file: pairs by order (one series in either file: "
                        "that series against every one of the other)")
    parser.add_argument("--query", metavar="FILE",
                        help="search: every series of FILE against every series of SIGNALS (pairs: i the signal, "
                             "j the query), each query sent to the GPU once. Text queries take float32 when the "
                             "signals are a float32 .npy")  # fmt: skip
    parser.add_argument("--top", type=positive_int, metavar="N",
                        help="with --query: write each query's N nearest signals only, as j, rank (1 = nearest), i, "
                             "distance; ties go to the earlier signal")  # fmt: skip
    parser.add_argument("--mode", choices=("full", "open-end", "subsequence"), default="full",
                        help="full: the whole of both series; open-end: the signal may end early (the minimum over "
                             "the last row); subsequence: the query may match any stretch of the signal")  # fmt: skip
    parser.add_argument("--window", type=non_negative_int, metavar="W",
                        help="Sakoe-Chiba band of W cells beyond the diagonal, widened on the side of the longer "
                             "series by the length difference: as dtaidistance's window=W+1 and tslearn's "
                             "sakoe_chiba_radius=W (CPU only)")  # fmt: skip
    parser.add_argument("--skip-columns", type=non_negative_int, default=0, metavar="K",
                        help="ignore the first K values of each text line (e.g. 1 for UCR files' class labels)")  # fmt: skip
    add_common(parser, cluster=True)
    parser.set_defaults(handler=run_command)


def run_command(args) -> int:
    from ..errors import InputError

    check_cluster_options(args)
    if args.query and args.queries:
        raise InputError("give queries either as a second file (pairs by order) or with --query (a search), not both")
    if args.top is not None and not args.query:
        raise InputError("--top ranks the signals of a search: give the queries with --query")
    prepare(args, [args.signals, args.queries, args.query], start_cuda=args.cluster == "none" and not args.scheduler)
    log = Log(args.quiet)

    import time

    from ..align.api import dtw
    from ..io.output import open_output
    from ..io.signals import read_signals
    from .align import log_rate

    import numpy as np

    signals = read_signals(args.signals, args.skip_columns)
    queries = read_signals(args.queries or args.query, args.skip_columns) if (args.queries or args.query) else None
    pairs = None
    if args.query:
        n_signals, n_queries = len(signals), len(queries)
        if n_queries > 1:
            pairs = np.stack([np.tile(np.arange(n_signals), n_queries), np.repeat(np.arange(n_queries), n_signals)], 1)
        elif n_signals == 1:
            pairs = np.zeros((1, 2), dtype=np.int64)
    if isinstance(signals, np.ndarray) and signals.dtype == np.float32 and isinstance(queries, list):
        # Text has no width of its own: a text query of float32 signals is read as float32.
        queries = [q.astype(np.float32) for q in queries]
    with dask_client(args, log) as client:
        started = time.perf_counter()
        result = dtw(signals, queries, mode=args.mode, window=args.window, pairs=pairs, threads=args.threads,
                     device=args.device, progress=log.progress, client=client)  # fmt: skip
    log_rate(log, "DTW distances", result, time.perf_counter() - started)
    if args.top is not None:
        result = result.best(args.top)
    scores = result.scores.tolist()
    if result.scores.dtype == np.float32:  # NumPy's shortest text that reads back as the same float32, in C
        scores = result.scores.astype(str).tolist()
    scores = [repr(value) if isinstance(value, float) else str(value) for value in scores]
    if args.top is None:
        lines = ["i\tj\tdistance"] + [f"{i}\t{j}\t{value}" for (i, j), value in zip(result.pairs.tolist(), scores)]
    else:
        from ..align.api import run_ranks

        ranks = run_ranks(result.pairs[:, 1]).tolist()
        lines = ["j\trank\ti\tdistance"] + [f"{j}\t{rank}\t{i}\t{value}"
                                             for (i, j), rank, value in zip(result.pairs.tolist(), ranks, scores)]  # fmt: skip
    with open_output(args.output) as out:
        out.write(("\n".join(lines) + "\n").encode())
    return 0
