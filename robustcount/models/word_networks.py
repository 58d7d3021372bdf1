"""Word-level networks over frozen GloVe 6B 50d embeddings, trained on demo:train: `cnn-rt`, a CNN
in the manner of Kim (2014) as TextFooler's WordCNN, and `lstm-rt`, a bidirectional LSTM as seed
001's BiLSTM and TextFooler's WordLSTM.

Both read lower-cased words (robustcount's word rule) through one shared vocabulary: GloVe's most
frequent words and demo:train's, with their GloVe vectors (float16, frozen). A word outside it is
the unknown token, which the networks see (as a position, unlike bow-rt). The package ships the
shared embeddings and each network's own weights as safetensors, with a card holding the
recipe and the demo:test accuracy; `experiments/train_word_models.py` writes them.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import torch
from safetensors.torch import load_file
from torch import nn

from robustcount.errors import RobustcountError
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.torch_adapter import Encoding, TorchClassifier
from robustcount.text import Input, perturbed_part, tokenize

ASSETS = Path(__file__).parent / "assets"
EMBEDDINGS = ASSETS / "glove_50d_rt.safetensors"
VOCABULARY = ASSETS / "glove_50d_rt_vocabulary.txt.gz"
PAD, UNKNOWN = 0, 1
"""Ids 0 and 1; the vocabulary's words follow from 2."""
WIDTHS = (3, 4, 5)
"""The CNN's filter widths (Kim 2014)."""


class GloveWords:
    """Inputs to padded word ids (at least `min_width` columns), with each word's character span."""

    def __init__(self, vocabulary: Sequence[str], min_width: int = 1):
        self.ids = {word: i + 2 for i, word in enumerate(vocabulary)}
        self.min_width = min_width

    def __call__(self, batch: Sequence[Input]) -> Encoding:
        rows, offsets = [], []
        for item in batch:
            tokens = tokenize(perturbed_part(item))
            rows.append([self.ids.get(w.lower(), UNKNOWN) for w in tokens.words])
            offsets.append(list(tokens.spans()))
        width = max(self.min_width, *(len(row) for row in rows))
        ids = torch.full((len(rows), width), PAD, dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
            offsets[r] += [None] * (width - len(row))
        return Encoding({"input_ids": ids}, offsets)


def frozen_embedding(vectors: torch.Tensor) -> nn.Embedding:
    """The pad and unknown rows (zeros) and the GloVe rows, frozen."""
    table = torch.cat([torch.zeros(2, vectors.shape[1]), vectors.float()])
    return nn.Embedding.from_pretrained(table, freeze=True, padding_idx=PAD)


class WordCNN(nn.Module):
    """Embeddings, one convolution per width in WIDTHS (`filters` each, ReLU, max over time),
    dropout, a linear layer; returns logits.

    A text of n words is read as its n words followed by zero (padding) vectors up to
    max(WIDTHS) columns when it is shorter; the max runs over the windows that lie within those
    max(n, max(WIDTHS)) columns only, so that the padding a batch adds for its longer texts never
    reaches a text's answer: each text gets exactly the answer it gets alone."""

    def __init__(self, vectors: torch.Tensor, n_labels: int, filters: int = 100, dropout: float = 0.5):
        super().__init__()
        self.embedding = frozen_embedding(vectors)
        self.convolutions = nn.ModuleList(nn.Conv1d(vectors.shape[1], filters, w) for w in WIDTHS)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(filters * len(WIDTHS), n_labels)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embedding(input_ids).transpose(1, 2)
        columns = (input_ids != PAD).sum(dim=1, keepdim=True).clamp(min=max(WIDTHS))
        pooled = []
        for width, convolution in zip(WIDTHS, self.convolutions):
            h = torch.relu(convolution(x))
            ends = torch.arange(width, h.shape[2] + width, device=input_ids.device)
            pooled.append(h.masked_fill((ends > columns).unsqueeze(1), float("-inf")).amax(dim=2))
        return self.out(self.dropout(torch.cat(pooled, dim=1)))


class WordLSTM(nn.Module):
    """Embeddings, a one-layer bidirectional LSTM (`hidden` units each way) over the words only,
    the max over time of its outputs, dropout, a linear layer; returns logits."""

    def __init__(self, vectors: torch.Tensor, n_labels: int, hidden: int = 150, dropout: float = 0.3):
        super().__init__()
        self.embedding = frozen_embedding(vectors)
        self.lstm = nn.LSTM(vectors.shape[1], hidden, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(2 * hidden, n_labels)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        lengths = (input_ids != PAD).sum(dim=1).clamp(min=1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(input_ids), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        outputs, _ = self.lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True, padding_value=float("-inf"),
                                                     total_length=input_ids.shape[1])
        return self.out(self.dropout(padded.amax(dim=1)))


NETWORKS = {"cnn-rt": WordCNN, "lstm-rt": WordLSTM}


def weights_path(name: str) -> Path:
    return ASSETS / f"{name.replace('-', '_')}.safetensors"


def card_path(name: str) -> Path:
    return ASSETS / f"{name.replace('-', '_')}_card.json"


@lru_cache(maxsize=1)
def shared_embeddings() -> tuple[tuple[str, ...], torch.Tensor]:
    """The shared vocabulary and its GloVe vectors."""
    if not EMBEDDINGS.exists() or not VOCABULARY.exists():
        raise RobustcountError(f"the word networks' embeddings are missing ({EMBEDDINGS}); "
                               "run experiments/train_word_models.py")
    with gzip.open(VOCABULARY, "rt", encoding="utf-8") as handle:
        vocabulary = tuple(handle.read().split("\n"))
    return vocabulary, load_file(EMBEDDINGS)["vectors"]


def build_network(name: str, vectors: torch.Tensor, n_labels: int, options: dict) -> nn.Module:
    """An untrained network `name` (cnn-rt or lstm-rt) over the vocabulary's `vectors`."""
    return NETWORKS[name](vectors, n_labels, **options)


def word_encoder(kind: str) -> GloveWords:
    """The inputs of network `kind` as word ids (the CNN needs at least its widest filter's columns)."""
    vocabulary, _ = shared_embeddings()
    return GloveWords(vocabulary, min_width=max(WIDTHS) if kind == "cnn-rt" else 1)


def word_network_classifier(kind: str, state: dict[str, torch.Tensor], options: dict, labels: Sequence[str],
                            name: str, **settings) -> TorchClassifier:
    """Network `kind` (cnn-rt or lstm-rt, built with `options`) holding the trained `state` (every
    tensor but the frozen embedding) as a white-box classifier (`settings`: device, dtype, batch_size)."""
    _, vectors = shared_embeddings()
    network = build_network(kind, vectors, len(labels), options)
    try:
        network.load_state_dict({**state, "embedding.weight": network.embedding.weight}, strict=True)
    except RuntimeError as err:
        raise RobustcountError(f"the {name} weights do not fit a {kind} network: {str(err).splitlines()[0]}") from None
    return TorchClassifier(network, word_encoder(kind), labels, name=name, embedding=network.embedding, **settings)


def load_word_network(name: str, device: str = "auto", dtype: str = "float32",
                      batch_size: int = DEFAULT_BATCH_SIZE) -> TorchClassifier:
    """`cnn-rt` or `lstm-rt` as a white-box classifier."""
    if not weights_path(name).exists():
        raise RobustcountError(f"the {name} weights are missing; run experiments/train_word_models.py")
    card = json.loads(card_path(name).read_text())
    return word_network_classifier(name, load_file(weights_path(name)), card["network"], card["labels"], name,
                                   device=device, dtype=dtype, batch_size=batch_size)
