"""``seqcompare scan``: which signatures (viral genomes, genes, primers) occur in which FASTQ samples."""

from __future__ import annotations

import contextlib

from ..errors import InputError
from .common import (HelpFormatter, Log, add_common, check_cluster_options, dask_client, non_negative_int, positive_int,
                     prepare)  # fmt: skip


def add_parser(subparsers) -> None:
    from ..scan.options import DEFAULT_COVERAGE_KMER, DEFAULT_K, MAX_K, METHODS, REPORTS

    parser = subparsers.add_parser(
        "scan",
        help="which signatures (e.g. viral genomes) occur in which FASTQ samples, exactly or within k errors",
        description="Find every (sample, signature) pair where the whole signature occurs in the sample, "
        "'N' on either side matching any base: exactly, or within --max-mismatches or --max-edits; or, with "
        "--coverage, how much of each signature the reads' k-mers cover. Default output, one line per match: "
        "'sample: signature (confidence)', confidence = mean Phred score over the occurrence.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("samples", help="FASTQ samples (plain or gzip; '-' for standard input)")
    parser.add_argument("signatures", help="FASTA signatures (plain or gzip)")
    parser.add_argument("--report", choices=REPORTS, default="first",
                        help="per pair: the occurrence ending leftmost; the best (fewest errors, then highest "
                             "confidence); or every occurrence")  # fmt: skip
    parser.add_argument("--tsv", action="store_true",
                        help="tab-separated with a header: sample, signature, offset (0-based), score (+ end and "
                             "mismatches or edits, strand)")  # fmt: skip
    parser.add_argument("--integrity-hash", action="store_true",
                        help="add [sum of the sample's Phred scores mod 97] to each line, a check that two runs "
                             "read the same qualities")  # fmt: skip
    parser.add_argument("--min-score", type=float, metavar="S",
                        help="occurrences with confidence below S do not count")  # fmt: skip
    parser.add_argument("--both-strands", action="store_true",
                        help="also match the reverse complement of each signature")  # fmt: skip
    parser.add_argument("--iupac-as-n", action="store_true",
                        help="read IUPAC codes other than N (R, Y, K, ...) as N instead of refusing them")  # fmt: skip
    parser.add_argument("--iupac", action="store_true",
                        help="match IUPAC codes (R, Y, K, M, S, W, B, D, H, V) as the sets of bases they stand for, "
                             "on either side (with --coverage, k-mers holding one never count)")  # fmt: skip
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="index: k-mer index with an exact fallback (auto); reference: brute force (slow)")  # fmt: skip
    parser.add_argument("--kmer", type=positive_int, default=DEFAULT_K, metavar="K",
                        help=f"k-mer length of the signatures' index, 1..{MAX_K}; changes the speed, never the result")  # fmt: skip
    approximate = parser.add_argument_group("approximate occurrences (exhaustive: a pigeonhole filter, then exact checks)")
    approximate.add_argument("--max-mismatches", type=allowance, metavar="K",
                             help="occurrences differ from the signature in at most K positions (substitutions), or "
                                  "in P%% of its length with K written as P%%; with --coverage, in each k-mer")  # fmt: skip
    approximate.add_argument("--max-edits", type=allowance, metavar="K",
                             help="occurrences are alignments of the whole signature with at most K (or P%% of its "
                                  "length) substitutions, insertions and deletions: edlib's HW distance, reported at "
                                  "the best end of each match as Sassy does")  # fmt: skip
    selection = parser.add_argument_group("read selection and coverage")
    selection.add_argument("--matched-out", metavar="FILE",
                           help="write the FASTQ records that carry at least one signature, as they are in the "
                                "input (gzip when FILE ends in .gz)")  # fmt: skip
    selection.add_argument("--unmatched-out", metavar="FILE",
                           help="write the FASTQ records that carry no signature")  # fmt: skip
    selection.add_argument("--coverage", action="store_true",
                           help="per signature: breadth (fraction of its bases covered by k-mers found in the "
                                "reads) and mean depth, for reads shorter than a signature")  # fmt: skip
    selection.add_argument("--coverage-kmer", type=positive_int, default=DEFAULT_COVERAGE_KMER, metavar="K",
                           help="k-mer length of --coverage; k-mers with an N never count")  # fmt: skip
    add_common(parser, cluster=True)
    parser.set_defaults(handler=run_command)


