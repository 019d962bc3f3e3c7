"""Progress of long work, reported the same way by every command: a bar on a terminal, a log line every ten
seconds or so otherwise, nothing when quiet.

The engines only call :func:`reporter` with their total and unit and then ``update(done)`` as work finishes (from
any thread); what the report looks like is the caller's choice, through the ``progress`` argument of the public
functions:

- ``False`` or ``None``: nothing;
- ``True``: a bar on standard error (``tqdm``);
- a callable ``progress(total, unit, what)`` returning an object with ``update(n)`` and ``close()`` (the command
  line passes one that draws a bar on a terminal and writes :class:`PeriodicLog` lines elsewhere).

It also carries the one-time notice that kernels are being compiled (:func:`notice_compilation`), which the
compiled modules raise when Numba compiles rather than loads from its cache.
"""

from __future__ import annotations

import sys
import threading
import time


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


SILENT = _Silent()


class Bar:
    """A ``tqdm`` bar on standard error."""

    def __init__(self, total: int, unit: str, what: str):
        from tqdm import tqdm

        self._bar = tqdm(total=total, unit=unit, unit_scale=True, file=sys.stderr, desc=what, leave=False)
        self._lock = threading.Lock()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self._bar.update(n)

    def close(self) -> None:
        self._bar.close()


class PeriodicLog:
    """Writes ``what: 45% (1.2e+09 of 2.7e+09 pairs)`` through ``log`` at most every ``interval`` seconds, so a
    long run under a scheduler leaves a trace in its log without flooding it."""

    def __init__(self, total: int, unit: str, what: str, log, interval: float = 10.0):
        self.total, self.unit, self.what, self.log, self.interval = total, unit, what, log, interval
        self.done = 0
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            now = time.monotonic()
            if now - self._last < self.interval:
                return
            self._last = now
            share = self.done / self.total if self.total else 1.0
        self.log(f"{self.what}: {share:.0%} ({self.done:.4g} of {self.total:.4g} {self.unit}s)")

    def close(self) -> None:
        pass


def reporter(progress, total: int, unit: str, what: str):
    """The reporter for a piece of work of ``total`` ``unit``\\ s (see the module's rules for ``progress``)."""
    if not progress:
        return SILENT
    if callable(progress):
        return progress(total, unit, what)
    return Bar(total, unit, what)


_compile_notice = {"callback": None, "given": False}


def on_first_compilation(callback) -> None:
    """Have ``callback()`` called once, the first time this process compiles a kernel (None: never)."""
    _compile_notice["callback"] = callback
    _compile_notice["given"] = False


def notice_compilation() -> None:
    """Called by the compiled modules when Numba starts compiling (a cold cache)."""
    callback = _compile_notice["callback"]
    if callback is not None and not _compile_notice["given"]:
        _compile_notice["given"] = True
        callback()


# A stop (a signal's exception) raised where Python discards exceptions, e.g. while Numba's compiler runs a
# finaliser: kept here until the next safe point re-raises it, so an interrupt is never lost.
_pending_stop: list = []


def request_stop(exception: BaseException) -> None:
    """Record ``exception`` (a signal's) to be raised by the next :func:`raise_if_stopped`."""
    _pending_stop[:] = [exception]


def clear_stop() -> None:
    """Forget a recorded stop (once it has ended the run)."""
    _pending_stop.clear()


def raise_if_stopped() -> None:
    """Raise the recorded stop, if any (the engine calls this between parts)."""
    if _pending_stop:
        raise _pending_stop.pop()
