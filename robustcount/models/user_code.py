"""Running the user's own code (a `py:module:function` model): its import, its factory and its
model's methods. Whatever that code raises, `SystemExit` included, becomes a `UserCodeError`
that says it in the user's words ("your model raised ValueError: ... (in py:mod:make, at
mod.py:12)"). robustcount's own one-line errors pass through as they are, and so does an
exception whose every frame is robustcount's (a bug of robustcount's, not the user's)."""

from __future__ import annotations

import functools
import importlib
import sys
import sysconfig
import traceback
from pathlib import Path

from robustcount.errors import RobustcountError, UserCodeError
from robustcount.models.base import as_numbers

PACKAGE = Path(__file__).resolve().parents[1]
"""robustcount's own package: a frame in it is not the user's code."""

LIBRARIES = tuple({Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "purelib", "platlib")})
"""Where Python and installed libraries live: a frame there is where the user's code called them."""

GUARDED_METHODS = ("predict_proba", "word_saliency", "embed", "digest")
"""The methods of a user's model that robustcount calls (`models/base.py`)."""


def user_code_error(error: BaseException, where: str) -> BaseException:
    """The one-line `UserCodeError` of `error`, raised by the user's code run as `where`; `error`
    itself when no frame of its traceback is outside robustcount's package."""
    if not _frames_outside_robustcount(error):
        return error
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    said = f"{type(error).__name__}: {message}" if message else type(error).__name__
    if isinstance(error, SystemExit):
        said = f"SystemExit({error.code!r})"
    place = _raised_at(error)
    return UserCodeError(f"your model raised {said} (in {where}{f', at {place}' if place else ''})")


def _frames_outside_robustcount(error: BaseException) -> list[traceback.FrameSummary]:
    return [frame for frame in traceback.extract_tb(error.__traceback__)
            if not Path(frame.filename).resolve().is_relative_to(PACKAGE)]


def _raised_at(error: BaseException) -> str | None:
    """`file:line` of the deepest frame of `error`'s traceback in the user's own code (else in a
    library the code called)."""
    frames = _frames_outside_robustcount(error)
    own = [frame for frame in frames if not any(Path(frame.filename).resolve().is_relative_to(lib)
                                                for lib in LIBRARIES)]
    chosen = (own or frames)[-1:]
    return f"{_short(chosen[0].filename)}:{chosen[0].lineno}" if chosen else None


def _short(filename: str) -> str:
    """`filename` relative to the current directory when it is inside it."""
    path = Path(filename)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return filename


def import_user_module(name: str, where: str):
    """The user's module `name` (the current directory searched too); a module that cannot be
    found is a one-line error naming `where`, one that raises at import a `UserCodeError`."""
    added = str(Path.cwd()) not in sys.path
    if added:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name and name.split(".")[:len(err.name.split("."))] == err.name.split("."):
            raise RobustcountError(f"{where}: no module named {err.name!r}") from None
        raise user_code_error(err, f"the import of {name}") from None
    except RobustcountError:
        raise
    except (Exception, SystemExit) as err:
        raise user_code_error(err, f"the import of {name}") from None
    finally:
        if added:
            sys.path.remove(str(Path.cwd()))


def call_user(function, where: str, *args, **kwargs):
    """`function(*args, **kwargs)`, the user's code run as `where`."""
    try:
        return function(*args, **kwargs)
    except RobustcountError:
        raise
    except (Exception, SystemExit) as err:
        raise user_code_error(err, where) from None


def guard_methods(model, where: str):
    """`model` (the user's factory's result) with the methods robustcount calls (GUARDED_METHODS)
    turned so that what they raise is a `UserCodeError`, and what `predict_proba` returns is
    numbers (else a one-line error naming it); the model keeps its class (a model whose attributes
    cannot be set keeps its methods as they are)."""
    for name in GUARDED_METHODS:
        method = getattr(model, name, None)
        if callable(method):
            guarded = (_numeric if name == "predict_proba" else _guarded)(method, f"{name} of the model of {where}")
            try:
                setattr(model, name, guarded)
            except (AttributeError, TypeError):
                pass
    return model


def _guarded(method, where: str):
    @functools.wraps(method)
    def run(*args, **kwargs):
        return call_user(method, where, *args, **kwargs)

    return run


def _numeric(method, where: str):
    """`_guarded(method)`, whose answer is checked to be numbers (a float64 array)."""
    @functools.wraps(method)
    def run(*args, **kwargs):
        return as_numbers(call_user(method, where, *args, **kwargs), where, "probabilities")

    return run
