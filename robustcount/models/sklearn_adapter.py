"""scikit-learn estimators and pipelines with `predict_proba` as Classifiers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.base import check_labels, check_probabilities
from robustcount.models.sklearn_digest import estimator_digest
from robustcount.text import Input


class SklearnClassifier:
    """A fitted estimator whose `predict_proba` takes the raw inputs (texts, or pairs if it was
    fitted on pairs). Labels are its `classes_` as strings, unless `labels` renames them."""

    def __init__(self, estimator, *, labels: Sequence[str] | None = None, name: str = "sklearn"):
        if not hasattr(estimator, "predict_proba"):
            raise RobustcountError(f"{name}: the estimator has no predict_proba")
        classes = getattr(estimator, "classes_", None)
        if classes is None:
            raise RobustcountError(f"{name}: the estimator is not fitted (no classes_)")
        if labels is not None and len(labels) != len(classes):
            raise RobustcountError(f"{name}: {len(labels)} labels given for {len(classes)} classes")
        self.estimator = estimator
        self.labels = check_labels(labels if labels is not None else classes, name)
        self.name = name

    def digest(self) -> str:
        """The fitted estimator's canonical digest, the same in every process (`estimator_digest`)."""
        return estimator_digest(self.estimator, self.name)

    def predict_proba(self, batch: Sequence[Input]) -> np.ndarray:
        """The estimator's probabilities for `batch`."""
        if not len(batch):
            return np.zeros((0, len(self.labels)))
        probs = self.estimator.predict_proba(list(batch))
        return check_probabilities(probs, len(batch), len(self.labels), self.name)
