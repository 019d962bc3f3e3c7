"""``seqcompare hamming``: all-pairs SNP / Hamming distances, in snp-dists' formats by default."""

from __future__ import annotations

import contextlib
import os
import tempfile

from ..errors import InputError
from .common import (
    HelpFormatter,
    Log,
    add_cluster,
    add_device,
    add_output,
    add_quiet,
    add_threads,
    dask_client,
    non_negative_int,
    positive_int,
    prepare,
)

_IN_MEMORY_MATRIX_BYTES = 2 << 30


def add_parser(subparsers) -> None:
    from ..hamming.methods import METHOD_DESCRIPTIONS, METHODS

    parser = subparsers.add_parser(
        "hamming",
        help="all-pairs Hamming / SNP distance matrix of a FASTA alignment",
        description="Pairwise SNP distances of an alignment (snp-dists 0.8.2 semantics and output by "
        "default), or query x reference distances with --ref.",
        formatter_class=HelpFormatter,
        epilog="methods:\n" + "\n".join(f"  {k:8s} {v}" for k, v in METHOD_DESCRIPTIONS.items()),
    )
    parser.add_argument("alignment", help="FASTA alignment (plain or gzip; '-' for standard input)")
    parser.add_argument("--ref", metavar="FASTA", help="reference alignment: output query x reference")
    add_output(parser, "write the table here instead of standard output")

    semantics = parser.add_argument_group("what counts as a difference")
    semantics.add_argument("-a", "--all-chars", action="store_true",
                           help="count every differing character, not just A/C/G/T")  # fmt: skip
    semantics.add_argument("-k", "--keep-case", action="store_true", help="do not upper-case sequences")
    semantics.add_argument("--iupac", action="store_true",
                           help="ambiguity codes are base sets: A vs R = 0, A vs Y = 1")  # fmt: skip
    semantics.add_argument("--missing", metavar="CHARS", default="",
                           help="characters treated as missing (never counted)")  # fmt: skip
    semantics.add_argument("-x", "--max-count", type=non_negative_int, metavar="X",
                           help="stop counting at X: report min(distance, X) (snp-dists -x)")  # fmt: skip

    model = parser.add_argument_group("models, comparable sites and clusters")
    model.add_argument("--model", choices=("snp", "p", "jc69", "k2p", "tn93"),
                       help="distance model, float64: snp (differences), p (differences / comparable sites), jc69, "
                            "k2p, or tn93 as veg/tn93 computes it (IUPAC codes, its --ambiguities rules); snp, p, "
                            "jc69 and k2p read A/C/G/T only")  # fmt: skip
    model.add_argument("--ambiguities", choices=("resolve", "average", "skip", "gapmm"), default="resolve",
                       help="tn93: how ambiguity codes count (veg/tn93 -a)")  # fmt: skip
    model.add_argument("--fraction", type=float, default=1.0, metavar="F",
                       help="tn93 with resolve: average pairs where at least this fraction of the comparable sites "
                            "resolved an ambiguity (veg/tn93 -d)")  # fmt: skip
    model.add_argument("--sites", action="store_true",
                       help="add each pair's comparable sites (both A/C/G/T; tn93: neither a gap) as a column")  # fmt: skip
    model.add_argument("--normalise", "--normalize", action="store_true",
                       help="write differences / comparable sites (the p model)")  # fmt: skip
    model.add_argument("--min-overlap", type=non_negative_int, default=0, metavar="N",
                       help="pairs with fewer than N comparable sites are missing (NA; never within --max-dist); "
                            "veg/tn93's -l L is N = L + 1")  # fmt: skip
    model.add_argument("--collapse", action="store_true",
                       help="compute each distinct sequence once (identical under the alphabet or model's rules: "
                            "hashed, then compared) and expand: the same output, faster with many duplicates")  # fmt: skip
    model.add_argument("--collapsed-out", metavar="MAP",
                       help="write the result over distinct sequences only (each named by its first occurrence) and "
                            "in MAP each sequence's name and its representative's (hammingdist's remove_duplicates)")  # fmt: skip
    model.add_argument("--diff-sites", metavar="FILE",
                       help="write each pair's differing sites to FILE: names, column (1-based) and the two bases, "
                            "for the pairs within --max-dist or those of --diff-pairs")  # fmt: skip
    model.add_argument("--diff-pairs", metavar="TSV",
                       help="with --diff-sites: the pairs to list, the first two fields of each line (this command's "
                            "pairs output or veg/tn93's CSV); nothing else is computed")  # fmt: skip
    model.add_argument("--clusters", metavar="D",
                       help="single-linkage clusters at distance <= D: name and cluster (numbered from 1 by first "
                            "member), a summary on stderr")  # fmt: skip

    layout = parser.add_argument_group("output")
    layout.add_argument("-c", "--csv", action="store_true",
                        help="comma-separated instead of tab-separated (names quoted where needed, RFC 4180)")  # fmt: skip
    layout.add_argument("-m", "--molten", action="store_true", help="long form: name1, name2, distance")
    layout.add_argument("-t", "--molten-header", action="store_true",
                        help="with --molten: a header line sequence_1, sequence_2, distance (snp-dists -t)")  # fmt: skip
    layout.add_argument("-b", "--blank-corner", action="store_true", help="empty top-left header cell")
    layout.add_argument("--corner-label", default=None, metavar="TEXT",
                        help="top-left header cell (default: 'snp-dists 0.8.2', so that outputs diff cleanly "
                             "against snp-dists's)")  # fmt: skip
    layout.add_argument("-L", "--lower-triangle", action="store_true",
                        help="each pair once: the lower triangle with the diagonal (streamed); with --molten, the "
                             "pairs (i, j >= i) in snp-dists 1.2's order")  # fmt: skip
    layout.add_argument("--max-dist", metavar="D",
                        help="only pairs within distance D, long form (never builds the matrix); with -x X the pairs "
                             "are chosen by their true distance and reported as min(distance, X)")  # fmt: skip
    layout.add_argument("--knn", type=positive_int, metavar="K",
                        help="the K nearest neighbours of each sequence, long form")  # fmt: skip
    layout.add_argument("--format", choices=("table", "phylip"), default="table",
                        help="the square matrix as a table (snp-dists' layout) or in PHYLIP's distance format (the "
                             "count, then each name and its row)")  # fmt: skip
    layout.add_argument("--tree", choices=("nj",),
                        help="write the neighbour-joining tree of the matrix (Newick) instead of the matrix; exact "
                             "and deterministic, O(n^3): a few thousand sequences")  # fmt: skip
    layout.add_argument("--npy", metavar="FILE",
                        help="write the matrix as .npy (names in FILE.names.tsv) instead of text")  # fmt: skip

    run = parser.add_argument_group("execution")
    run.add_argument("--method", choices=METHODS, default="auto", help="algorithm")
    add_device(run, "where to compute: cuda = every visible NVIDIA GPU (needs the [cuda] extra); auto = a GPU "
               "when one is usable")  # fmt: skip
    run.add_argument("--gpu-packer", choices=("auto", "planes", "ballot", "shared", "naive"), default="auto",
                     help="how GPU operands are built: from the CPU's bit planes (least PCIe traffic, but a "
                          "compiled pass on the host) or from the rows as read, by a ballot, shared-memory or "
                          "naive atomic kernel; auto = ballot, or planes for Dask workers' blocks")  # fmt: skip
    add_threads(run)
    run.add_argument("--tile-size", type=positive_int, metavar="N", help="tile edge (default: automatic)")
    add_quiet(run)
    add_cluster(run)
    parser.set_defaults(handler=run_command)


