"""The `sklearn` family: a scikit-learn estimator or pipeline that `harden` refitted, kept in skops
format (no pickle).

skops (`skops.io`) writes an estimator as a zip of JSON and arrays, and loads back only the types
it trusts by default (scikit-learn's, NumPy's, SciPy's): a file naming any other type is refused
in one line, never run. The skops bytes are the one tensor of the model directory's
`model.safetensors` (`ESTIMATOR`, as uint8), so that every model directory has one format; the
same bytes are written beside it as `model.skops` for the user's own stack
(`skops.io.load(path)`). Those bytes are made the same for the same estimator in every process
(`canonical_skops`): skops names each object, and each array's file, by its `id()` in the
process that saved it, and stamps every file of the zip with the time.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import field

import numpy as np
import skops.io as sio
import torch

from robustcount.errors import RobustcountError
from robustcount.models.families import Family
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.sklearn_digest import PER_PROCESS_ATTRIBUTES
from robustcount.options import option, options_dataclass

ESTIMATOR = "skops"
"""The key of the skops bytes in the model directory's tensors."""
SKOPS_FILE = "model.skops"


SCHEMA = "schema.json"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
"""The time every file of a canonical skops zip is stamped with (the earliest a zip can hold)."""


def estimator_tensors(estimator) -> dict[str, torch.Tensor]:
    """`estimator` as canonical skops bytes in a uint8 tensor (the tensors of its model directory)."""
    return {ESTIMATOR: torch.frombuffer(bytearray(canonical_skops(sio.dumps(estimator))), dtype=torch.uint8)}


def canonical_skops(data: bytes) -> bytes:
    """skops `data` that loads as the same estimator, the same bytes in every process: objects
    numbered in the order the schema names them (instead of by their `id()`), each array's file
    named by its object's number, every file stamped ZIP_TIME, and an attribute that holds an
    `id()` (PER_PROCESS_ATTRIBUTES) set to 0 (scikit-learn then checks what it caches once more)."""
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        schema = json.loads(source.read(SCHEMA))
        numbers: dict[int, int] = {}
        _renumber(schema, numbers)
        files = {name: _file_name(name, numbers) for name in source.namelist() if name != SCHEMA}
        _rename_files(schema, files)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as target:
            for name in source.namelist():
                stored = SCHEMA if name == SCHEMA else files[name]
                content = json.dumps(schema, indent=2).encode("utf-8") if name == SCHEMA else source.read(name)
                target.writestr(zipfile.ZipInfo(stored, date_time=ZIP_TIME), content)
    return out.getvalue()


def _renumber(node, numbers: dict[int, int]) -> None:
    """Replace each `__id__` under `node` by its number in the order of first appearance."""
    if isinstance(node, dict):
        if "__id__" in node:
            node["__id__"] = numbers.setdefault(node["__id__"], len(numbers))
        for key, value in node.items():
            if key in PER_PROCESS_ATTRIBUTES and isinstance(value, dict) and value.get("__loader__") == "JsonNode":
                value["content"] = "0"
            _renumber(value, numbers)
    elif isinstance(node, list):
        for value in node:
            _renumber(value, numbers)


def _file_name(name: str, numbers: dict[int, int]) -> str:
    """An array file's name `ID.ext` with its object's number for ID."""
    stem, dot, extension = name.partition(".")
    return f"{numbers[int(stem)]}{dot}{extension}" if stem.isdigit() and int(stem) in numbers else name


def _rename_files(node, files: dict[str, str]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("file"), str) and node["file"] in files:
            node["file"] = files[node["file"]]
        for value in node.values():
            _rename_files(value, files)
    elif isinstance(node, list):
        for value in node:
            _rename_files(value, files)


def estimator_from(data: bytes, where: str, *, trusted: bool = False, trust_option: str | None = None):
    """The estimator in skops `data`, refused in one line when it names a type skops does not
    trust, unless `trusted` (then exactly the types it names are trusted, through skops' own
    `trusted` list); the refusal names `trust_option` when the caller offers one."""
    try:
        untrusted = sio.get_untrusted_types(data=data)
        if untrusted and not trusted:
            how = f" unless you trust them ({trust_option})" if trust_option else ""
            raise RobustcountError(f"{where}: the estimator names types skops does not trust ({', '.join(untrusted)}); "
                                   f"robustcount loads only scikit-learn, NumPy and SciPy types{how}")
        return sio.loads(data, trusted=untrusted)
    except RobustcountError:
        raise
    except Exception as err:  # a damaged zip or JSON: skops raises what its readers raise
        raise RobustcountError(f"{where}: not a readable skops estimator ({type(err).__name__}: {err})") from None


@options_dataclass
class RefittedOptions:
    """What a sklearn card records: the model the estimator was refitted from."""

    refitted_from: str = field(default="", metadata=option("the --model harden refitted"))


class SklearnSkops(Family):
    name = "sklearn"
    description = "a refitted scikit-learn estimator (skops)"
    card_options = RefittedOptions

    def rebuild(self, tensors, options, labels, name, **settings) -> SklearnClassifier:
        if ESTIMATOR not in tensors:
            raise RobustcountError(f"{name}: the weights hold no {ESTIMATOR!r} estimator")
        estimator = estimator_from(np.asarray(tensors[ESTIMATOR]).tobytes(), name)
        return SklearnClassifier(estimator, labels=labels, name=name)
