"""VADER (Hutto & Gilbert 2014) as a built-in black box, with an explicit, versioned identity.

A function model's digest is otherwise its module's source (`FunctionClassifier.digest`); vader's
is its declared identity instead, `VADER_IDENTITY` with vaderSentiment's version and the SHA-256 of
its two lexicons, so that an edit elsewhere never changes it and a new version of the rules or
lexicons always does. Raise the number in `VADER_IDENTITY` when `vader_classifier`'s answers
change. Its certificates written before (when the digest hashed `models/small.py`) still verify
through `models.identity.FORMER_DIGESTS`.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version

import numpy as np

from robustcount.data import DEMO_LABELS
from robustcount.errors import RobustcountError
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.text import Input, perturbed_part

VADER_IDENTITY = "vader/1"
"""The name and version of vader's scoring rule (P(positive) = (compound + 1) / 2)."""


def vader_classifier() -> FunctionClassifier:
    """VADER as a binary black box: P(positive) = (compound + 1) / 2."""
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    except ImportError as err:
        raise RobustcountError("the vader model needs: pip install 'robustcount[vader]'") from err
    analyzer = SentimentIntensityAnalyzer()

    def vader(batch: list[Input]) -> np.ndarray:
        compound = np.array([analyzer.polarity_scores(perturbed_part(x))["compound"] for x in batch])
        positive = (compound + 1.0) / 2.0
        return np.stack([1.0 - positive, positive], axis=1)

    return FunctionClassifier(vader, DEMO_LABELS, name="vader", identity=vader_identity(analyzer))


def vader_identity(analyzer) -> str:
    """`VADER_IDENTITY`, vaderSentiment's version and its lexicons' SHA-256 (vaderSentiment keeps
    each lexicon file's text under the attribute named for its path)."""
    lexicons = hashlib.sha256()
    for text in (analyzer.lexicon_full_filepath, analyzer.emoji_full_filepath):
        lexicons.update(hashlib.sha256(text.encode()).digest())
    return f"{VADER_IDENTITY} vaderSentiment=={version('vaderSentiment')} lexicons sha256:{lexicons.hexdigest()}"
