"""The families of the small built-in models: `bag-of-words` (`bow-rt`), `tfidf` (`tfidf-rt`) and
`vader` (`vader`). Their code is `models/small.py`, kept as it is: vader's identity is the digest
of that module's source, so an edit there would change the digest that its runs and certificates
record. None of them rebuilds from a model directory, so `harden` does not train them.
`BagOfWordsIds` gives bow-rt's tokenizer its word-level face (`torch_adapter.WordTokenizer`)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from robustcount.models.families import Family
from robustcount.models.small import WordEncoder, train_bow_rt
from robustcount.models.torch_adapter import Encoding, TorchClassifier, padded_ids
from robustcount.text import Input


class BagOfWords(Family):
    name = "bag-of-words"
    description = "bag of words (mean of embeddings)"


class Tfidf(Family):
    name = "tfidf"
    description = "TF-IDF + logistic regression (sklearn)"


class Vader(Family):
    name = "vader"
    description = "lexicon rules (VADER)"


class BagOfWordsIds:
    """bow-rt's tokenizer (`small.WordEncoder`, which stays as it is) as a word-level tokenizer: a
    word is its id, or no id when the vocabulary lacks it (the model cannot see it); padding is 0,
    at least one column."""

    def __init__(self, encoder: WordEncoder):
        self.encoder = encoder

    def __call__(self, batch: Sequence[Input]) -> Encoding:
        return self.encoder(batch)

    def word_ids(self, word: str) -> tuple[int, ...]:
        found = self.encoder.ids.get(word.lower())
        return () if found is None else (found,)

    def encode_ids(self, rows: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
        return {"input_ids": padded_ids(rows, 0)}


def bow_rt(device: str, batch_size: int) -> TorchClassifier:
    """The built-in bow-rt (`small.train_bow_rt`), reading word ids (`BagOfWordsIds`)."""
    model = train_bow_rt(device=device, batch_size=batch_size)
    model.tokenizer = BagOfWordsIds(model.tokenizer)
    return model
