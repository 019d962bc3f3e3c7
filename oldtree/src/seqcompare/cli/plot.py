"""``seqcompare plot heatmap``: a distance matrix as a picture (needs the ``[plot]`` extra, matplotlib)."""

from __future__ import annotations

import os

from ..errors import InputError
from .common import HelpFormatter, add_quiet, prepare

_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="pictures of results: a heatmap of a distance matrix",
        description="Pictures of seqcompare's results (matplotlib, the [plot] extra).",
        formatter_class=HelpFormatter,
    )
    kinds = parser.add_subparsers(title="pictures", dest="picture", metavar="PICTURE", required=True)
    heat = kinds.add_parser(
        "heatmap",
        help="a distance matrix, ordered by single linkage",
        description="Draw a distance matrix written by seqcompare hamming (the table, --format phylip, or --npy "
        "with its names file) as a heatmap, rows and columns in single-linkage order so that clusters are blocks "
        "on the diagonal; names are written when they fit.",
        formatter_class=HelpFormatter,
    )
    heat.add_argument("matrix", help="the matrix: a table (TSV/CSV with a header of names), PHYLIP, or .npy")
    heat.add_argument("-o", "--output", required=True, metavar="FILE", help="the picture: .png, .svg or .pdf")
    heat.add_argument("--names", metavar="FILE", help="for .npy: the names file (default: MATRIX.names.tsv)")
    heat.add_argument("--order", choices=("cluster", "input"), default="cluster",
                      help="single-linkage order (square matrices) or the input's")  # fmt: skip
    heat.add_argument("--title", help="the title (default: the matrix file's name and size)")
    heat.add_argument("--label", default="distance", help="the colour bar's label")
    heat.add_argument("--max-labels", type=int, default=80, metavar="N",
                      help="write the names of up to N rows and columns")  # fmt: skip
    heat.add_argument("--vmax", type=float, metavar="D", help="the distance at the top of the colour scale")
    add_quiet(heat)
    heat.set_defaults(handler=run_command)


def run_command(args) -> int:
    from ..io.output import open_output
    from ..plot.api import heatmap, read_matrix
    from .common import Log

    log = Log(args.quiet)
    suffix = os.path.splitext(args.output)[1].lower()
    if suffix not in _FORMATS:
        raise InputError(f"-o {args.output}: the picture's format comes from its suffix: .png, .svg or .pdf")
    try:
        import matplotlib  # noqa: F401  (checked before anything is read)
    except ImportError:
        raise InputError("plotting needs matplotlib: pip install 'seqcompare[plot]'") from None
    prepare(args, [args.matrix, args.names], {"-o": args.output})
    matrix, rows, columns = read_matrix(args.matrix, args.names)
    log(f"read a {matrix.shape[0]} x {matrix.shape[1]} matrix from {args.matrix}")
    with open_output(args.output) as out:
        title = args.title if args.title is not None else (
            f"{os.path.basename(args.matrix)}: {matrix.shape[0]} x {matrix.shape[1]}")
        heatmap(matrix, rows, out, column_names=columns, order=args.order, title=title, label=args.label,
                max_labels=args.max_labels, file_format=_FORMATS[suffix], vmax=args.vmax)  # fmt: skip
    log(f"wrote {args.output}")
    return 0
