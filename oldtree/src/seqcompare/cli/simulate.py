"""``seqcompare simulate``: seeded simulated inputs for benchmarks and tests."""

from __future__ import annotations

from .common import HelpFormatter, non_negative_int, positive_int, prepare, probability


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("simulate", help="write seeded simulated inputs for benchmarks and tests",
                                   formatter_class=HelpFormatter)  # fmt: skip
    kinds = parser.add_subparsers(title="what to simulate", dest="kind", metavar="KIND", required=True)
    aln = kinds.add_parser("alignment", help="a DNA alignment of related sequences (outbreak-like)",
                           formatter_class=HelpFormatter)  # fmt: skip
    aln.add_argument("-n", "--sequences", type=positive_int, required=True, help="number of sequences")
    aln.add_argument("-l", "--length", type=positive_int, required=True, help="alignment length")
    aln.add_argument("--seed", type=int, default=0, help="random seed")
    aln.add_argument("--substitution-rate", type=probability, default=0.015,
                     help="substitutions per site that separate the founder lineages")  # fmt: skip
    aln.add_argument("--n-rate", type=probability, default=0.005, help="probability that a base is N")
    aln.add_argument("--gap-runs", type=non_negative_int, default=3, help="runs of '-' per sequence")
    aln.add_argument("--lineages", type=positive_int, default=8, help="founder lineages")
    aln.add_argument("--private-rate", type=probability, metavar="RATE",
                     help="substitutions per site each sequence gains on its own (default: substitution rate / 2)")
    aln.add_argument("--width", type=non_negative_int, default=0, help="wrap lines (0: one line per record)")
    aln.add_argument("-o", "--output", metavar="FILE", help="FASTA output (default: standard output)")
    aln.set_defaults(handler=run_alignment)

    sc = kinds.add_parser(
        "scan", formatter_class=HelpFormatter,
        help="signatures (FASTA) and samples (FASTQ) shaped like a viral screening run: 3-10 kb signatures, "
             "100-200 kb samples, a few of them carrying signatures",
    )  # fmt: skip
    sc.add_argument("--signatures", type=non_negative_int, default=1000, help="number of signatures")
    sc.add_argument("--signature-length", type=positive_int, nargs=2, default=(3000, 10000), metavar=("MIN", "MAX"),
                    help="signature lengths")  # fmt: skip
    sc.add_argument("--clean-samples", type=non_negative_int, default=2000, help="virus-free samples")
    sc.add_argument("--infected-samples", type=non_negative_int, default=20, help="samples carrying signatures")
    sc.add_argument("--max-per-sample", type=positive_int, default=2,
                    help="an infected sample carries 1..this many signatures")  # fmt: skip
    sc.add_argument("--sample-length", type=non_negative_int, nargs=2, default=(100_000, 200_000),
                    metavar=("MIN", "MAX"), help="sample lengths")  # fmt: skip
    sc.add_argument("--phred", type=non_negative_int, nargs=2, default=(10, 30), metavar=("MIN", "MAX"),
                    help="range of per-sample mean Phred scores")  # fmt: skip
    sc.add_argument("--n-ratio", type=probability, default=0.1, help="probability that a base is N")
    sc.add_argument("--seed", type=int, default=0, help="random seed")
    sc.add_argument("--stamp", help="name stamp: sample_<stamp>_<k> (default: the --seed value)")
    sc.add_argument("--samples-out", metavar="FASTQ", required=True)
    sc.add_argument("--signatures-out", metavar="FASTA", required=True)
    sc.add_argument("--truth", metavar="TSV", help="also write where signatures were planted")
    sc.set_defaults(handler=run_scan)


def run_alignment(args) -> int:
    from ..io.output import open_output
    from ..simulate import format_fasta, simulate_alignment

    prepare(args, (), {"-o": args.output})
    names, sequences = simulate_alignment(
        args.sequences, args.length, seed=args.seed, substitution_rate=args.substitution_rate,
        n_rate=args.n_rate, gap_runs=args.gap_runs, lineages=args.lineages, private_rate=args.private_rate,
    )  # fmt: skip
    with open_output(args.output) as out:
        for chunk in format_fasta(names, sequences, width=args.width):
            out.write(chunk)
    return 0


def run_scan(args) -> int:
    import contextlib

    from ..io.output import open_output
    from ..simulate import simulate_scan, write_fastq, write_sequences_fasta

    prepare(args, (), {"--samples-out": args.samples_out, "--signatures-out": args.signatures_out,
                       "--truth": args.truth})  # fmt: skip
    data = simulate_scan(
        n_signatures=args.signatures, signature_length=tuple(sorted(args.signature_length)),
        n_clean=args.clean_samples, n_infected=args.infected_samples, max_per_sample=args.max_per_sample,
        sample_length=tuple(sorted(args.sample_length)), phred=tuple(sorted(args.phred)), n_ratio=args.n_ratio,
        seed=args.seed, stamp=args.stamp,
    )  # fmt: skip

    def write_truth(handle):
        handle.write(b"sample\tsignature\toffset\n")
        for i, s, o in data.planted:
            handle.write(f"{data.samples.names[i]}\t{data.signatures.names[s]}\t{o}\n".encode())

    outputs = [(args.samples_out, "--samples-out", lambda handle: write_fastq(handle, data.samples)),
               (args.signatures_out, "--signatures-out", lambda handle: write_sequences_fasta(handle, data.signatures))]
    if args.truth:
        outputs.append((args.truth, "--truth", write_truth))
    # All or none: every file is complete before any is put in place.
    with contextlib.ExitStack() as stack:
        for path, option, write in outputs:
            write(stack.enter_context(open_output(path, option)))
    return 0
