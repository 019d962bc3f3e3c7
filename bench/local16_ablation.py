"""Where ``local16``'s time goes (issue 19): the protein search's kernel time with parts of its step taken out.

A labelled kernel-only micro-benchmark, not a product figure. Each variant is ``align/modes.cu`` with one edit
(every variant but ``base`` computes wrong ends or scores: rates only); ``--old FILE`` adds another version of
``modes.cu`` (an earlier commit's, from ``git show REV:src/seqcompare/align/modes.cu``) whose results must equal
``base``'s. The workload is CUDASW++4.0's 20 queries (``.peers/CUDASW4/allqueries.fasta``) against N random
proteins of 256, BLOSUM62, open 11, extend 1, local; warm; CUDA events around each ``local16`` launch; the best
of 3 calls per variant, in two rounds::

    python3 bench/local16_ablation.py [VARIANT ...] [--old modes_old.cu] [--db 100000]

Variants, all of the kernel with ends (``local16<R, true>``; its form without, ``local16<R, false>``, is timed
by ``align_modes.py search``): ``no_ends`` (no column maxima, no notes), ``no_note_branch`` (column maxima kept, notes never taken),
``no_letter_loads`` (target letters not read), ``no_interleave`` (no PRMT joining the two targets' scores),
``no_border`` (no border row between chunks), ``no_inside_tests`` (letters read without the bounds test),
``core`` (the first four together), ``exchange8`` (the warp's best shared every 8 steps, not 32); and host
settings, whose results must equal base's: ``step_rows_2.5`` and ``step_rows_5`` (search_rows' cost of a step
besides its rows). (``strips_to_20``, strips of 18 and 20 rows, became the kernel's own in session 26.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from align_modes import replaced  # noqa: E402  (bench/ on the path first)


def no_ends(text: str) -> str:
    begin = text.index("                    unsigned column_max = h[0];")
    end = text.index("                }\n            }\n            if (!last_chunk) __syncwarp();")
    return text[:begin] + "#if 0\n" + text[begin:end] + "#endif\n" + text[end:]


def no_note_branch(text: str) -> str:
    return replaced(text, "if (raised != bar) {", "if (false) {")


def no_letter_loads(text: str) -> str:
    text = replaced(text, "? from_a[s] : size", "? (unsigned)(s % 20) : size")
    return replaced(text, "? from_b[s] : size", "? (unsigned)((s >> 1) % 20) : size")


def no_interleave(text: str) -> str:
    return replaced(text, "const unsigned score = (r & 1) ? __byte_perm(wa, wb, 0x7632) : __byte_perm(wa, wb, 0x5410);",
                    "const unsigned score = (r & 1) ? wb : wa;")  # fmt: skip


def no_border(text: str) -> str:
    text = replaced(text, "row0 > 0 && inside ? lane_border[s] : make_uint2(0, minus_open)", "make_uint2(0, minus_open)")
    return replaced(text, "if (!last_chunk && lane == 31 && inside) lane_border[s] =", "if (false) lane_border[s] =")


def no_inside_tests(text: str) -> str:
    text = replaced(text, "(unsigned)(j - 1) < (unsigned)n_a ? from_a[s] : size", "from_a[s]")
    return replaced(text, "(unsigned)(j - 1) < (unsigned)n_b ? from_b[s] : size", "from_b[s]")


def exchange8(text: str) -> str:
    return replaced(text, "if ((s & 31) == 31) {", "if ((s & 7) == 7) {")


VARIANTS = {
    "base": [],
    "no_ends": [no_ends],
    "no_note_branch": [no_note_branch],
    "no_letter_loads": [no_letter_loads],
    "no_interleave": [no_interleave],
    "no_border": [no_border],
    "no_inside_tests": [no_inside_tests],
    "core": [no_ends, no_letter_loads, no_interleave, no_border],
    "exchange8": [exchange8],
    "step_rows_2.5": [],
    "step_rows_5": [],
}
# Host settings of modes_gpu a variant runs under (restored after it): the strip heights offered, and what a step
# costs besides its rows in search_rows' choice.
SETTINGS = {
    "step_rows_2.5": {"SEARCH_STEP_ROWS": 2.5},
    "step_rows_5": {"SEARCH_STEP_ROWS": 5.0},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="*", default=list(VARIANTS))
    parser.add_argument("--old", help="another modes.cu, run as variant 'old' (its results must equal base's)")
    parser.add_argument("--old-kept-rows", action="store_true", help="the old kernel keeps rows in shared memory too")
    parser.add_argument("--db", type=int, default=100_000)
    parser.add_argument("--queries", default=os.path.join(HERE, "..", ".peers", "CUDASW4", "allqueries.fasta"))
    parser.add_argument("--work", default="/tmp/local16_ablation")
    args = parser.parse_args()

    import cupy

    import seqcompare
    import seqcompare.align.modes_gpu as modes_gpu
    from align_modes import search_workload, time_kernel_launches, write_random_database

    launches = time_kernel_launches(cupy, modes_gpu)
    base_source = open(modes_gpu._SOURCE).read()
    base_bytes = modes_gpu.search_profile_bytes
    os.makedirs(args.work, exist_ok=True)
    db = os.path.join(args.work, f"db_{args.db}.fasta")
    if not os.path.exists(db):
        write_random_database(db, args.db)
    database, queries, matrix, pairs = search_workload(db, args.queries)
    names = list(args.variants) + (["old"] if args.old else [])
    results, reference = {}, None
    for round_ in range(2):
        for name in names:
            text = open(args.old).read() if name == "old" else base_source
            for edit in VARIANTS.get(name, []):
                text = edit(text)
            path = os.path.join(args.work, name, "modes.cu")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write(text)
            modes_gpu._SOURCE = path
            if name == "old" and not args.old_kept_rows:  # before session 26: the profile alone
                modes_gpu.search_profile_bytes = lambda rows, size, ends=True: (size + 1) * 32 * modes_gpu.profile_stride(rows) * 4
            else:
                modes_gpu.search_profile_bytes = base_bytes
            saved = {key: getattr(modes_gpu, key) for key in SETTINGS.get(name, {})}
            for key, value in SETTINGS.get(name, {}).items():
                setattr(modes_gpu, key, value)
            best = None
            for call in range(4):
                launches.clear()
                result = seqcompare.align(database, queries, mode="local", matrix=matrix, gap_open=11, gap_extend=1,
                                          pairs=pairs, device="cuda")  # fmt: skip
                cupy.cuda.runtime.deviceSynchronize()
                seconds = sum(cupy.cuda.get_elapsed_time(start, stop) / 1e3 for _, start, stop in launches)
                if call:  # the first call compiles
                    best = seconds if best is None else min(best, seconds)
            for key, value in saved.items():
                setattr(modes_gpu, key, value)
            found = np.column_stack([result.scores, result.positions])
            if name == "base":
                reference = found
            same = None if reference is None else bool(np.array_equal(found, reference))
            same_scores = None if reference is None else bool(np.array_equal(found[:, 0], reference[:, 0]))
            gcups = result.cells / best / 1e9
            results.setdefault(name, []).append(round(gcups))
            print(f"round {round_} {name:16s} kernels {best * 1e3:8.1f} ms {gcups:7.0f} GCUPS  results equal base's: {same} (scores: {same_scores})",
                  flush=True)  # fmt: skip
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
