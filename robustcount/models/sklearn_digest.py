"""A digest of a fitted scikit-learn estimator that is the same in every process.

Hashing the pickled estimator (joblib's hash) sees everything it holds, including what names this
process only: a fitted CountVectorizer or TfidfVectorizer keeps `_stop_words_id = id(stop_words)`,
and a set of strings iterates in an order that changes with the hash seed. This digest reads what
defines the model: the estimator's class, its parameters (`get_params`; nested estimators
recursively, which is what `deep=True` lists) and its fitted state (every other attribute: the
public ones ending in `_`, and the private ones that prediction reads, such as TfidfVectorizer's
`_tfidf`, which holds its `idf_`). Each value is encoded canonically: arrays by dtype, shape and
bytes (object arrays element by element, structured arrays field by field, never their padding),
dicts and sets in sorted order, functions by their name and source. A value with no canonical
encoding is refused in one line, never hashed by something that differs between processes.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import struct
import sys
import types
from collections.abc import Iterable

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.function_adapter import module_source

PER_PROCESS_ATTRIBUTES = frozenset({"_stop_words_id"})
"""Attributes that name an object of this process rather than the model (scikit-learn's
vectorizers keep the id of their stop-word list, to warn once about it)."""


def estimator_digest(estimator, name: str = "sklearn") -> str:
    """SHA-256 of `estimator`'s class, parameters and fitted state, canonically encoded (see the
    module docstring); the same in every process. A value that cannot be encoded canonically is a
    `RobustcountError` naming where it lies (`name` starts the message)."""
    try:
        return hashlib.sha256(_encode(estimator, "estimator")).hexdigest()
    except _NotCanonical as err:
        raise RobustcountError(f"{name}: cannot identify the model across processes: {err}") from None
    except RecursionError:
        raise RobustcountError(f"{name}: cannot identify the model across processes: it refers to itself (a cycle "
                               "of objects has no canonical encoding)") from None


class _NotCanonical(Exception):
    """A value (described by the message) with no encoding that is the same in every process."""


def _frame(tag: bytes, parts: Iterable[bytes]) -> bytes:
    """`tag`, then each part preceded by its length, so that no two sequences of parts collide."""
    return tag + b"".join(len(part).to_bytes(8, "little") + part for part in parts)


def _text(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def _encode(value, where: str) -> bytes:
    """The canonical bytes of `value`, found at `where` (for messages)."""
    if isinstance(value, (np.ndarray, np.generic)):  # before float and str: numpy scalars are both
        return _array(np.asarray(value), where)
    if value is None or isinstance(value, bool):
        return _frame(b"b", [_text(repr(value))])
    if isinstance(value, int):
        return _frame(b"i", [_text(str(int(value)))])
    if isinstance(value, float):
        return _frame(b"f", [struct.pack("<d", value)])
    if isinstance(value, str):
        return _frame(b"s", [_text(value)])
    if isinstance(value, bytes):
        return _frame(b"y", [value])
    if isinstance(value, (list, tuple)):
        return _frame(b"l" if isinstance(value, list) else b"t",
                      [_encode(item, f"{where}[{i}]") for i, item in enumerate(value)])
    if isinstance(value, dict):
        items = sorted((_encode(key, f"{where} key {key!r}"), _encode(item, f"{where}[{key!r}]"))
                       for key, item in value.items())
        return _frame(b"d", [_frame(b"", pair) for pair in items])
    if isinstance(value, (set, frozenset)):
        return _frame(b"e", sorted(_encode(item, f"{where} element") for item in value))
    if isinstance(value, np.dtype):
        return _frame(b"D", [_text(repr(np.lib.format.dtype_to_descr(value)))])
    if type(value).__module__.startswith("scipy.sparse"):
        return _sparse(value, where)
    if isinstance(value, type):
        return _frame(b"c", [_text(_qualified_name(value))])
    if hasattr(value, "get_params") and hasattr(value, "__dict__"):
        return _estimator(value, where)
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        state = value.get_state() if isinstance(value, np.random.RandomState) else value.bit_generator.state
        return _frame(b"r", [_text(type(value).__name__), _encode(state, f"{where} state")])
    if callable(value):
        return _callable(value, where)
    if type(value).__module__.split(".")[0] == "sklearn":  # a helper object of scikit-learn's (a tree, a loss)
        return _reduced(value, where)
    raise _NotCanonical(f"{where} is a {_qualified_name(type(value))}, which has no canonical encoding")


def _array(array: np.ndarray, where: str) -> bytes:
    """An array by dtype, shape and contents: object arrays element by element (their bytes are
    addresses), structured ones field by field (their padding bytes are whatever memory held)."""
    shape = _text(repr(array.shape))
    if array.dtype.names is not None:
        fields = [_frame(b"", [_text(field), _array(array[field], f"{where}[{field!r}]")]) for field in array.dtype.names]
        return _frame(b"R", [shape, *fields])
    if array.dtype.hasobject:
        return _frame(b"O", [shape, *(_encode(item, f"{where} element") for item in array.ravel(order="C"))])
    contents = hashlib.sha256(np.ascontiguousarray(array).tobytes()).digest()
    return _frame(b"a", [_text(array.dtype.str), shape, contents])


def _sparse(matrix, where: str) -> bytes:
    """A scipy sparse matrix or array as its canonical CSR form (duplicates summed, indices sorted)."""
    canonical = matrix.tocsr(copy=True)
    canonical.sum_duplicates()
    canonical.sort_indices()
    return _frame(b"p", [_text(_qualified_name(type(matrix))), _text(repr(canonical.shape)),
                         *(_array(getattr(canonical, part), f"{where}.{part}") for part in ("data", "indices", "indptr"))])


def _estimator(estimator, where: str) -> bytes:
    """An estimator by class, parameters and the rest of its attributes (its fitted state)."""
    params = estimator.get_params(deep=False)
    state = {key: value for key, value in vars(estimator).items()
             if key not in params and key not in PER_PROCESS_ATTRIBUTES}
    return _frame(b"k", [_text(_qualified_name(type(estimator))), _attributes(params, where),
                         _attributes(state, where)])


def _attributes(named: dict, where: str) -> bytes:
    """Attributes of the object at `where`, by name."""
    return _frame(b"", [_frame(b"", [_text(name), _encode(named[name], f"{where}.{name}")]) for name in sorted(named)])


def _callable(value, where: str) -> bytes:
    """A function by its name, its own source and its defining module's (with its defaults and the
    values it closes over); a method by its function and object; a partial by its parts; anything else
    callable (a builtin, a numpy ufunc) only when its module names it."""
    if isinstance(value, types.FunctionType):
        sources = module_source(value), _function_source(value)
        if None in sources:
            raise _NotCanonical(f"{where} is the function {value.__qualname__}, whose source cannot be read "
                                "(define it in a module)")
        cells = [cell.cell_contents for cell in value.__closure__ or ()]
        return _frame(b"F", [_text(_qualified_name(value)), *(hashlib.sha256(_text(part)).digest() for part in sources),
                             _encode(value.__defaults__, f"{where} defaults"),
                             _encode(value.__kwdefaults__, f"{where} keyword defaults"),
                             _encode(cells, f"{where} closure")])
    if isinstance(value, types.MethodType):
        return _frame(b"M", [_encode(value.__func__, where), _encode(value.__self__, f"{where} object")])
    if isinstance(value, functools.partial):
        return _frame(b"P", [_encode(value.func, where), _encode(value.args, f"{where} arguments"),
                             _encode(value.keywords, f"{where} keywords")])
    if _named_by_its_module(value):
        return _frame(b"n", [_text(_qualified_name(value))])
    raise _NotCanonical(f"{where} is a {_qualified_name(type(value))}, a callable that is neither a function nor "
                        "named by its module")


def _reduced(value, where: str) -> bytes:
    """A scikit-learn helper object (a decision tree's `Tree`, a loss) by what pickling it keeps."""
    reduced = value.__reduce_ex__(4)
    if isinstance(reduced, str):
        return _frame(b"g", [_text(_qualified_name(type(value))), _text(reduced)])
    constructor, arguments, *rest = reduced
    return _frame(b"x", [_text(_qualified_name(type(value))), _encode(constructor, f"{where} constructor"),
                         _encode(arguments, f"{where} arguments"), _encode(rest[0] if rest else None, f"{where} state")])


def _function_source(function) -> str | None:
    try:
        return inspect.getsource(function)
    except (TypeError, OSError):
        return None


def _qualified_name(value) -> str:
    return ".".join(_module_and_name(value))


def _module_and_name(value) -> tuple[str, str]:
    """The module and qualified name of a class or function (a method descriptor's from its class)."""
    module = getattr(value, "__module__", None) or getattr(getattr(value, "__objclass__", None), "__module__", "?")
    return module, getattr(value, "__qualname__", getattr(value, "__name__", "?"))


def _named_by_its_module(value) -> bool:
    """Whether `value` is what `module.qualname` names in its (already imported) module."""
    module, name = _module_and_name(value)
    found = sys.modules.get(module)
    for part in name.split("."):
        found = getattr(found, part, None)
    return found is value
