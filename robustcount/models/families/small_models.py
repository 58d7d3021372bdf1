"""The families of the small built-in models: `bag-of-words` (`bow-rt`), `tfidf` (`tfidf-rt`) and
`vader` (`vader`). Their code is `models/small.py`, kept as it is: vader's identity is the digest
of that module's source, so an edit there would change the digest that its runs and certificates
record. None of them rebuilds from a model directory, so `harden` does not train them."""

from __future__ import annotations

from robustcount.models.families import Family


class BagOfWords(Family):
    name = "bag-of-words"
    description = "bag of words (mean of embeddings)"


class Tfidf(Family):
    name = "tfidf"
    description = "TF-IDF + logistic regression (sklearn)"


class Vader(Family):
    name = "vader"
    description = "lexicon rules (VADER)"