def _distance_threshold(text: str, option: str, model: str | None) -> int | float:
    """``--max-dist`` / ``--clusters``: a whole number of SNPs, or any non-negative float with a rate model."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{option} takes a number, got {text!r}") from None
    if not value >= 0:
        raise InputError(f"{option} must be at least 0, got {text}")
    if model in (None, "snp"):
        if value != int(value):
            raise InputError(f"{option} counts SNPs: a whole number, got {text} (a fraction needs --model)")
        return int(value)
    return value


def _check_model_options(args) -> None:
    if args.normalise:
        if args.model not in (None, "p"):
            raise InputError(f"--normalise writes the p distance; it cannot be combined with --model {args.model}")
        args.model = "p"
    if args.model is None and (args.sites or args.min_overlap):
        args.model = "snp"
    for option, value in (("--max-dist", args.max_dist), ("--clusters", args.clusters)):
        if value is not None:
            setattr(args, option[2:].replace("-", "_"), _distance_threshold(value, option, args.model))
    tn93_only = [name for name, on in (("--ambiguities", args.ambiguities != "resolve"),
                                       ("--fraction", args.fraction != 1.0)) if on]  # fmt: skip
    if tn93_only and args.model != "tn93":
        raise InputError(f"{' and '.join(tn93_only)} apply to --model tn93 only")
    if not 0.0 <= args.fraction <= 1.0:
        raise InputError(f"--fraction must lie in [0, 1], got {args.fraction}")
    if args.model is None:
        return
    for name, on in (("--all-chars", args.all_chars), ("--iupac", args.iupac), ("--knn", args.knn is not None),
                     ("--max-count", args.max_count is not None), ("--lower-triangle", args.lower_triangle)):  # fmt: skip
        if on:
            what = f"--model {args.model}" if not args.sites and not args.min_overlap else "--sites and --min-overlap"
            raise InputError(f"{name} cannot be combined with {what}: models read A/C/G/T (tn93: its IUPAC "
                             f"alphabet) and write full matrices or pairs")  # fmt: skip
    if args.model == "tn93" and args.keep_case:
        raise InputError("--keep-case cannot be combined with --model tn93, which reads both cases as veg/tn93 does")
    if args.sites and args.clusters is not None:
        raise InputError("--sites adds a column to pairs or long output; --clusters writes names and clusters")
    if args.sites and not (args.molten or args.max_dist is not None or args.npy is not None):
        raise InputError("--sites adds a column to long output: add --molten or --max-dist D (or use --npy, "
                         "which then writes FILE.sites.npy)")


def _check_options(args) -> None:
    _check_model_options(args)
    square = [name for name, on in (("--tree", args.tree is not None), ("--format phylip", args.format == "phylip"))
              if on]  # fmt: skip
    if len(square) > 1:
        raise InputError("--tree and --format phylip are both whole outputs; choose one")
    if square:
        others = [name for name, on in (("--ref", args.ref is not None), ("--max-dist", args.max_dist is not None),
                  ("--knn", args.knn is not None), ("--npy", args.npy is not None), ("--molten", args.molten),
                  ("--lower-triangle", args.lower_triangle), ("--clusters", args.clusters is not None),
                  ("--sites", args.sites), ("--diff-pairs", args.diff_pairs is not None)) if on]  # fmt: skip
        if others:
            raise InputError(f"{square[0]} writes the square matrix of one alignment; it cannot be combined with "
                             f"{others[0]}")  # fmt: skip
    if args.collapse and args.collapsed_out is not None:
        raise InputError("--collapse expands the result to every sequence, --collapsed-out does not; choose one")
    if (args.collapse or args.collapsed_out is not None) and args.knn is not None:
        raise InputError("--knn cannot be combined with --collapse or --collapsed-out: the neighbours of duplicates "
                         "tie, so collapse the alignment first (--collapsed-out with another layout)")  # fmt: skip
    if args.collapsed_out is not None and args.ref:
        raise InputError("--collapsed-out collapses one alignment; with --ref use --collapse")
    if args.diff_pairs is not None:
        if args.diff_sites is None:
            raise InputError("--diff-pairs names the pairs whose differing sites --diff-sites FILE writes: add it")
        others = [name for name, on in (("--max-dist", args.max_dist is not None), ("--knn", args.knn is not None),
                  ("--npy", args.npy is not None), ("--clusters", args.clusters is not None), ("--molten", args.molten),
                  ("--lower-triangle", args.lower_triangle), ("--collapse", args.collapse),
                  ("--collapsed-out", args.collapsed_out is not None), ("-o", args.output is not None)) if on]  # fmt: skip
        if others:
            raise InputError(f"--diff-pairs writes only --diff-sites; it cannot be combined with {others[0]}")
    elif args.diff_sites is not None and args.max_dist is None:
        raise InputError("--diff-sites lists the sites of pairs: add --max-dist D or --diff-pairs TSV")
    if args.clusters is not None and (args.max_dist is not None or args.knn is not None or args.npy is not None
                                      or args.molten or args.lower_triangle):  # fmt: skip
        raise InputError("--clusters writes names and clusters; it cannot be combined with another output layout")
    if args.clusters is not None and args.ref:
        raise InputError("--clusters groups the sequences of one alignment; it cannot be combined with --ref")
    layouts = [name for name, on in (("--max-dist", args.max_dist is not None), ("--knn", args.knn is not None),
               ("--npy", args.npy is not None)) if on]  # fmt: skip
    if args.molten and layouts:
        layouts.insert(0, "--molten")
    if args.lower_triangle and layouts:
        layouts.insert(0, "--lower-triangle")
    if len(layouts) > 1:
        raise InputError(f"choose one output layout; got {' and '.join(layouts)}")
    if args.lower_triangle and args.ref:
        raise InputError("--lower-triangle needs a square matrix; it cannot be combined with --ref")
    if args.all_chars and args.iupac:
        raise InputError("--all-chars and --iupac are different semantics; choose one")
    if args.npy and args.output:
        raise InputError("--npy writes its own file; do not combine it with -o")
    if args.molten_header and not args.molten:
        raise InputError("--molten-header labels the columns of --molten output; add --molten")


def run_command(args) -> int:
    log = Log(args.quiet)
    _check_options(args)
    outputs = {"-o": args.output}
    if args.npy is not None:
        outputs = {"--npy": args.npy, "--npy (names)": args.npy + ".names.tsv"}
    if args.npy is not None and args.sites:
        outputs["--npy (sites)"] = _sites_path(args.npy)
    if args.collapsed_out is not None:
        outputs["--collapsed-out"] = args.collapsed_out
    if args.diff_sites is not None:
        outputs["--diff-sites"] = args.diff_sites
    if args.diff_pairs is not None:
        outputs.pop("-o")
    helped = _uses_gpu_helper(args)
    # The Hamming kernels load while the input is read (SNP counts; the models' kernels are others).
    warm_up = _load_hamming_kernels if args.model is None and args.diff_pairs is None else None
    prepare(args, [args.alignment, args.ref, args.diff_pairs], outputs,
            start_cuda=args.cluster == "none" and not args.scheduler and not helped, warm_up=warm_up)  # fmt: skip
    if helped:
        from ..cuda.helper import GpuHelper

        with GpuHelper(start=_helper_start(args), warm_up=_helper_warm_up(args), name="seqcompare-hamming") as helper:
            return _compute_and_write(args, log, None, helper)
    with dask_client(args, log) as client:
        return _compute_and_write(args, log, client)


def _uses_gpu_helper(args) -> bool:
    """Whether a GPU run of pairs (``--max-dist``) or neighbours (``--knn``) goes to a forked helper process
    (:mod:`seqcompare.cuda.helper`): CUDA then starts on another core while this process reads the input, and
    its teardown is not waited for. Their results are small; other layouts stream or hold the whole matrix,
    and run in this process."""
    from ..cuda.helper import supported

    return (args.device == "cuda" and args.cluster == "none" and not args.scheduler and args.model is None
            and args.clusters is None and args.diff_pairs is None
            and (args.max_dist is not None or args.knn is not None) and supported())  # fmt: skip


def _helper_start(args):
    """The helper's start: the CUDA driver and contexts in a thread while CuPy imports, then CuPy's side of
    every visible device."""

    def start() -> dict:
        from ..cuda.runtime import start_cupy_beside_the_driver, start_devices

        return start_cupy_beside_the_driver(start_devices, "contexts")

    return start


def _helper_warm_up(args):
    """The helper's warm-up once idle: every device made ready by selecting the pairs of a tiny alignment with
    this run's alphabet, method and packer."""
    alphabet = "all" if args.all_chars else "iupac" if args.iupac else "acgt"

    def warm_up() -> None:
        from ..cuda.runtime import start_devices

        start_devices(lambda: _warm_up_pairs(alphabet, args.method, args.gpu_packer))

    return warm_up


