"""Registries of named extension points (dataset commands, attack recipes): each class registers
itself when it is defined, and a registry finds the built-in ones by importing its package."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

from robustcount.errors import RobustcountError


def register(registry: dict, name: str, item, what: str) -> None:
    """Put `item` (an instance of the class being defined) in `registry` under `name`, which must
    be new: only the same class, defined again (a module re-imported), may take it again."""
    if name in registry and type(registry[name]).__qualname__ != type(item).__qualname__:
        raise RobustcountError(f"two {what}s are named {name!r}")
    registry[name] = item


def import_package(package: str) -> None:
    """Import every module of `package`, so that the classes they define register themselves."""
    found = importlib.import_module(package)
    for module in pkgutil.iter_modules(found.__path__):
        importlib.import_module(f"{package}.{module.name}")


def named(registry: dict, name: str, what: str, load: Callable[[], dict]):
    """`registry[name]`, loading the built-in ones with `load()` when `name` is not there yet."""
    found = registry if name in registry else load()
    if name not in found:
        raise RobustcountError(f"unknown {what} {name!r} (known: {', '.join(sorted(found))})")
    return found[name]

