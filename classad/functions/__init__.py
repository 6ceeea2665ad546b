"""Builtin ClassAd functions, looked up by case-insensitive name.

Each module in this package registers its functions with :func:`builtin`. A strict
builtin receives evaluated values as positional arguments and returns a value; a
lazy one (``lazy=True``) receives the evaluation context and the argument thunks,
for functions that must not evaluate every argument or need the expressions
themselves (``ifThenElse``, ``eval``, ``unparse``). A call with the wrong number of
arguments, or to a name that is not registered, evaluates to ERROR.
"""

from __future__ import annotations

from typing import Callable

import attrs


@attrs.frozen
class Builtin:
    """One registered function: its name, implementation and accepted argument counts."""

    name: str
    impl: Callable
    min_args: int
    max_args: int | None  # None: any number
    lazy: bool = False

    def accepts(self, count: int) -> bool:
        return count >= self.min_args and (self.max_args is None or count <= self.max_args)


FUNCTIONS: dict[str, Builtin] = {}


def builtin(name: str, min_args: int = 0, max_args: int | None = -1, lazy: bool = False) -> Callable:
    """Register the decorated function under ``name`` (case-insensitive).

    ``max_args=-1`` (the default) means exactly ``min_args``; ``None`` means no upper bound.
    """
    upper = min_args if max_args == -1 else max_args

    def register(impl: Callable) -> Callable:
        FUNCTIONS[name.lower()] = Builtin(name, impl, min_args, upper, lazy)
        return impl

    return register


def lookup(name: str) -> Builtin | None:
    """The builtin called ``name``, or None; loads every function module on first use."""
    _load_all()
    return FUNCTIONS.get(name.lower())


_loaded = False


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
