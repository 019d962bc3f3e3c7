# Session 40 diagnosis: wall-clock marks through a scan command (interpreter start, the command's handler, its
# Log, the helper path, the output write, main's return, os._exit), to find the time outside the log's lines.
import os
import sys
import time

_started = time.time()
_marks = [("interpreter", _started)]
_exit = os._exit


def _mark(name):
    _marks.append((name, time.time()))


def _timed_exit(status):
    _mark("os._exit")
    sys.stderr.write("[diag] " + " ".join(f"{n}@{t - _started:.3f}" for n, t in _marks) + "\n")
    sys.stderr.flush()
    _exit(status)


os._exit = _timed_exit

if os.environ.get("SEQCOMPARE_DIAG_CLI"):
    import seqcompare.cli as cli
    import seqcompare.cli.scan as scan

    _mark("cli imported")

    def _wrapped(module, name):
        function = getattr(module, name)

        def run(*args, **kwargs):
            _mark(name + ">")
            try:
                return function(*args, **kwargs)
            finally:
                _mark(name + "<")

        setattr(module, name, run)

    for _name in ("run_command", "_scan_with_helper", "_write", "prepare"):
        _wrapped(scan, _name)
    _wrapped(cli, "main")
