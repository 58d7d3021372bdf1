"""`evaluate`: a model's accuracy on a labelled dataset, with its exact 95% confidence interval.

Accuracy reports the label the model outputs (its argmax), as usual for accuracy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from robustcount.data import Example, label_index
from robustcount.models.engine import QueryEngine
from robustcount.runs.command import Command, Planned, input_window_field
from robustcount.runs.figures import histogram_figure
from robustcount.runs.report import Section

BATCHES_PER_CHUNK = 8
"""Examples per unit of work, in model batches, for the commands whose examples are cheap: the
engine's length-sorted batching then has inputs of similar lengths to group (one batch of random
texts pads to the longest: about twice the work)."""


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
    golds = [None if e.label is None else label_index(e.label, labels) for e in examples]
    for start in range(0, len(examples), engine.batch_size):
        part = examples[start : start + engine.batch_size]
        for offset, (example, row) in enumerate(zip(part, engine.predict_proba([e.input for e in part]))):
            yield Prediction(example, golds[start + offset], int(row.argmax()), row)


class Evaluate(Command, name="evaluate", space=False):
    """Accuracy of a model on a labelled dataset (default: the default model on demo:test)."""

    def examples_per_chunk(self, spec) -> int:
        return BATCHES_PER_CHUNK * spec.models[0].batch_size

    def plan(self, spec, space, example):
        return Planned(1, "one prediction of the input")

    def task(self, worker, spec, examples):
        labels = worker.engine.labels
        for p in predictions(worker.engine, examples):
            yield {"id": p.example.id, "input": p.example.input, "gold": None if p.gold is None else labels[p.gold],
                   "predicted": labels[p.predicted], "correct": p.correct,
                   "probabilities": [float(x) for x in p.probabilities],
                   **input_window_field(worker.engine, p.example.input)}

    def summarise(self, run) -> dict:
        labelled = [r for r in run.records if r["correct"] is not None]
        correct = sum(r["correct"] for r in labelled)
        n = len(labelled)
        interval = binomtest(correct, n).proportion_ci(0.95, method="exact") if n else None
        return {"labelled": n, "correct": correct, "accuracy": correct / n if n else float("nan"),
                "ci95": [interval.low, interval.high] if interval else None}

    def table(self, summary):
        ci = summary["ci95"]
        return (["model", "data", "examples", "accuracy", "95% CI"],
                [[summary["models"][0], summary["data"], summary["examples"], summary["accuracy"],
                  f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"]])

    def sections(self, run, summary):
        confidence = {"correct": [], "wrong": []}
        for r in run.records:
            if r["correct"] is not None:
                confidence["correct" if r["correct"] else "wrong"].append(max(r["probabilities"]))
        figure = histogram_figure(confidence, "probability of the predicted label", bins=20, range=(0, 1),
                                  stacked=True)
        predicted = Counter((r["gold"], r["predicted"]) for r in run.records)
        labels = run.header["models"][0]["labels"]
        confusion = [[gold, *(predicted[(gold, p)] for p in labels)] for gold in labels]
        return [Section("Predictions", note="Rows: gold label; columns: predicted label.",
                        tables=[("Confusion matrix", ["gold \\ predicted", *labels], confusion)],
                        figures=[("confidence", figure)])]
