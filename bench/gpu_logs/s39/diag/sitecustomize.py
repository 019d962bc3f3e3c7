# Session 39 diagnosis: when the interpreter starts (this import) and when the command calls os._exit, on the
# wall clock, to place the 1 Gbp scan's time outside its own log lines.
import os
import sys
import time

_started = time.time()
_exit = os._exit


def _timed_exit(status):
    sys.stderr.write(f"[diag] interpreter start {_started:.3f} os._exit {time.time():.3f}\n")
    sys.stderr.flush()
    _exit(status)


os._exit = _timed_exit
