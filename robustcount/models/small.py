"""Small, fast, real models on the demo data, for tests and quick runs.

Both trained models are fitted on `demo:train` when first loaded, deterministically (fixed seed,
fixed vocabulary order), in about a second on one CPU core; bow-rt's weights are then cached on
disk for every later process (`weights_cache`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch
from torch import nn

from robustcount.data import DEMO_LABELS, Example, examples_digest, load_demo
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.torch_adapter import Encoding, TorchClassifier
from robustcount.models.weights_cache import cached_tensors
from robustcount.text import Input, perturbed_part, tokenize


def train_tfidf_rt() -> SklearnClassifier:
    """TF-IDF of word uni- and bigrams with logistic regression (a black-box sklearn pipeline)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    train = load_demo("train")
    pipeline = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
        LogisticRegression(C=4.0, max_iter=2000),
    )
    pipeline.fit([e.input for e in train], [e.label for e in train])
    return SklearnClassifier(pipeline, name="tfidf-rt")


class BagOfWords(nn.Module):
    """Mean of word embeddings (padding masked out), then a linear layer; returns logits."""

    def __init__(self, vocab_size: int, dim: int, n_labels: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.out = nn.Linear(dim, n_labels)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        vectors = self.embedding(input_ids)
        mask = (input_ids != 0).unsqueeze(-1).to(vectors.dtype)
        pooled = (vectors * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return self.out(pooled)


class WordEncoder:
    """Lower-cased words (robustcount's word rule) mapped to ids; unknown words are dropped, so
    the model cannot see them. Id 0 is padding."""

    def __init__(self, vocabulary: Sequence[str]):
        self.ids = {word: i + 1 for i, word in enumerate(vocabulary)}

    def __call__(self, batch: Sequence[Input]) -> Encoding:
        rows, offsets = [], []
        for item in batch:
            tokens = tokenize(perturbed_part(item))
            kept = [(self.ids[w.lower()], span) for w, span in zip(tokens.words, tokens.spans())
                    if w.lower() in self.ids]
            rows.append([i for i, _ in kept])
            offsets.append([span for _, span in kept])
        width = max(1, max(len(row) for row in rows))
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
            offsets[r] += [None] * (width - len(row))
        return Encoding({"input_ids": ids}, offsets)


BOW_RECIPE = 1
"""The version of bow-rt's training recipe: raise it whenever the training changes, so that cached
weights of the old recipe are never used."""


def train_bow_rt(device: str = "cpu", batch_size: int = DEFAULT_BATCH_SIZE, seed: int = 0) -> TorchClassifier:
    """A white-box torch model: 32-dimensional bag of words, 4 epochs of Adam on demo:train (trained
    once per machine and seed, see `weights_cache`; each call wraps its own copy of the weights)."""
    train = load_demo("train")
    vocabulary = _vocabulary(train)
    recipe = {"model": "bow-rt", "recipe": BOW_RECIPE, "seed": seed, "data": examples_digest(train),
              "torch": torch.__version__}
    model = BagOfWords(len(vocabulary) + 1, 32, len(DEMO_LABELS))
    model.load_state_dict(cached_tensors(recipe, lambda: _train_bag_of_words(train, vocabulary, seed).state_dict()))
    return TorchClassifier(model, WordEncoder(vocabulary), DEMO_LABELS, name="bow-rt", embedding=model.embedding,
                           device=device, batch_size=batch_size)


def _vocabulary(train: Sequence[Example]) -> tuple[str, ...]:
    """The lower-cased words seen at least twice in the training texts, sorted."""
    counts = Counter(w.lower() for e in train for w in tokenize(e.input).words)
    return tuple(sorted(w for w, c in counts.items() if c >= 2))


def _train_bag_of_words(train: Sequence[Example], vocabulary: tuple[str, ...], seed: int) -> BagOfWords:
    encoded = WordEncoder(vocabulary)([e.input for e in train]).inputs["input_ids"]  # tokenized once
    lengths = (encoded != 0).sum(dim=1)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = BagOfWords(len(vocabulary) + 1, 32, len(DEMO_LABELS))
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    targets = torch.tensor([DEMO_LABELS.index(e.label) for e in train])
    for _ in range(4):
        order = torch.randperm(len(train), generator=generator).tolist()
        for start in range(0, len(order), 64):
            index = order[start : start + 64]
            width = max(1, int(lengths[index].max()))  # each batch padded to its longest text
            logits = model(encoded[index, :width])
            loss = nn.functional.cross_entropy(logits, targets[index])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model
