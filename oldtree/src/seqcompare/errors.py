"""Exceptions raised for bad input; the CLI turns each into a one-line message and a non-zero exit."""


class InputError(ValueError):
    """Input that cannot be processed: missing or unreadable file, wrong format, inconsistent records.

    The message names the file and, where there is one, the record.
    """


class DeviceError(RuntimeError):
    """A requested device cannot be used (no CuPy, no visible GPU); the message says what to install."""
