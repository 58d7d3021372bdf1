"""Accuracy of a model on a dataset, through the query engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from robustcount.data import Example, label_index
from robustcount.models.engine import QueryEngine, QueryStats


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


@dataclass
class Accuracy:
    """Accuracy with its exact (Clopper-Pearson) 95% confidence interval."""

    examples: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    stats: QueryStats


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


def evaluate(
    engine: QueryEngine,
    examples: Sequence[Example],
    on_prediction: Callable[[Prediction], None] | None = None,
) -> Accuracy:
    """Accuracy over labelled `examples`; `on_prediction` sees each prediction as it is made."""
    correct = 0
    before = engine.total + QueryStats()
    for prediction in predictions(engine, examples):
        correct += bool(prediction.correct)
        if on_prediction is not None:
            on_prediction(prediction)
    n = len(examples)
    interval = binomtest(correct, n).proportion_ci(0.95, method="exact") if n else None
    spent = engine.total - before
    return Accuracy(
        examples=n,
        correct=correct,
        accuracy=correct / n if n else float("nan"),
        ci_low=interval.low if interval else float("nan"),
        ci_high=interval.high if interval else float("nan"),
        stats=spent,
    )
