"""A plain Python function as a Classifier (any black-box model: an API, a rule set, ...)."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Sequence

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.base import Window, as_numbers, check_labels, check_probabilities, softmax
from robustcount.text import Input

OUTPUTS = ("proba", "logits", "label")


class FunctionClassifier:
    """Wraps `fn(batch) -> outputs`, where outputs are, by `output`:
    `proba` an (n, k) array of probabilities, `logits` an (n, k) array of scores (softmax applied),
    or `label` a length-n sequence of label indices or names (one-hot probabilities).

    `window` says how much of an input the function reads when it (or the service behind it)
    truncates long ones, e.g. `words_window(400)` or `characters_window(2000)` (`models.base`):
    spaces then leave the words beyond it out, and every output says how many. None: it reads
    every word.
    """

    def __init__(
        self,
        fn: Callable[[list[Input]], object],
        labels: Sequence[str],
        *,
        output: str = "proba",
        name: str | None = None,
        identity: str | None = None,
        window: Window | None = None,
    ):
        if output not in OUTPUTS:
            raise RobustcountError(f"unknown output kind {output!r} (use {', '.join(OUTPUTS)})")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")
        self.labels = check_labels(labels, self.name)
        self.output = output
        self.identity = identity
        self.window = window

    digest_covers_weights = False
    """The digest below names the function's code only (the query engine adds its answers)."""

    def digest(self) -> str | None:
        """SHA-256 of the model's declared `identity` (a built-in model's versioned name, as
        `models/vader.py` declares), the labels and the output kind; without an identity, of the
        source of the module that defines the function and its name instead of the identity; None
        when that source cannot be read (a builtin, code typed at a prompt)."""
        if self.identity is not None:
            named = [self.identity]
        else:
            source = module_source(self.fn)
            if source is None:
                return None
            named = [source, getattr(self.fn, "__qualname__", "")]
        return hashlib.sha256("\0".join([*named, *self.labels, self.output]).encode()).hexdigest()

    def predict_proba(self, batch: Sequence[Input]) -> np.ndarray:
        """Class probabilities for `batch`, from the function's outputs."""
        n, k = len(batch), len(self.labels)
        if n == 0:
            return np.zeros((0, k))
        raw = self.fn(list(batch))
        if self.output == "label":
            return self._one_hot(raw, n)
        scores = as_numbers(raw, self.name, self.output if self.output == "logits" else "probabilities")
        if self.output == "logits":
            if scores.shape != (n, k):
                raise RobustcountError(f"{self.name} returned shape {scores.shape}, expected ({n}, {k})")
            scores = softmax(scores)
        return check_probabilities(scores, n, k, self.name)

    def _one_hot(self, raw, n: int) -> np.ndarray:
        values = list(raw)
        if len(values) != n:
            raise RobustcountError(f"{self.name} returned {len(values)} labels for {n} inputs")
        probs = np.zeros((n, len(self.labels)))
        for i, value in enumerate(values):
            if isinstance(value, str) and value in self.labels:
                probs[i, self.labels.index(value)] = 1.0
            elif isinstance(value, (int, np.integer)) and 0 <= value < len(self.labels):
                probs[i, int(value)] = 1.0
            else:
                raise RobustcountError(f"{self.name} returned unknown label {value!r}")
        return probs


def module_source(fn) -> str | None:
    """The source of the module that defines `fn`, or None when it cannot be read (a builtin, code
    typed at a prompt)."""
    try:
        return inspect.getsource(inspect.getmodule(fn))
    except (TypeError, OSError):
        return None
