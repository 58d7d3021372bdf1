"""The families of the small built-in models: `bag-of-words` (`bow-rt`), `tfidf` (`tfidf-rt`) and
`vader` (`vader`). bow-rt's and tfidf-rt's training is `models/small.py`, vader's model
`models/vader.py` (with its declared identity). None of them rebuilds from a model directory, so
`harden` does not train them.
bow-rt's and tfidf-rt's fitted weights ship in the package (`experiments/ship_small_models.py`
fitted them with `small.py`): fitted at load, they came out other on a CPU with other kernels
(AVX-512 against AVX2), with another digest. `BagOfWordsIds` gives bow-rt's tokenizer its
word-level face (`torch_adapter.WordTokenizer`)."""

from __future__ import annotations

import gzip
from collections.abc import Sequence

import torch
from safetensors.torch import load_file

from robustcount.data import DEMO_LABELS
from robustcount.models.families import ASSETS, Family
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.small import BagOfWords
from robustcount.models.small import WordEncoder
from robustcount.models.torch_adapter import Encoding, TorchClassifier, padded_ids
from robustcount.text import Input

BOW_WEIGHTS = ASSETS / "bow_rt.safetensors"
BOW_VOCABULARY = ASSETS / "bow_rt_vocabulary.txt.gz"
"""bow-rt's tensors, and its vocabulary (one word a line, in id order: id 0 is padding)."""
TFIDF_PIPELINE = ASSETS / "tfidf_rt.skops"
"""tfidf-rt's fitted pipeline, in skops format (no pickle)."""


class BagOfWordsFamily(Family):
    name = "bag-of-words"
    description = "bag of words (mean of embeddings)"


class Tfidf(Family):
    name = "tfidf"
    description = "TF-IDF + logistic regression (sklearn)"


class Vader(Family):
    name = "vader"
    description = "lexicon rules (VADER)"


class BagOfWordsIds:
    """bow-rt's tokenizer (`small.WordEncoder`) as a word-level tokenizer: a
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
    """The built-in bow-rt (`small.train_bow_rt`'s weights, shipped), reading word ids (`BagOfWordsIds`)."""
    with gzip.open(BOW_VOCABULARY, "rt", encoding="utf-8") as lines:
        vocabulary = lines.read().splitlines()
    tensors = load_file(BOW_WEIGHTS)
    module = BagOfWords(len(vocabulary) + 1, tensors["embedding.weight"].shape[1], len(DEMO_LABELS))
    module.load_state_dict(tensors)
    return TorchClassifier(module, BagOfWordsIds(WordEncoder(vocabulary)), DEMO_LABELS, name="bow-rt",
                           embedding=module.embedding, device=device, batch_size=batch_size)


def tfidf_rt() -> SklearnClassifier:
    """The built-in tfidf-rt (`small.train_tfidf_rt`'s pipeline, shipped)."""
    from robustcount.models.families.sklearn_skops import estimator_from

    return SklearnClassifier(estimator_from(TFIDF_PIPELINE.read_bytes(), "tfidf-rt"), name="tfidf-rt")