def _warm_up_pairs(alphabet: str, method: str, packer: str) -> None:
    """Select the pairs of a tiny alignment on the current device, as a real run of ``alphabet`` with ``method``
    and ``packer`` would: every kernel a run of pairs launches is then loaded (our modules, and the sort's first
    use)."""
    from ..cuda.runtime import require_cupy
    from ..hamming.api import encode_inputs
    from ..hamming.gpu import device_pairs

    tiny = encode_inputs(["ACGTACGTAC", "ACGTACGTAA", "TCGTACGTAA"], alphabet=alphabet)
    device_pairs(tiny, 1, method=method, packer=packer, devices=[require_cupy().cuda.Device().id])


def _load_hamming_kernels() -> None:
    from ..hamming.gpu import load_kernels

    load_kernels()


# Whether a run through the GPU helper leaves a large FASTA file's sequences where they lie (io.fasta.FileRows):
# bench/hamming_gpu_e2e.py compares both ways by setting it.
READ_IN_PLACE = True


def _compute_and_write(args, log, client, helper=None) -> int:
    from ..io.fasta import read_alignment

    allocate = None if helper is None else helper.empty  # the helper reads the sequences where they lie
    # The GPU helper can even take them where they lie in the file (gathered on the device from the page cache),
    # unless this process must read them itself: to find duplicates, or to number the characters present.
    in_place = (READ_IN_PLACE and helper is not None and not args.collapse and args.collapsed_out is None
                and not args.all_chars)  # fmt: skip
    query = read_alignment(args.alignment, threads=args.threads, allocate=allocate, in_place=in_place)
    log(f"read {query.n_sequences} sequences of length {query.length} from {args.alignment}")
    reference = None
    if args.ref:
        reference = read_alignment(args.ref, threads=args.threads, allocate=allocate, in_place=in_place)
        log(f"read {reference.n_sequences} reference sequences of length {reference.length} from {args.ref}")
        if reference.length != query.length:
            raise InputError(
                f"{args.ref}: reference sequences have length {reference.length} but the query "
                f"alignment {args.alignment} has length {query.length}"
            )
    for alignment in (query, reference):
        if alignment is not None:
            log.duplicates(alignment.source, alignment.names)
    if args.diff_pairs is not None:
        from ..hamming.diffsites import read_pairs

        right = query if reference is None else reference
        rows, cols = read_pairs(args.diff_pairs, query.names, right.names)
        log(f"read {rows.size} pairs from {args.diff_pairs}")
        _write_diff_sites(args, log, query, reference, rows, cols)
        return 0
    if args.collapsed_out is None:
        return _compute(args, log, client, query, reference, helper)
    everyone = query
    query, representative = _collapse_alignment(args, log, query)
    _compute(args, log, client, query, reference, helper)
    _write_representatives(args, everyone.names, representative)
    return 0


