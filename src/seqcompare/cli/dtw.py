"""``seqcompare dtw``: dynamic time warping distances of many pairs of signals."""

from __future__ import annotations

from .common import HelpFormatter, Log, add_common, check_cluster_options, dask_client, non_negative_int, prepare


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "dtw", help="dynamic time warping distances of many pairs of signals",
        description="DTW (|a - b| cost) of signal[i] against query[i], or of every pair of one file. Signals: "
        ".npy (2-D, one series per row) or text/CSV, one series per line (commas or whitespace).",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    parser.add_argument("signals", help=".npy or text/CSV file of signals ('-': text on standard input)")
    parser.add_argument("queries", nargs="?", help="a second file: pairs by order")
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
    check_cluster_options(args)
    prepare(args, [args.signals, args.queries], start_cuda=args.cluster == "none" and not args.scheduler)
    log = Log(args.quiet)

    import time

    from ..align.api import dtw
    from ..io.output import open_output
    from ..io.signals import read_signals
    from .align import log_rate

    signals = read_signals(args.signals, args.skip_columns)
    queries = read_signals(args.queries, args.skip_columns) if args.queries else None
    with dask_client(args, log) as client:
        started = time.perf_counter()
        result = dtw(signals, queries, mode=args.mode, window=args.window, threads=args.threads,
                     device=args.device, progress=log.progress, client=client)  # fmt: skip
    log_rate(log, "DTW distances", result, time.perf_counter() - started)
    lines = ["i\tj\tdistance"] + [f"{i}\t{j}\t{value!r}" if isinstance(value, float) else f"{i}\t{j}\t{value}"
                                   for (i, j), value in zip(result.pairs.tolist(), result.scores.tolist())]  # fmt: skip
    with open_output(args.output) as out:
        out.write(("\n".join(lines) + "\n").encode())
    return 0
