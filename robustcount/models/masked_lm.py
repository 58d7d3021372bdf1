"""Masked language models, which propose the candidates of BAE and BERT-Attack: the packaged
default, any local or cached hub checkpoint, and the query engine every call of theirs goes through.

- `minilm-mlm` (the default, offline): the packaged all-MiniLM-L6-v2 encoder, frozen, under
  BERT's masked-LM head (dense, GELU, LayerNorm, then the encoder's own word-piece embeddings,
  tied, plus a bias), the head trained on demo:train (experiments/train_masked_lm.py trains it
  and writes it into the package; docs/attacks/masked-lm.md says how
  well it recovers masked demo:test words). No PyPI package ships masked-LM weights (by the
  package list's names and summaries).
- a directory: any transformers checkpoint `AutoModelForMaskedLM` loads (with its fast tokenizer),
  loaded only whole (`transformers_adapter.load_whole`);
- a hub name (`bert-base-uncased`): from the local Hugging Face cache only; robustcount never
  downloads one at run time unless the environment says so with `HF_HUB_OFFLINE=0` (then,
  online, transformers fetches it).

`PieceFiller` answers `MaskQuery`s (`models.base.MaskedLanguageModel`); `masked_lm_engine(name)`
is a query engine over one, which a run's worker keeps and hands to the recipes that declare a
masked LM, so that its calls are counted apart from the attacked model's, as the sentence
encoder's are.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file
from torch import nn

from robustcount.errors import RobustcountError
from robustcount.models.base import MaskQuery
from robustcount.models.engine import QueryEngine
from robustcount.models.families import ASSETS
from robustcount.models.minilm import MAX_LENGTH, load_encoder
from robustcount.models.transformers_adapter import _cached, load_whole

DEFAULT_MASKED_LM = "minilm-mlm"
MAX_PIECES = 3
"""The word pieces of a word that an answer covers: BERT-Attack gives a word of more pieces no
candidates (3.3% of demo:test's words outside stop words; 24% have two or more)."""
HEAD_WEIGHTS = ASSETS / "minilm_mlm_head.safetensors"
ENGINE_CACHE = 64
"""Answers a masked-LM engine keeps (each is MAX_PIECES x 30,522 probabilities, 0.7 MB)."""


class MaskedLMHead(nn.Module):
    """BERT's masked-LM head over `embeddings` (tied, left as they are): hidden states to logits
    over the word-piece vocabulary."""

    def __init__(self, embeddings: nn.Embedding, eps: float = 1e-12):
        super().__init__()
        width = embeddings.embedding_dim
        self.dense = nn.Linear(width, width)
        self.layer_norm = nn.LayerNorm(width, eps=eps)
        self.bias = nn.Parameter(torch.zeros(embeddings.num_embeddings))
        self.embeddings = [embeddings]  # a list: tied weights that are not this head's parameters

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        transformed = self.layer_norm(nn.functional.gelu(self.dense(hidden)))
        return transformed @ self.embeddings[0].weight.T + self.bias


class PieceFiller:
    """A masked language model (`models.base.MaskedLanguageModel`) from `logits(encoded, rows,
    columns)` (the logits over the vocabulary at token `columns[i]` of text `rows[i]`, shape
    (len(rows), vocabulary)) and its fast tokenizer; `module` is what its digest covers."""

    def __init__(self, name: str, logits: Callable[..., torch.Tensor], tokenizer, module: nn.Module,
                 max_length: int = MAX_LENGTH):
        if not getattr(tokenizer, "is_fast", False) or tokenizer.mask_token is None:
            raise RobustcountError(f"masked LM {name!r}: it needs a fast tokenizer with a mask token")
        self.name, self.logits, self.tokenizer, self.module, self.max_length = name, logits, tokenizer, module, max_length
        self.pieces = tuple(tokenizer.convert_ids_to_tokens(list(range(len(tokenizer)))))
        self.max_pieces = MAX_PIECES

    def fill(self, batch: Sequence[MaskQuery]) -> np.ndarray:
        mask = self.tokenizer.mask_token
        texts = [q.text[: q.start] + mask + q.text[q.end:] if q.masked else q.text for q in batch]
        spans = [(q.start, q.start + len(mask)) if q.masked else (q.start, q.end) for q in batch]
        encoded = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                                 return_offsets_mapping=True, return_tensors="pt")
        offsets = encoded.pop("offset_mapping").tolist()
        rows, columns, places = [], [], []
        for i, (start, end) in enumerate(spans):
            at = [t for t, (a, b) in enumerate(offsets[i]) if b > a and a >= start and b <= end][: self.max_pieces]
            rows += [i] * len(at)
            columns += at
            places += [(i, j) for j in range(len(at))]
        answers = np.zeros((len(batch), self.max_pieces, len(self.pieces)))
        if rows:
            with torch.inference_mode():
                logits = self.logits(encoded, torch.tensor(rows), torch.tensor(columns))
            probs = torch.softmax(logits.double(), dim=-1).numpy()
            for (i, j), row in zip(places, probs):
                answers[i, j] = row
        return answers.reshape(len(batch), -1)

    def word_pieces(self, word: str) -> list[str]:
        """The word pieces of `word` (the tokenizer alone: no model call)."""
        return self.tokenizer.tokenize(word)

    def digest(self) -> str:
        """SHA-256 over the module's parameters and buffers, in name order."""
        sha = hashlib.sha256(self.name.encode())
        for key, tensor in sorted(self.module.state_dict().items()):
            sha.update(key.encode())
            sha.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        return sha.hexdigest()