def allowance(text: str):
    """``--max-mismatches``/``--max-edits``: a count (int) or a percentage of each signature's length (float)."""
    import argparse

    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            percent = -1.0
        if not 0.0 <= percent < 100.0:
            raise argparse.ArgumentTypeError(f"expected a percentage from 0% to below 100%, not {text!r}")
        return percent / 100.0
    return non_negative_int(text)


def run_command(args) -> int:
    from ..scan import gpu_helper
    from ..scan.options import MAX_K

    if not 1 <= args.kmer <= MAX_K:
        raise InputError(f"--kmer must be between 1 and {MAX_K}, not {args.kmer}")
    check_cluster_options(args)
    on_cluster = args.cluster != "none" or args.scheduler is not None
    if on_cluster and args.method == "reference":
        raise InputError("--method reference runs in this process only; drop --cluster/--scheduler")
    _check_selection_options(args, on_cluster)
    approximate = args.max_mismatches is not None or args.max_edits is not None
    helper = (args.device == "cuda" and args.method != "reference" and not on_cluster and not args.coverage
              and gpu_helper.supported())  # fmt: skip
    outputs = {"-o": args.output, "--matched-out": args.matched_out, "--unmatched-out": args.unmatched_out}
    prepare(args, [args.samples, args.signatures], outputs, start_cuda=not (helper or on_cluster or args.coverage))
    log = Log(args.quiet)
    with contextlib.ExitStack() as stack:
        if args.matched_out or args.unmatched_out:  # the samples are read again to copy their records
            from ..io.fasta import keeping_contents

            stack.enter_context(keeping_contents(args.samples))
        if args.coverage:
            return _coverage(args, log)
        return _scan_and_write(args, log, helper, on_cluster, approximate)


def _scan_and_write(args, log, helper: bool, on_cluster: bool, approximate: bool) -> int:
    if helper:
        result = _scan_with_helper(args, log)
    elif on_cluster:
        result = _scan_on_cluster(args, log)
    else:
        from concurrent.futures import ThreadPoolExecutor

        from ..io.fastq import read_fastq
        from ..io.sequences import iupac_codes
        from ..scan.api import prepare_signatures, scan

        # The signatures' index is built while the samples are parsed (an approximate scan indexes pieces).
        exact_index = args.method != "reference" and not approximate and not args.iupac
        with ThreadPoolExecutor(1) as background:
            prepared = background.submit(
                prepare_signatures, args.signatures, k=args.kmer, both_strands=args.both_strands,
                iupac_as_n=args.iupac_as_n, device=args.device if exact_index else None, iupac=args.iupac,
            )  # fmt: skip
            samples = read_fastq(args.samples, iupac_as_n=args.iupac_as_n, threads=args.threads,
                                 alphabet=iupac_codes() if args.iupac else None)  # fmt: skip
            log(f"read {len(samples)} samples ({samples.codes.size} bases) from {args.samples}")
            signatures = prepared.result()
        log(f"indexed {len(signatures.signatures)} signatures ({signatures.signatures.codes.size} bases) from "
            f"{args.signatures}")
        _warn_duplicates(log, args, samples, signatures.signatures)
        result = scan(samples, signatures, report=args.report, min_score=args.min_score,
                      both_strands=args.both_strands, k=args.kmer, method=args.method, device=args.device,
                      threads=args.threads, progress=log.progress, max_mismatches=args.max_mismatches,
                      max_edits=args.max_edits, iupac=args.iupac)  # fmt: skip
    log(f"found {len(result)} matches")
    import numpy as np

    carried = np.zeros(len(result.sample_names), dtype=bool)
    carried[result.sample] = True
    _write_selected(args, carried, log)
    _write(args, result)
    return 0


def _check_selection_options(args, on_cluster: bool) -> None:
    """One line for each option that --coverage or the read selection cannot take."""
    if args.max_mismatches is not None and args.max_edits is not None:
        raise InputError("give --max-mismatches or --max-edits, not both")
    if args.iupac and args.iupac_as_n:
        raise InputError("give --iupac (ambiguity codes as base sets) or --iupac-as-n, not both")
    if args.iupac and on_cluster and not args.coverage:
        raise InputError("--iupac runs in this process only; drop --cluster/--scheduler")
    if args.coverage:
        refused = [("--report " + args.report, args.report != "first"), ("--max-edits", args.max_edits is not None),
                   ("--min-score", args.min_score is not None), ("--integrity-hash", args.integrity_hash),
                   ("--method reference", args.method == "reference")]
        for option, given in refused:
            if given:
                raise InputError(f"--coverage counts k-mer hits per signature and cannot take {option}")
    if (args.matched_out or args.unmatched_out) and args.samples == "-":
        raise InputError("--matched-out/--unmatched-out need the samples in a file: standard input cannot be read twice")


