"""scikit-learn estimators and pipelines with `predict_proba` as Classifiers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.base import check_probabilities
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
        self.labels = tuple(str(c) for c in (labels if labels is not None else classes))
        self.name = name

    def digest(self) -> str:
        """A hash of the fitted estimator's state (joblib's, stable across processes)."""
        import joblib

        return joblib.hash(self.estimator, hash_name="sha1")

    def predict_proba(self, batch: Sequence[Input]) -> np.ndarray:
        """The estimator's probabilities for `batch`."""
        if not len(batch):
            return np.zeros((0, len(self.labels)))
        probs = self.estimator.predict_proba(list(batch))
        return check_probabilities(probs, len(batch), len(self.labels), self.name)
