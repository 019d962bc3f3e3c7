"""Checks of public arguments: a wrong type raises ``TypeError`` and a wrong value ``ValueError``, each naming the
argument, before any work starts."""

from __future__ import annotations

import math
import numbers
import os


def integer(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int, checked.

    Parameters
    ----------
    value : int-like
        Python or NumPy integers; ``bool``, floats (even ``2.0``) and strings are refused.
    name : str
        The argument's name, for the message.
    minimum, maximum : int, optional
        Inclusive bounds.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If it is out of bounds.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, not {value}")
    return value


def optional_integer(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int | None:
    """:func:`integer`, with None passed through."""
    return None if value is None else integer(value, name, minimum=minimum, maximum=maximum)


def threads(value) -> int | None:
    """A thread count: None (all cores) or an integer of at least 1."""
    return optional_integer(value, "threads", minimum=1)


def default_threads() -> int:
    """Cores this process may run on (what ``threads=None`` means)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def real(value, name: str, *, minimum: float | None = None, maximum: float | None = None,
         above: float | None = None) -> float:  # fmt: skip
    """``value`` as a finite float, checked: ``minimum``/``maximum`` inclusive, ``above`` exclusive.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool`` and strings are refused).
    ValueError
        If it is NaN, infinite, or out of bounds.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, not {value}")
    if above is not None and value <= above:
        raise ValueError(f"{name} must be greater than {above}, not {value}")
    return value


def choice(value, name: str, options) -> str:
    """``value`` if it is one of ``options``, else ``ValueError`` listing them."""
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(str, options))}; not {value!r}")
    return value