def _collapse_alignment(args, log, query):
    """``--collapsed-out``: the alignment of the distinct sequences, and each sequence's representative."""
    import numpy as np

    from ..hamming.api import duplicates
    from ..io.fasta import Alignment

    alphabet = "all" if args.all_chars else "iupac" if args.iupac else "acgt"
    model = None if args.model in (None, "snp") and not (args.sites or args.min_overlap) else args.model
    try:
        representative = duplicates(query, model=model, alphabet=alphabet, keep_case=args.keep_case,
                                    missing=args.missing)  # fmt: skip
    except ValueError as error:
        raise InputError(str(error)) from None
    distinct = np.flatnonzero(representative == np.arange(representative.size))
    log(f"{distinct.size} distinct sequences of {representative.size}; the result is over the distinct ones")
    names = [query.names[k] for k in distinct.tolist()]
    return Alignment(names, query.sequences[distinct], query.source), representative


def _write_diff_sites(args, log, query, reference, rows, cols) -> None:
    """``--diff-sites``: the differing sites of pairs ``rows``, ``cols`` under the run's rules (nothing without
    the option)."""
    if args.diff_sites is None:
        return
    from ..hamming.diffsites import byte_difference_table, write_differing_sites
    from ..io.output import open_output

    alphabet = "all" if args.all_chars else "iupac" if args.iupac else "acgt"
    table = byte_difference_table(model=args.model, alphabet=alphabet, ambiguities=args.ambiguities,
                                  keep_case=args.keep_case, missing=args.missing)  # fmt: skip
    right = query if reference is None else reference
    with open_output(args.diff_sites, "--diff-sites") as out:
        count = write_differing_sites(out, query.sequences, right.sequences, rows, cols, table, query.names,
                                      right.names, "," if args.csv else "\t")  # fmt: skip
    log(f"wrote {count} differing sites of {len(rows)} pairs to {args.diff_sites}")


