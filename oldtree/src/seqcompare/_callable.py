"""Command packages that can be called like the function they are named after.

``seqcompare.hamming``, ``seqcompare.scan``, ``seqcompare.align`` and ``seqcompare.ccc`` are packages (one folder
per command) and also the public functions users call: ``seqcompare.hamming(X)``. Once a package is imported,
Python binds its name in ``seqcompare`` to the module, which would hide a function of the same name; so the
package's module object is made callable instead (Python supports setting a module's ``__class__`` to a subclass
of ``ModuleType``), and calling it calls the function, which is loaded on the first call (the packages import
their kernels lazily, so that the command line's parser loads no Numba). ``inspect.signature`` follows
``__wrapped__`` to the function.
"""

from __future__ import annotations

import importlib
import sys
import types


class _CallableModule(types.ModuleType):
    @property
    def __wrapped__(self):
        module_name, attribute = self._call_target
        return getattr(importlib.import_module(module_name), attribute)

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)


def make_callable(module_name: str, target: str) -> None:
    """Make the module ``module_name`` call ``target`` (``"module.path:function"``) when called."""
    module = sys.modules[module_name]
    module.__class__ = _CallableModule
    module._call_target = tuple(target.split(":"))


def lazy_attributes(module_name: str, exports: dict):
    """A module ``__getattr__`` that imports ``exports[name]`` (``"module.path:attribute"``) on first use."""

    def __getattr__(name: str):
        try:
            target = exports[name]
        except KeyError:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}") from None
        path, attribute = target.split(":")
        value = getattr(importlib.import_module(path), attribute)
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__


def command_package(module_name: str, call_target: str, exports: dict):
    """Set up a command's package: callable as ``call_target``, with ``exports`` loaded on first use. Returns its
    ``(__all__, __getattr__)``."""
    make_callable(module_name, call_target)
    return sorted(exports), lazy_attributes(module_name, exports)
