"""What every command shares: the options defined once (``-o``, ``-j``, ``-q``, ``--device``, ``--cluster``,
``--scheduler``), the log and progress on standard error, the checks made before any work, and a Dask client.

Nothing here imports Numba, CuPy or Dask at module level, so ``seqcompare --help`` and the GPU scan helper's
early fork stay fast.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time

from ..errors import InputError
from ..io.output import check_outputs


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps descriptions as written and adds ``(default: X)`` to every option that has a default worth showing."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (not action.option_strings or action.nargs == 0 or "default" in text
                or action.default in (None, "", argparse.SUPPRESS)):  # fmt: skip
            return text
        return text + " (default: %(default)s)"


class Log:
    """Log lines and progress on standard error: ``[seqcompare   1.23s] message``; silent with ``-q``.

    ``progress`` is what the public functions take as their ``progress`` argument: a bar when standard error is
    a terminal, else a :class:`~seqcompare.progress.PeriodicLog` line every ten seconds or so; None with ``-q``.
    """

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.started = time.perf_counter()
        self.progress = None if quiet else self._reporter

    def __call__(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.perf_counter() - self.started
            print(f"[seqcompare {elapsed:7.2f}s] {message}", file=sys.stderr, flush=True)

    def warn(self, message: str) -> None:
        print(f"seqcompare: warning: {message}", file=sys.stderr, flush=True)

    def _reporter(self, total: int, unit: str, what: str):
        from ..progress import Bar, PeriodicLog

        if sys.stderr.isatty():
            return Bar(total, unit, what)
        return PeriodicLog(total, unit, what, self)

    def stages(self, what: str, timings: dict) -> None:
        """One line: ``what (stage 0.123 s, ...)`` from ``timings``' seconds (keys ending in ``_s``); other
        entries, such as a helper's note that it could not page-lock memory, are shown as they are."""
        self(f"{what} (" + ", ".join(_stage(name, value) for name, value in timings.items()) + ")")

    def duplicates(self, source: str, names, what: str = "name") -> None:
        """One warning for the names that occur more than once in ``source``: their count and the first few."""
        check = getattr(names, "has_duplicates", None)  # EncodedNames answer without decoding every name
        unique = not check() if check is not None else len(set(names)) == len(names)
        if unique:  # the usual case, without a Python step per name
            return
        seen: set = set()
        repeated: dict = {}
        for name in names:
            if name in seen:
                repeated[name] = None
            seen.add(name)
        if repeated:
            shown = ", ".join(list(repeated)[:3]) + (" ..." if len(repeated) > 3 else "")
            self.warn(f"{source}: {len(repeated)} duplicated {what}(s): {shown}")


def _stage(name: str, value) -> str:
    if isinstance(value, float) and name.endswith("_s"):
        return f"{name[:-2].replace('_', ' ')} {value:.3f} s"
    return f"{name.replace('_', ' ')}: {value}"


# -------------------------------------------------------------------------------------------- option types


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, not {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, not {text!r}") from None


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
    return value


def probability(text: str) -> float:
    """A rate between 0 and 1."""
    value = finite_float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {text!r}")
    return value


# ----------------------------------------------------------------------------------------- shared options


def add_output(parser, help_text: str = "write here instead of standard output ('-': standard output)") -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help=help_text)


def add_threads(parser, help_text: str = "CPU threads (default: all cores)") -> None:
    parser.add_argument("-j", "--threads", type=positive_int, metavar="N", help=help_text)


def add_quiet(parser) -> None:
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no log messages and no progress on standard error")  # fmt: skip


def add_device(parser, help_text: str = "where to compute: cuda needs an NVIDIA GPU and the [cuda] extra; auto "
               "takes a GPU when one is usable", default: str | None = "cpu") -> None:  # fmt: skip
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default=default, help=help_text)


def add_cluster(parser) -> None:
    parser.add_argument("--cluster", choices=("none", "local"), default="none",
                        help="local: run on a Dask cluster of worker processes on this machine (one worker per GPU "
                             "with --device cuda; needs the [distributed] extra)")  # fmt: skip
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on the existing Dask cluster at ADDRESS (e.g. tcp://host:8786); output files must "
                             "be on a path every worker can write")  # fmt: skip
    parser.add_argument("--workers", type=positive_int, metavar="N", help="workers of --cluster local")


def add_common(parser, *, output: bool = True, device: bool = True, cluster: bool = False) -> None:
    """``-o``, ``--device``, ``-j`` and ``-q``, in that order, as every command has them (and ``--cluster``,
    ``--scheduler``, ``--workers`` with ``cluster``)."""
    if output:
        add_output(parser)
    if device:
        add_device(parser)
    add_threads(parser)
    add_quiet(parser)
    if cluster:
        add_cluster(parser)


# ------------------------------------------------------------------------------------ before any work


def prepare(args, inputs=(), outputs=None, *, start_cuda: bool = True, warm_up=None) -> None:
    """The checks made before any input is read: the GPU is there when ``--device cuda`` asks for one, no output
    is an input or unwritable (:func:`~seqcompare.io.output.check_outputs`). With ``start_cuda``, CUDA then starts
    in a background thread while the input is read (:func:`~seqcompare.cuda.runtime.start_in_background`), and
    ``warm_up`` (loading the command's kernels) runs there after it; ``start_cuda=False`` only checks (for
    commands that start CUDA in a helper process or on Dask workers)."""
    if getattr(args, "device", None) == "cuda":
        from ..cuda.runtime import require_gpu_quickly, start_in_background

        require_gpu_quickly()
        if start_cuda:
            start_in_background(warm_up)
    check_outputs(outputs if outputs is not None else {"-o": getattr(args, "output", None)}, inputs)


def check_cluster_options(args) -> None:
    if args.scheduler is None and args.cluster == "none" and args.workers:
        raise InputError("--workers sizes a Dask cluster: add --cluster local")
    if args.scheduler is not None and args.cluster != "none":
        raise InputError("--scheduler joins an existing cluster; do not combine it with --cluster")


@contextlib.contextmanager
def dask_client(args, log):
    """A Dask client for ``--cluster local`` or ``--scheduler`` (None without either), closed with its local
    cluster at the end."""
    check_cluster_options(args)
    if args.scheduler is None and args.cluster == "none":
        yield None
        return
    from ..distributed import close, connect
    from ..cuda.runtime import resolve_device

    client = connect(args.scheduler, workers=args.workers, device=resolve_device(args.device),
                     threads=args.threads, log=log)  # fmt: skip
    try:
        yield client
    finally:
        close(client)


def int_list(text: str, count: int, option: str) -> list:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if len(values) != count:
        raise InputError(f"{option} needs {count} comma-separated integers, not {text!r}")
    return values
