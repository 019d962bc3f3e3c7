"""The ``seqcompare`` command line: a thin layer over the Python API, one module per command.

Data goes to standard output or ``-o FILE``; logs and progress go to standard error (a bar on a terminal, a line
every ten seconds or so elsewhere, nothing with ``-q``). Bad input ends with one ``seqcompare: error: ...`` line
and a non-zero exit status, and leaves no output file (see :mod:`seqcompare.io.output`). SIGINT, SIGTERM and
SIGHUP end a run the same way, with status 130, 143 or 129, after removing every temporary file and stopping any
local Dask cluster.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys

from .. import __version__
from ..errors import DeviceError, InputError
from ..io.output import remove_unfinished
from . import align, ccc, dtw, hamming, plot, scan, simulate
from .common import HelpFormatter

COMMANDS = (hamming, scan, ccc, align, dtw, simulate, plot)


class Interrupted(KeyboardInterrupt):
    """A run ended by a signal; ``status`` is the shell's ``128 + signal number``."""

    def __init__(self, number: int):
        super().__init__(signal.Signals(number).name)
        self.status = 128 + number


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its errors as one ``seqcompare: error:`` line (exit status 2) like every other error."""

    def error(self, message: str):
        self.exit(2, f"seqcompare: error: {self.prog.removeprefix('seqcompare ')}: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="seqcompare",
        description="Exact all-pairs comparison of sequences and genotype vectors at hardware speed.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"seqcompare {__version__}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


@contextlib.contextmanager
def _numba_without_blas_probe():
    """Keep Numba from importing SciPy's BLAS while its CPU target loads, for this command only.

    When SciPy is installed, Numba's first dispatch imports ``scipy.linalg.cython_blas`` to see whether
    ``np.dot`` can be compiled: 0.15-0.3 s of every CLI run (see docs/DEVELOPING.md). No seqcompare kernel
    calls BLAS from Numba; the ``matrix`` method's BLAS is NumPy's own, which this does not touch.
    """
    name = "scipy.linalg.cython_blas"
    blocked = name not in sys.modules
    if blocked:
        sys.modules[name] = None  # an import of it now fails fast with ImportError
    try:
        yield
    finally:
        if blocked and sys.modules.get(name, 0) is None:
            del sys.modules[name]


@contextlib.contextmanager
def _signals_end_the_run():
    """SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread, so that every ``finally`` and
    context manager on the way out (temporary files, Dask clusters, helper processes) runs. The exception is also
    recorded (:func:`seqcompare.progress.request_stop`): one that arrives where Python discards exceptions (a
    finaliser of Numba's compiler, measured on a cold cache) is raised again by the engine between parts. The
    previous handlers come back afterwards."""
    from ..progress import clear_stop, request_stop

    if sys.platform == "win32" or signal.getsignal(signal.SIGTERM) is None:
        yield
        return

    def raise_interrupted(number, _frame):
        exception = Interrupted(number)
        request_stop(exception)
        raise exception

    previous = {}
    try:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous[number] = signal.signal(number, raise_interrupted)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield
    finally:
        clear_stop()
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def _compile_notice(args):
    """One line, the first time this run compiles a kernel (a cold Numba cache)."""
    from ..progress import on_first_compilation

    if getattr(args, "quiet", False):
        yield
        return
    on_first_compilation(lambda: print("seqcompare: compiling kernels (first run only)", file=sys.stderr, flush=True))
    try:
        yield
    finally:
        on_first_compilation(None)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``seqcompare`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already reported in one line
        return exc.code if isinstance(exc.code, int) else 2
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        with _signals_end_the_run(), _numba_without_blas_probe(), _compile_notice(args):
            return args.handler(args)
    except (InputError, DeviceError) as exc:
        print(f"seqcompare: error: {exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print("seqcompare: error: out of memory; try fewer threads, --tile-size, or a streamed output", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # Downstream closed the pipe (e.g. `| head`): not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
        return 0
    except OSError as exc:  # the system refused something: disk full, permission, a vanished file
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"seqcompare: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except Interrupted as exc:
        print("seqcompare: interrupted" if exc.status == 130 else f"seqcompare: terminated ({exc})", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        print("seqcompare: interrupted", file=sys.stderr)
        return 130
    finally:
        remove_unfinished()  # a temporary output whose owner an error or a signal never reached
        _wait_for_background_cleanup()


def _wait_for_background_cleanup() -> None:
    """Shared-memory files of a Dask run are removed by a background thread; :func:`entry` ends the process with
    ``os._exit``, which would not wait for it."""
    distributed = sys.modules.get("seqcompare.distributed")
    if distributed is not None:
        distributed.finish_removals()


def entry() -> None:
    """The ``seqcompare`` console script: :func:`main`, then an immediate exit once the output is flushed.

    Skipping the interpreter's teardown (CuPy's memory pools and CUDA context, Numba's state) saves ~0.3 s
    per GPU run; every output file is complete (or removed) and every cluster stopped before :func:`main`
    returns."""
    status = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)
