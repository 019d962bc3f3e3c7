"""Where results go, written so that nothing is ever destroyed and a failed run leaves nothing behind.

Every output of every command and of the Python API goes through this module:

- **Standard output** (no path, ``-`` or ``/dev/stdout``): written as the data is produced.
- **A regular file, or a path that does not exist yet**: written under a hidden temporary name beside it and
  renamed into place when complete, so a reader never sees a partial file and a failed run leaves no file. The
  finished file gets the mode a plain ``open()`` would give it: an existing file keeps its mode, a new one gets
  ``0666`` less the umask (0644 under the usual umask 022).
- **A symbolic link**: the result is built in a temporary file beside the link's target and then copied through
  the link, as ``cat > LINK`` would write it, so the link and its target's identity (inode, mode, other hard
  links) are kept.
- **A character device or a FIFO** (``/dev/null``, a named pipe, a terminal): written through as the data is
  produced. The node itself is never replaced.

Before any work, :func:`check_outputs` refuses an output that is the same file as an input (also through a
symbolic or hard link), a directory, an empty name, or a path in a directory that does not exist.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import threading

from ..errors import InputError

_TEMP_PREFIX = ".seqcompare-"
# Temporary outputs not yet put in place or removed. The command removes what is left here on its way out
# (:func:`remove_unfinished`): a signal can arrive after a temporary file exists but before its owner holds it
# (CI caught SIGTERM inside the constructor of a .npy output, which left the file behind).
_UNFINISHED = {}
_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


@contextlib.contextmanager
def _signals_held():
    """SIGINT, SIGTERM and SIGHUP held back in this thread for the block (delivered when it ends), where the
    platform allows it."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    numbers = {getattr(signal, name) for name in _SIGNALS if hasattr(signal, name)}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, numbers)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def remove_unfinished() -> None:
    """Remove every temporary output file of this process that was neither put in place nor removed (a run that
    ended by an error or a signal). The destinations are untouched."""
    for pending in list(_UNFINISHED.values()):
        pending.abort()


_STDOUT_NAMES = (None, "-", "/dev/stdout")
_umask_lock = threading.Lock()


