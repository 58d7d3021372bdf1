"""The `sklearn` family: a scikit-learn estimator or pipeline that `harden` refitted, kept in skops
format (no pickle).

skops (`skops.io`) writes an estimator as a zip of JSON and arrays, and loads back only the types
it trusts by default (scikit-learn's, NumPy's, SciPy's): a file naming any other type is refused
in one line, never run. The skops bytes are the one tensor of the model directory's
`model.safetensors` (`ESTIMATOR`, as uint8), so that every model directory has one format; the
same bytes are written beside it as `model.skops` for the user's own stack
(`skops.io.load(path)`).
"""

from __future__ import annotations

from dataclasses import field

import numpy as np
import skops.io as sio
import torch

from robustcount.errors import RobustcountError
from robustcount.models.families import Family
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.options import option, options_dataclass

ESTIMATOR = "skops"
"""The key of the skops bytes in the model directory's tensors."""
SKOPS_FILE = "model.skops"


def estimator_tensors(estimator) -> dict[str, torch.Tensor]:
    """`estimator` as skops bytes in a uint8 tensor (the tensors of its model directory)."""
    return {ESTIMATOR: torch.frombuffer(bytearray(sio.dumps(estimator)), dtype=torch.uint8)}


def estimator_from(data: bytes, where: str):
    """The estimator in skops `data`, refused in one line when it names a type skops does not trust."""
    try:
        untrusted = sio.get_untrusted_types(data=data)
        if untrusted:
            raise RobustcountError(f"{where}: the estimator names types skops does not trust ({', '.join(untrusted)}); "
                                   "robustcount loads only scikit-learn, NumPy and SciPy types")
        return sio.loads(data)
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