def _write_representatives(args, names, representative) -> None:
    """The ``--collapsed-out`` map: every sequence's name and its representative's, in input order."""
    _write_by_name(args, args.collapsed_out, "--collapsed-out", "representative",
                   [names[rep] for rep in representative.tolist()], names)  # fmt: skip


def _write_by_name(args, path, option: str, column: str, values, names) -> None:
    """A two-column table: a header ``name, column``, then each name and its value (names quoted for CSV)."""
    from ..io.output import open_output
    from ..io.tables import csv_field

    separator = "," if args.csv else "\t"
    lines = [f"{csv_field(name, separator)}{separator}{csv_field(str(value), separator)}"
             for name, value in zip(names, values)]  # fmt: skip
    with open_output(path, option) as out:
        out.write(("\n".join([f"name{separator}{column}", *lines]) + "\n").encode("utf-8", "surrogateescape"))


def _run(helper, log, encoded, reduction: type, parameters: tuple, **options):
    """:func:`~seqcompare.hamming.api.run_hamming` into ``reduction(*parameters)``, here or in the GPU ``helper``
    process (then without a progress bar: the helper reports nothing until it is done)."""
    if helper is None:
        return _run_reduction(encoded, reduction, parameters, options)
    result = helper.call(_run_reduction, encoded, reduction, parameters, {**options, "progress": False})
    log.stages("computed on the GPU by a helper process", helper.timings)
    return result