class MiniLMMaskedLM(nn.Module):
    """The packaged encoder with a masked-LM head: the logits at the tokens asked for (the head
    runs on those alone)."""

    def __init__(self, encoder: nn.Module, head: MaskedLMHead):
        super().__init__()
        self.encoder, self.head = encoder, head

    def forward(self, encoded, rows: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"],
                              token_type_ids=encoded.get("token_type_ids")).last_hidden_state
        return self.head(hidden[rows, columns])


def minilm_masked_lm(head: dict[str, torch.Tensor] | None = None) -> PieceFiller:
    """`minilm-mlm`: the packaged encoder with the packaged head (or the tensors `head`)."""
    encoder, tokenizer = load_encoder()
    network = MiniLMMaskedLM(encoder, MaskedLMHead(encoder.get_input_embeddings()))
    network.head.load_state_dict(load_file(HEAD_WEIGHTS) if head is None else head)
    network.eval()
    return PieceFiller(DEFAULT_MASKED_LM, network, tokenizer, network)


def load_masked_lm(name: str = DEFAULT_MASKED_LM) -> PieceFiller:
    """The masked LM `name` names (see the module docstring), refused in one line when it cannot load."""
    if name == DEFAULT_MASKED_LM:
        return minilm_masked_lm()
    from transformers import AutoModelForMaskedLM

    local = Path(name).is_dir()
    download = os.environ.get("HF_HUB_OFFLINE") == "0"
    if not local and not download and not _cached(name):
        raise RobustcountError(f"masked LM {name!r}: no such directory, and no hub model of that name in the local "
                               "Hugging Face cache (robustcount downloads none at run time; fetch it first, or set "
                               f"HF_HUB_OFFLINE=0 to let transformers download it); the packaged one is {DEFAULT_MASKED_LM}")
    model, tokenizer = load_whole(name, AutoModelForMaskedLM, local_files_only=not download,
                                  model_options={"use_safetensors": None})
    model.eval()
    return PieceFiller(name, lambda encoded, rows, columns: model(**encoded).logits[rows, columns], tokenizer, model,
                       max_length=min(int(getattr(model.config, "max_position_embeddings", 512)), 512))


def masked_lm_engine(name: str = DEFAULT_MASKED_LM) -> QueryEngine:
    """A query engine over the masked LM `name`, loaded now (a run's worker keeps one per masked
    LM and hands it to the recipes that declare it, as it does the sentence encoder's:
    `runs.spec.Worker.masked_lm`)."""
    return QueryEngine(load_masked_lm(name), cache_size=ENGINE_CACHE)


def whole_word(piece: str) -> bool:
    """Whether a vocabulary piece is a word of its own: letters only (no sub-word `##` piece, no
    special token, number or punctuation), as BAE and BERT-Attack keep."""
    return piece.isalpha()
