"""A model's predictions on a dataset, through the query engine (`evaluate` sums them up as
accuracy with its exact confidence interval; see runs/summaries.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from robustcount.data import Example, label_index
from robustcount.models.engine import QueryEngine


@dataclass
class Prediction:
    """The model's answer on one example."""

    example: Example
    gold: int | None
    predicted: int
    probabilities: np.ndarray

    @property
    def correct(self) -> bool | None:
        return None if self.gold is None else self.gold == self.predicted


def predictions(engine: QueryEngine, examples: Sequence[Example]) -> Iterator[Prediction]:
    """Predict every example, one engine batch at a time, yielding results in input order as they
    come (so that a failure later on loses nothing already yielded)."""
    labels = engine.labels
    chunk = engine.batch_size
    golds = [None if e.label is None else label_index(e.label, labels) for e in examples]
    for start in range(0, len(examples), chunk):
        part = examples[start : start + chunk]
        probs = engine.predict_proba([e.input for e in part])
        for offset, (example, row) in enumerate(zip(part, probs)):
            yield Prediction(example, golds[start + offset], int(row.argmax()), row)