def _run_reduction(encoded, reduction: type, parameters: tuple, options: dict):
    # The reduction is made where it runs: reductions travel without their state (they are sent to Dask
    # workers to reduce tiles, never to finish).
    from ..hamming import api

    return api.run_hamming(encoded, reduction(*parameters), **options)


def _compute(args, log, client, query, reference, helper=None) -> int:
    """Every layout but ``--collapsed-out``'s map: the distances of ``query`` (against ``reference``), written."""
    import numpy as np

    from ..io.output import BackgroundWriter, open_output
    from ..io.tables import SNP_DISTS_CORNER, NameTable, write_header, write_long, write_rows
    from ..allpairs import KnnReduction, LowerTriangleReduction, MatrixReduction, PairsReduction
    from ..cuda.runtime import resolve_device
    from ..hamming.api import encode_inputs, run_hamming
    from ..hamming.work import choose_method, distance_dtype

    if args.clusters is not None or args.model is not None:
        return _models_and_clusters(args, log, client, query, reference)
    alphabet = "all" if args.all_chars else "iupac" if args.iupac else "acgt"
    encoded = encode_inputs(query, reference, alphabet=alphabet, keep_case=args.keep_case,
                            missing=args.missing)  # fmt: skip
    try:
        device = args.device if client is not None or helper is not None else resolve_device(args.device)
        method = choose_method(encoded, args.method, device)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    log(f"method {method}, {args.threads or 'all'} threads")
    separator = "," if args.csv else "\t"
    corner = None if args.blank_corner else (args.corner_label or SNP_DISTS_CORNER)
    row_names = NameTable(query.names, separator)
    col_names = row_names if reference is None else NameTable(reference.names, separator)
    symmetric = reference is None
    n_rows = query.n_sequences
    n_cols = n_rows if symmetric else reference.n_sequences
    dtype = distance_dtype(encoded.n_sites)
    common = dict(method=method, threads=args.threads, tile_size=args.tile_size, progress=log.progress,
                  device=args.device, gpu_packer=args.gpu_packer, client=client, collapse=args.collapse)  # fmt: skip
    cap = args.max_count
    molten_header = f"sequence_1{separator}sequence_2{separator}distance\n".encode() if args.molten_header else b""

    if args.max_dist is not None:
        # Pairs are chosen by their true distance, so the kernels count up to max_dist + 1 whatever -x says;
        # -x then caps the values reported.
        rows, cols, values = _run(helper, log, encoded, PairsReduction, (args.max_dist, symmetric),
                                  cap=args.max_dist + 1, **common)  # fmt: skip
        if cap is not None:
            values = np.minimum(values, cap)
        with open_output(args.output) as out:
            write_long(out, rows, cols, values, row_names, col_names, separator)
        log(f"wrote {values.size} pairs within distance {args.max_dist}")
        _write_diff_sites(args, log, query, reference, rows, cols)
        return 0
    if args.knn is not None:
        indices, distances = _run(helper, log, encoded, KnnReduction, (args.knn, n_rows, None if symmetric else n_cols),
                                  cap=cap, **common)  # fmt: skip
        rows = np.repeat(np.arange(n_rows), indices.shape[1])
        with open_output(args.output) as out:
            write_long(out, rows, indices.ravel(), distances.ravel(), row_names, col_names, separator)
        log(f"wrote {indices.shape[1]} nearest neighbours of each of {n_rows} sequences")
        return 0
    if args.npy is not None:
        matrix = MatrixReduction((n_rows, n_cols), symmetric, dtype, path=args.npy)
        try:
            with open_output(args.npy + ".names.tsv", "--npy") as out:
                lines = [f"row\t{i}\t{name}" for i, name in enumerate(query.names)]
                if not symmetric:
                    lines += [f"column\t{i}\t{name}" for i, name in enumerate(reference.names)]
                out.write(("\n".join(["axis\tindex\tname", *lines]) + "\n").encode("utf-8", "surrogateescape"))
                run_hamming(encoded, matrix, cap=cap, **common)
        finally:
            matrix.abort()  # nothing to do once finished
        log(f"wrote {n_rows} x {n_cols} matrix to {args.npy}")
        return 0
    if args.lower_triangle and not args.molten:
        # Each block row is formatted while the one before it is written (BackgroundWriter).
        with open_output(args.output) as stream, BackgroundWriter(stream) as out:
            write_header(out, col_names, separator, corner)
            triangle = LowerTriangleReduction(n_rows, lambda start, rows: write_rows(
                out, rows, start, row_names, separator, lower_triangle=True, table_values=n_rows * n_cols,
                threads=args.threads or os.cpu_count() or 1), dtype)  # fmt: skip
            run_hamming(encoded, triangle, cap=cap, **common)
        return 0

    with contextlib.ExitStack() as stack:
        path = None
        if n_rows * n_cols * np.dtype(dtype).itemsize > _IN_MEMORY_MATRIX_BYTES:
            path = os.path.join(stack.enter_context(tempfile.TemporaryDirectory(prefix="seqcompare-")), "matrix.npy")
        reduction = MatrixReduction((n_rows, n_cols), symmetric, dtype, path=path)
        stack.callback(reduction.abort)
        matrix = run_hamming(encoded, reduction, cap=cap, **common)
        if _write_square(args, log, matrix, query.names):
            return 0
        with open_output(args.output) as out:
            if args.molten:
                out.write(molten_header)
                _write_molten(out, matrix, row_names, col_names, separator, args.lower_triangle)
            else:
                write_header(out, col_names, separator, corner)
                write_rows(out, matrix, 0, row_names, separator)
    return 0