def _umask() -> int:
    """The process's umask (read without changing it where Linux reports it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    with _umask_lock:  # elsewhere it can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def is_stdout(path) -> bool:
    """True for the names that mean standard output: None, ``-`` and ``/dev/stdout``."""
    return path in _STDOUT_NAMES


def _kind(path: str, follow_links: bool = False) -> str:
    """What ``path`` names: ``"link"`` (unless ``follow_links``), ``"directory"``, ``"file"`` (regular),
    ``"stream"`` (character device, FIFO, socket) or ``"new"`` (nothing there yet)."""
    try:
        mode = (os.stat if follow_links else os.lstat)(path).st_mode
    except FileNotFoundError:
        return "new"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "stream"


def _target_kind(path: str) -> str:
    """:func:`_kind` of what ``path`` finally names once links are followed."""
    return _kind(path, follow_links=True)


def _identity(path: str):
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def check_output(path, option: str) -> None:
    """Refuse an output path that cannot be written: an empty name, a directory, or a missing directory.

    Raises
    ------
    InputError
        Naming the option and the path.
    """
    if is_stdout(path):
        return
    path = os.fspath(path)
    if path == "":
        raise InputError(f"{option}: empty file name")
    if _target_kind(path) == "directory":
        raise InputError(f"{option} {path}: is a directory; give a file name")
    if _kind(path) == "new":
        directory = os.path.dirname(os.path.abspath(path)) or "."
        if not os.path.isdir(directory):
            raise InputError(f"{option} {path}: directory {directory} does not exist")


def check_outputs(outputs: dict, inputs=()) -> None:
    """Check every output before any work: each is writable (:func:`check_output`), none is the same file as an
    input or as another output (compared by device and inode, so symbolic and hard links are seen through).

    Parameters
    ----------
    outputs : dict
        ``{option: path}``; None and ``-`` (standard output) are skipped.
    inputs : iterable of str
        Input paths (``-`` and missing files are skipped).

    Raises
    ------
    InputError
        One line naming the option, the output and the input it would overwrite.
    """
    seen: dict = {}
    input_ids = {}
    for source in inputs:
        if source is None or source == "-":
            continue
        found = _identity(os.fspath(source))
        if found is not None:
            input_ids.setdefault(found, os.fspath(source))
    for option, path in outputs.items():
        if is_stdout(path):
            continue
        check_output(path, option)
        path = os.fspath(path)
        found = _identity(path)
        if found is not None and found in input_ids:
            shown = input_ids[found]
            same = "" if os.path.abspath(shown) == os.path.abspath(path) else f" ({shown})"
            raise InputError(f"{option} {path}: is the input file{same}; refusing to overwrite an input")
        key = found if found is not None else os.path.realpath(path)  # a file still to be made: by its name
        if key in seen and _target_kind(path) != "stream":  # /dev/null may well take two outputs
            raise InputError(f"{option} {path}: is also the output of {seen[key]}")
        seen[key] = option


class PendingFile:
    """A file under construction for ``destination``, put in place by :meth:`commit` or removed by :meth:`abort`.

    ``path`` is where to write meanwhile (a temporary file). For a regular or new destination it lies beside
    the destination and :meth:`commit` renames it there; for a symbolic link it lies beside the link's target
    and is copied through the link; for a device or FIFO it lies in the temporary directory and is copied into
    the node. Use it for outputs that must be complete before anything reaches the destination (a ``.npy``
    written tile by tile); for text written in order, :func:`open_output` streams where it can.
    """

    def __init__(self, destination, suffix: str = ""):
        self.destination = os.fspath(destination)
        self.kind = _kind(self.destination)
        if self.kind in ("file", "new"):
            directory = os.path.dirname(os.path.abspath(self.destination))
        elif self.kind == "link" and _target_kind(self.destination) in ("file", "new"):
            directory = os.path.dirname(os.path.realpath(self.destination))
        else:
            directory = tempfile.gettempdir()
        self._done = False
        with _signals_held():
            try:
                handle = self._create(directory, suffix)
            except PermissionError:
                # A writable file in a directory we may not create files in: build it elsewhere, copy it in.
                self.kind = "link" if self.kind in ("file", "new") else self.kind
                handle = self._create(tempfile.gettempdir(), suffix)
        os.close(handle)

    def _create(self, directory: str, suffix: str) -> int:
        """Create a new temporary file in ``directory``, its name recorded for :func:`remove_unfinished` before
        it exists. Holding the signals in this thread is not enough: a signal that another thread receives runs
        its Python handler in the main thread between any two bytecodes, whatever the main thread's mask, and
        a SIGTERM once landed between ``mkstemp``'s return and the record, which left the file behind (a fresh
        clone's CI, session 39)."""
        while True:
            self.path = os.path.join(directory, f"{_TEMP_PREFIX}{secrets.token_hex(6)}{suffix}")
            _UNFINISHED[id(self)] = self
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another file has this name: never ours to remove
                _UNFINISHED.pop(id(self), None)

    def commit(self) -> None:
        """Put the finished file at its destination."""
        if self._done:
            return
        try:
            if self.kind in ("file", "new"):
                try:
                    mode = stat.S_IMODE(os.stat(self.destination).st_mode)
                except FileNotFoundError:
                    mode = 0o666 & ~_umask()
                os.chmod(self.path, mode)
                os.replace(self.path, self.destination)
            else:  # write through the link or into the node, as `cat > destination` would
                with open(self.path, "rb") as source, open(self.destination, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 22)
                os.unlink(self.path)
        except BaseException:
            self.abort()
            raise
        self._done = True
        _UNFINISHED.pop(id(self), None)

    def abort(self) -> None:
        """Remove the temporary file (the destination is untouched)."""
        if not self._done:
            self._done = True
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        _UNFINISHED.pop(id(self), None)


@contextlib.contextmanager
def open_output(path, option: str = "-o"):
    """Yield a binary handle for an output (see the module's rules); on success the output is complete at
    ``path``, on any exception (including an interrupt) nothing is left but what a stream already took.

    Parameters
    ----------
    path : str, path-like or None
        None, ``-`` or ``/dev/stdout`` for standard output.
    option : str
        The option that named it, for error messages.
    """
    if is_stdout(path):
        stream = sys.stdout.buffer
        yield stream
        stream.flush()
        return
    check_output(path, option)
    path = os.fspath(path)
    if _kind(path) == "stream" or (_kind(path) == "link" and _target_kind(path) == "stream"):
        with open(path, "wb") as stream:
            yield stream
        return
    pending = PendingFile(path)
    try:
        with open(pending.path, "wb") as stream:
            yield stream
        pending.commit()
    finally:
        pending.abort()


