"""Any torch module with its tokenizer, as a Classifier with input-embedding gradients."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import torch
from torch import nn

from robustcount.errors import RobustcountError
from robustcount.models.base import Window, check_labels, check_probabilities
from robustcount.models.device import resolve_device, resolve_dtype
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.text import Input

Span = tuple[int, int]


@dataclass
class Encoding:
    """A tokenized batch: keyword `inputs` for the module, and for each input the character span of
    every token within the perturbed part (the text, or a pair's hypothesis), or None for tokens
    outside it (special tokens, padding, the premise)."""

    inputs: dict[str, torch.Tensor]
    offsets: list[list[Span | None]]


Tokenizer = Callable[[Sequence[Input]], Encoding]
"""A tokenizer: a batch of inputs to their `Encoding`."""


@runtime_checkable
class WordTokenizer(Protocol):
    """A word-level tokenizer: the token ids of an input are `word_ids(word)` of each word of its
    perturbed part (robustcount's word rule, `text.tokenize`) one after the other, whatever the
    word's neighbours and the separators; `encode_ids` makes the module's inputs from such rows of
    ids (a list of them, or one 2-D int64 array of rows of one length), exactly as the tokenizer's
    own call on the inputs would. A model with one can then be
    given a point's ids instead of its text (`TorchClassifier.predict_proba_ids`)."""

    def __call__(self, batch: Sequence[Input]) -> Encoding: ...

    def word_ids(self, word: str) -> tuple[int, ...]: ...

    def encode_ids(self, rows: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]: ...


def padded_ids(rows: Sequence[Sequence[int]] | np.ndarray, pad: int, min_width: int = 1) -> torch.Tensor:
    """`rows` of token ids (or a 2-D integer array of them) as one int64 tensor, each row padded
    with `pad` to the longest row (and to at least `min_width` columns)."""
    if isinstance(rows, np.ndarray):  # rows of one length
        if rows.shape[1] >= min_width:
            return torch.from_numpy(np.ascontiguousarray(rows, dtype=np.int64))
        ids = np.full((len(rows), min_width), pad, dtype=np.int64)
        ids[:, : rows.shape[1]] = rows
        return torch.from_numpy(ids)
    lengths = set(map(len, rows))
    width = max([min_width, *lengths])
    if lengths == {width}:  # no padding: the rows as they are
        return torch.from_numpy(np.array(rows, dtype=np.int64).reshape(len(rows), width))
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
    return torch.from_numpy(ids)


def hf_tokenizer(tokenizer, max_length: int | None = None) -> Tokenizer:
    """A Hugging Face fast tokenizer as a `Tokenizer` (pairs encode as premise, hypothesis) that
    truncates at `max_length` tokens (default: the tokenizer's `model_max_length`, at most 4096),
    and says where that cuts an input (`window`)."""
    if not getattr(tokenizer, "is_fast", False):
        raise RobustcountError("robustcount needs a fast (Rust) tokenizer for its character offsets")
    return HFTokenizer(tokenizer, max_length or min(getattr(tokenizer, "model_max_length", 512), 4096))


class HFTokenizer:
    """A fast tokenizer truncating at `limit` tokens (see `hf_tokenizer`)."""

    def __init__(self, tokenizer, limit: int):
        self.tokenizer, self.limit = tokenizer, limit
        self.window = Window(f"{limit}-token", self.window_end)

    def __call__(self, batch: Sequence[Input]) -> Encoding:
        pairs = [isinstance(item, tuple) for item in batch]
        if any(pairs) and not all(pairs):
            raise RobustcountError("a batch mixes single texts and (premise, hypothesis) pairs")
        enc, part = self._encode(list(batch), padding=True, truncation=True, max_length=self.limit,
                                 return_tensors="pt")
        mapping = enc.pop("offset_mapping").tolist()
        offsets = []
        for i, row in enumerate(mapping):
            seq_ids = enc.sequence_ids(i)
            offsets.append([
                (s, e) if seq_id == part and e > s else None
                for (s, e), seq_id in zip(row, seq_ids)
            ])
        return Encoding(dict(enc), offsets)

    def _encode(self, batch: list, **options):
        """The tokenizer's encoding of `batch` with offsets, and which sequence of it is the
        perturbed part (1, a pair's hypothesis; else 0)."""
        if batch and isinstance(batch[0], tuple):
            return self.tokenizer([p for p, _ in batch], [h for _, h in batch], return_offsets_mapping=True,
                                  **options), 1
        return self.tokenizer(batch, return_offsets_mapping=True, **options), 0

    def window_end(self, item: Input) -> int | None:
        """Where the tokens kept of `item`'s perturbed part end (a character offset in it), or None
        when truncation keeps all of them (a pair loses its longer part's tokens first: a long
        premise may cut the hypothesis)."""
        ends = []
        for truncation in (True, False):
            enc, part = self._encode([item], truncation=truncation, max_length=self.limit if truncation else None,
                                     verbose=False)
            ends.append([e for (s, e), seq_id in zip(enc["offset_mapping"][0], enc.sequence_ids(0))
                         if seq_id == part])
        kept, whole = ends
        return None if len(kept) == len(whole) else max(kept, default=0)


class TorchClassifier:
    """A torch `module` whose forward(**encoding.inputs) returns logits (or an object with
    `.logits`), with the `tokenizer` that turns its inputs into token ids (a `Tokenizer`).

    `embedding` is the module whose output holds the token embeddings (default:
    `module.get_input_embeddings()`); it is needed only for gradients. Predictions run in inference
    mode on `device`, `batch_size` inputs at a time, at precision `dtype`.
    """

    def __init__(
        self,
        module: nn.Module,
        tokenizer: Tokenizer,
        labels: Sequence[str],
        *,
        name: str = "torch-module",
        embedding: nn.Module | None = None,
        device: str = "auto",
        dtype: str = "float32",
        batch_size: int = DEFAULT_BATCH_SIZE,
    ):
        if batch_size < 1:
            raise RobustcountError(f"batch size must be at least 1, got {batch_size}")
        self.labels = check_labels(labels, name)
        self.name = name
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.batch_size = batch_size
        self.module = module.to(self.device, self.dtype).eval()
        self.tokenizer = tokenizer
        if embedding is None and hasattr(module, "get_input_embeddings"):
            embedding = module.get_input_embeddings()
        self.embedding = embedding

    @property
    def has_gradients(self) -> bool:
        return self.embedding is not None

    @property
    def window(self) -> Window | None:
        """How much of an input the module reads: its tokenizer's `window` (an `hf_tokenizer`'s
        token limit), or None (all of it)."""
        return getattr(self.tokenizer, "window", None)

    @property
    def reads_word_ids(self) -> bool:
        """Whether the tokenizer is word-level (`WordTokenizer`), so that `word_ids` and
        `predict_proba_ids` may stand for the text."""
        return isinstance(self.tokenizer, WordTokenizer)

    def word_ids(self, word: str) -> tuple[int, ...]:
        """The token ids of one word (a word-level tokenizer's, see `reads_word_ids`)."""
        return self.tokenizer.word_ids(word)

    def _logits(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        inputs = {key: value.to(self.device) for key, value in inputs.items()}
        out = self.module(**inputs)
        return (out if isinstance(out, torch.Tensor) else out.logits).float()

    def predict_proba(self, batch: Sequence[Input]) -> np.ndarray:
        """Class probabilities for `batch`, computed `batch_size` inputs at a time. When the device
        runs out of memory, the batch size is halved (for good) and the chunk retried, so batch
        sizes settle to what the device holds."""
        return self._probabilities(batch, lambda chunk: self.tokenizer(chunk).inputs)

    def predict_proba_ids(self, rows: Sequence[Sequence[int]]) -> np.ndarray:
        """`predict_proba` of the inputs whose token ids are `rows` (each the `word_ids` of an
        input's words one after the other; a list of rows, or one 2-D integer array): the same
        probabilities, without the text."""
        return self._probabilities(rows, self.tokenizer.encode_ids)

    def _probabilities(self, batch: Sequence, encode: Callable[[Sequence], dict[str, torch.Tensor]]) -> np.ndarray:
        chunks = []
        start = 0
        with torch.inference_mode():
            while start < len(batch):
                chunk = batch[start : start + self.batch_size]
                try:
                    chunks.append(torch.softmax(self._logits(encode(chunk)), dim=-1).cpu().numpy())
                except torch.OutOfMemoryError:
                    if self.batch_size == 1:
                        raise RobustcountError(f"{self.name}: out of device memory even for one input") from None
                    self.batch_size //= 2
                    if self.device.type == "cuda":
                        torch.cuda.empty_cache()
                    continue
                start += len(chunk)
        if not chunks:
            return np.zeros((0, len(self.labels)))
        probs = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
        return check_probabilities(probs, len(batch), len(self.labels), self.name)

    def word_saliency(self, item: Input, spans: Sequence[Span], label: int, times_input: bool = True) -> np.ndarray:
        """Per span, the summed |d p_label / d e_t . e_t| (gradient times input) over the sub-tokens t
        overlapping it; with `times_input=False`, the gradient's L1 norm ||d p_label / d e_t||_1 (which
        ranks every word of a mean-pooled model alike: kept for comparison)."""
        if self.embedding is None:
            raise RobustcountError(f"{self.name}: no embedding module given, gradients unavailable")
        captured: list[torch.Tensor] = []

        def keep(_module, _inputs, output):
            if not output.requires_grad:  # a frozen embedding: differentiate from its output on
                output = output.detach().requires_grad_()
            output.retain_grad()
            captured.append(output)
            return output

        encoding = self.tokenizer([item])
        handle = self.embedding.register_forward_hook(keep)
        try:
            with torch.enable_grad():
                self.module.zero_grad(set_to_none=True)
                prob = torch.softmax(self._logits(encoding.inputs), dim=-1)[0, label]
                prob.backward()
        finally:
            handle.remove()
        if len(captured) != 1 or captured[0].grad is None:
            raise RobustcountError(f"{self.name}: the embedding module did not take part in the forward")
        gradient = captured[0].grad[0]
        token = (gradient * captured[0][0]).sum(dim=-1).abs() if times_input else gradient.abs().sum(dim=-1)
        token_norms = token.detach().float().cpu().numpy()
        scores = np.zeros(len(spans))
        kept = [t for t, offset in enumerate(encoding.offsets[0][: len(token_norms)]) if offset is not None]
        if kept and len(spans):
            offsets = np.array([encoding.offsets[0][t] for t in kept]).reshape(-1, 2)
            bounds = np.asarray(spans).reshape(-1, 2)
            overlap = (offsets[:, :1] < bounds[:, 1]) & (offsets[:, 1:] > bounds[:, 0])  # token x span
            tokens, hit = np.nonzero(overlap)  # token by token, in order: each span sums its tokens in order
            np.add.at(scores, hit, token_norms[np.asarray(kept)[tokens]])
        return scores

    def digest(self) -> str:
        """SHA-256 over the module's parameters and buffers, in name order."""
        sha = hashlib.sha256()
        for key, tensor in sorted(self.module.state_dict().items()):
            sha.update(key.encode())
            sha.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        return sha.hexdigest()