def _write_selected(args, carried, log) -> None:
    """--matched-out/--unmatched-out: the input's records that carry a signature, and the others."""
    destinations = {}
    if args.matched_out:
        destinations["--matched-out", args.matched_out] = True
    if args.unmatched_out:
        destinations["--unmatched-out", args.unmatched_out] = False
    if destinations:
        from ..io.fastq import write_selected_records

        write_selected_records(args.samples, carried, destinations, threads=args.threads)
        log(f"{int(carried.sum())} of {carried.size} reads carry a signature")


def _coverage(args, log) -> int:
    """--coverage: breadth and mean depth of each signature in the reads, from k-mer hits."""
    from ..scan.api import coverage

    if args.device == "cuda":
        log("--coverage runs on the CPU")
    if isinstance(args.max_mismatches, float):
        raise InputError("--coverage takes --max-mismatches as a count of mismatches per k-mer, not a percentage")
    with dask_client(args, log) as client:
        result = coverage(args.samples, args.signatures, kmer=args.coverage_kmer,
                          max_mismatches=args.max_mismatches or 0, both_strands=args.both_strands,
                          iupac_as_n=args.iupac_as_n or args.iupac, threads=args.threads, progress=log.progress,
                          client=client)  # fmt: skip
    from ..io.output import open_output

    _write_selected(args, result.matched_reads, log)
    text = "".join(line + "\n" for line in result.lines(tsv=args.tsv))
    with open_output(args.output) as out:
        out.write(text.encode("utf-8", "surrogateescape"))
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
    process imports Numba, so that its CuPy import and CUDA start overlap all of this process's work. An
    approximate scan (or one of IUPAC codes) sends the helper the signatures' pieces and verifies its rows here."""
    import time

    from ..scan.gpu_helper import ScanHelper

    with ScanHelper() as helper:
        from ..allpairs import default_threads
        from ..io.fastq import read_fastq
        from ..io.sequences import iupac_codes
        from ..scan.api import pieces_plan, prepare_signatures, scan_result

        threads = args.threads or default_threads()
        prepared = prepare_signatures(args.signatures, k=args.kmer, both_strands=args.both_strands,
                                      iupac_as_n=args.iupac_as_n, device=None, iupac=args.iupac)  # fmt: skip
        log(f"read {len(prepared.signatures)} signatures ({prepared.signatures.codes.size} bases) from "
            f"{args.signatures}")
        stages: dict = {}  # seconds of this process's stages, logged with the helper's
        # Without IUPAC codes the reader packs the bases straight into the helper's memory, and writes no codes
        # or qualities: only the records where the GPU finds something are translated (FastqRecords).
        pack_into = None if args.iupac else helper.empty
        samples = read_fastq(args.samples, iupac_as_n=args.iupac_as_n, threads=threads,
                             alphabet=iupac_codes() if args.iupac else None, timings=stages,
                             pack_into=pack_into)  # fmt: skip
        packed = None if pack_into is None else samples.packed
        log(f"read {len(samples)} samples ({int(samples.offsets[-1])} bases) from {args.samples}")
        began = time.perf_counter()
        _warn_duplicates(log, args, samples, prepared.signatures)
        stages["duplicates_s"] = time.perf_counter() - began
        metric = "exact"
        if args.max_mismatches is not None or args.max_edits is not None or args.iupac:
            began = time.perf_counter()
            plan = pieces_plan(samples, prepared, max_mismatches=args.max_mismatches, max_edits=args.max_edits,
                               k=args.kmer, min_score=args.min_score, threads=threads)  # fmt: skip
            stages["pieces_s"] = time.perf_counter() - began
            matched, chosen, found = helper.rows(plan.engine_samples, plan.pieces, True, -1.0, threads, packed)
            began = time.perf_counter()
            rows = plan.verifier(chosen, found)
            stages["verify_s"] = time.perf_counter() - began
            metric = plan.metric
        else:
            threshold = -1.0 if args.min_score is None else float(args.min_score)
            matched, chosen, rows = helper.rows(samples, prepared, args.report != "first", threshold, threads, packed)
        rows = (matched[rows[0]], *rows[1:])  # sample numbers of the chosen samples, back to the input's
        stages.update(helper.timings)
        log.stages("scanned on the GPU by a helper process", stages)
    return scan_result(samples, prepared, rows, args.report, metric)