# Uncompressed bytes a gzip member: large enough that splitting costs nothing measurable in size (DEFLATE's window
# is 32 KB), small enough to keep every thread busy on a few hundred MB.
GZIP_PIECE_BYTES = 4 << 20


class ParallelGzipWriter:
    """A binary file object that gzip-compresses what is written through it by threads, like pigz.

    The data is cut into pieces of ``piece_bytes``; a thread compresses each piece into a gzip member of its own
    and the members are written to ``stream`` in order. A file of several members is one gzip file (RFC 1952,
    section 2.2): gzip, zcat, Python's :mod:`gzip` and seqkit read it as one stream. The bytes written depend on
    the data, ``level`` and ``piece_bytes`` only, not on ``threads``; nothing written produces one empty member.
    Closing it does not close ``stream``.

    Parameters
    ----------
    stream : binary file object
    threads : int
        Members compressed at once.
    level : int
        zlib's compression level (6, gzip's default).
    piece_bytes : int, optional
        Default :data:`GZIP_PIECE_BYTES`.
    """

    def __init__(self, stream, threads: int, *, level: int = 6, piece_bytes: int | None = None):
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        self._stream = stream
        self._level = level
        self._piece = int(piece_bytes or GZIP_PIECE_BYTES)
        self._threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="seqcompare-gzip")
        self._pending = deque()
        self._buffer = bytearray()
        self._members = 0
        self.closed = False

    def _compress(self, data: bytes) -> bytes:
        import gzip

        return gzip.compress(data, compresslevel=self._level, mtime=0)  # zlib releases the GIL as it works

    def _submit(self, data: bytes) -> None:
        self._pending.append(self._pool.submit(self._compress, data))
        self._members += 1
        while len(self._pending) > 2 * self._threads:  # a bounded number of pieces in memory
            self._stream.write(self._pending.popleft().result())

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        size = view.nbytes
        while view.nbytes:
            if not self._buffer and view.nbytes >= self._piece:  # whole pieces straight from the caller's data
                self._submit(bytes(view[: self._piece]))
                view = view[self._piece :]
                continue
            take = min(view.nbytes, self._piece - len(self._buffer))
            self._buffer += view[:take]
            view = view[take:]
            if len(self._buffer) == self._piece:
                self._submit(bytes(self._buffer))
                self._buffer.clear()
        return size

    def close(self) -> None:
        """Compress what is left and write every member (the stream stays open)."""
        if self.closed:
            return
        self.closed = True
        try:
            if self._buffer or self._members == 0:
                self._submit(bytes(self._buffer))
                self._buffer.clear()
            while self._pending:
                self._stream.write(self._pending.popleft().result())
        finally:
            for future in self._pending:
                future.cancel()
            self._pool.shutdown(wait=True)

    def abort(self) -> None:
        """Stop without writing what is left (an error or a signal: the output is removed anyway)."""
        self.closed = True
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *_) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class BackgroundWriter:
    """A binary file object that hands what is written to one thread, which writes it to ``stream`` in order, so
    that the caller formats the next block while the last goes to the file system (Python lets go of the GIL
    while the OS takes the bytes).

    A buffer passed to :meth:`write` is written later: the caller must not change it afterwards (a block formatted
    into a fresh buffer, say). At most ``depth`` writes wait at a time. Leaving the ``with`` block waits for every
    write and raises the first error; leaving it by an exception drops what has not been written and lets the
    exception through.

    Parameters
    ----------
    stream : binary file object
        Where the bytes go.
    depth : int
        Writes that may wait for the thread before :meth:`write` blocks.
    """

    def __init__(self, stream, depth: int = 2):
        import queue

        self._stream = stream
        self._queue = queue.Queue(maxsize=max(1, depth))
        self._error = None
        self._dropping = False
        self._thread = threading.Thread(target=self._run, name="seqcompare-write", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            data = self._queue.get()
            if data is None:
                return
            if self._error is None and not self._dropping:
                try:
                    self._stream.write(data)
                except BaseException as error:  # given to the caller at its next write, or at the end
                    self._error = error

    def write(self, data) -> int:
        if self._error is not None:
            raise self._error
        self._queue.put(data)
        return len(memoryview(data).cast("B"))

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is not None:
            self._dropping = True
        self._queue.put(None)
        self._thread.join()
        if kind is None and self._error is not None:
            raise self._error