def _write_square(args, log, matrix, names) -> bool:
    """``--tree nj`` (a Newick neighbour-joining tree) or ``--format phylip``; False for the other layouts."""
    from ..hamming.tree import nj_tree, write_phylip
    from ..io.output import open_output

    if args.tree is not None:
        newick = nj_tree(matrix, names, threads=args.threads)
        with open_output(args.output) as out:
            out.write((newick + "\n").encode("utf-8", "surrogateescape"))
        log(f"wrote the neighbour-joining tree of {len(names)} sequences")
        return True
    if args.format == "phylip":
        with open_output(args.output) as out:
            write_phylip(out, matrix, names)
        return True
    return False


def _write_molten(out, matrix, row_names, col_names, separator: str, upper_only: bool) -> None:
    """``name_i, name_j, d`` for every cell in row-major order; with ``upper_only`` only ``j >= i``, which is
    what snp-dists 1.2 writes for ``-L -m``."""
    import numpy as np

    from ..io.tables import write_long

    n_rows, n_cols = matrix.shape
    block = max(1, (1 << 22) // max(1, n_cols))
    for lo in range(0, n_rows, block):
        hi = min(n_rows, lo + block)
        left = np.repeat(np.arange(lo, hi), n_cols)
        right = np.tile(np.arange(n_cols), hi - lo)
        values = matrix[lo:hi].ravel()
        if upper_only:
            keep = right >= left
            left, right, values = left[keep], right[keep], values[keep]
        write_long(out, left, right, values, row_names, col_names, separator)


def _models_and_clusters(args, log, client, query, reference) -> int:
    """``--model`` / ``--sites`` / ``--min-overlap`` (per-pair counts and model distances) and ``--clusters``."""
    import numpy as np

    from ..allpairs import ClusterReduction, Combined, Field, MatrixReduction, PairsReduction
    from ..hamming.api import encode_site_codes, encode_inputs, run_hamming, run_model
    from ..io.output import open_output
    from ..io.tables import NameTable, write_header, write_long, write_rows

    separator = "," if args.csv else "\t"
    common = dict(threads=args.threads, tile_size=args.tile_size, progress=log.progress, device=args.device,
                  client=client, collapse=args.collapse)  # fmt: skip
    if args.model is None:  # clusters of SNP counts, under any alphabet, with the Hamming kernels
        alphabet = "all" if args.all_chars else "iupac" if args.iupac else "acgt"
        encoded = encode_inputs(query, alphabet=alphabet, keep_case=args.keep_case, missing=args.missing)
        labels = run_hamming(encoded, ClusterReduction(args.clusters, encoded.n_left), cap=args.clusters + 1,
                             method=args.method, gpu_packer=args.gpu_packer, **common)  # fmt: skip
        return _write_clusters(args, log, query.names, labels)
    model_options = dict(model=args.model, ambiguities=args.ambiguities, fraction=args.fraction,
                         min_overlap=args.min_overlap, **common)  # fmt: skip
    try:
        codes = encode_site_codes(query, reference, "tn93" if args.model == "tn93" else "acgt", args.keep_case, args.missing)
    except ValueError as error:
        raise InputError(str(error)) from None
    if args.clusters is not None:
        labels = run_model(codes, ClusterReduction(float(args.clusters), codes.n_left), screen=float(args.clusters),
                           **model_options)  # fmt: skip
        return _write_clusters(args, log, query.names, labels)
    symmetric = reference is None
    row_names = NameTable(query.names, separator)
    col_names = row_names if symmetric else NameTable(reference.names, separator)
    shape = (codes.n_left, codes.n_left if symmetric else codes.n_right)
    if args.max_dist is not None:
        pairs = PairsReduction(float(args.max_dist), symmetric, extras=int(args.sites))
        rows, cols, values, *sites = run_model(codes, pairs, with_sites=args.sites, screen=float(args.max_dist),
                                               **model_options)  # fmt: skip
        with open_output(args.output) as out:
            if args.model == "tn93" and args.csv and not args.sites:
                out.write(b"ID1,ID2,Distance\n")  # veg/tn93's CSV
            else:
                out.write(_long_header(args, separator))
            write_long(out, rows, cols, values, row_names, col_names, separator, extra=sites)
        log(f"wrote {values.size} pairs within distance {args.max_dist}")
        _write_diff_sites(args, log, query, reference, rows, cols)
        return 0
    matrix = MatrixReduction(shape, symmetric, np.float64, path=args.npy)
    sites_matrix = None
    reduction = matrix
    if args.sites:
        sites_path = None if args.npy is None else _sites_path(args.npy)
        sites_matrix = MatrixReduction(shape, symmetric, np.int64, path=sites_path)
        reduction = Combined(Field(matrix, 0), Field(sites_matrix, 1))
    try:
        result = run_model(codes, reduction, with_sites=args.sites, **model_options)
    finally:
        for pending in (matrix, sites_matrix):
            if pending is not None:
                pending.abort()
    distances, sites = result if args.sites else (result, None)
    if args.npy is not None:
        with open_output(args.npy + ".names.tsv", "--npy") as out:
            lines = [f"row\t{i}\t{name}" for i, name in enumerate(query.names)]
            if not symmetric:
                lines += [f"column\t{i}\t{name}" for i, name in enumerate(reference.names)]
            out.write(("\n".join(["axis\tindex\tname", *lines]) + "\n").encode("utf-8", "surrogateescape"))
        return 0
    if _write_square(args, log, distances, query.names):
        return 0
    with open_output(args.output) as out:
        if args.molten:
            out.write(_long_header(args, separator))
            left = np.repeat(np.arange(shape[0]), shape[1])
            right = np.tile(np.arange(shape[1]), shape[0])
            write_long(out, left, right, distances.ravel(), row_names, col_names, separator,
                       extra=[sites.ravel()] if args.sites else [])  # fmt: skip
        else:
            corner = None if args.blank_corner else (args.corner_label or args.model)
            write_header(out, col_names, separator, corner)
            write_rows(out, distances, 0, row_names, separator)
    return 0


def _sites_path(npy: str) -> str:
    """Where ``--npy FILE --sites`` writes the comparable sites: FILE with ``.sites.npy`` for ``.npy``."""
    return (npy[:-4] if npy.endswith(".npy") else npy) + ".sites.npy"


def _long_header(args, separator: str) -> bytes:
    """The header line of long output (with --molten-header, or whenever --sites adds its column), else nothing."""
    if not (args.molten_header or args.sites):
        return b""
    return separator.join(["sequence_1", "sequence_2", "distance", *(["sites"] if args.sites else [])]).encode() + b"\n"


def _write_clusters(args, log, names, labels) -> int:
    """Two columns, name and cluster (numbered from 1 by first member), and a one-line summary on stderr."""
    import sys

    import numpy as np

    sizes = np.bincount(labels) if labels.size else np.zeros(0, dtype=np.int64)
    _write_by_name(args, args.output, "-o", "cluster", (labels + 1).tolist(), names)
    largest = int(sizes.max()) if sizes.size else 0
    summary = (f"{sizes.size} clusters at distance <= {args.clusters}: largest {largest}, "
               f"{int((sizes == 1).sum())} singletons, {labels.size} sequences")  # fmt: skip
    if not args.quiet:
        print(summary, file=sys.stderr)
    return 0
