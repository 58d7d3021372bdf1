"""A causal LM as a torch module whose output is each label's score: the log-likelihood of the
label's answers after each prompt (log-sum-exp over its answers), shifted by the calibration.

Inputs are prompts as token ids, right-padded, with their attention mask. Multi-token answers are
scored in full: log p(a_1 | prompt) + log p(a_2 | prompt, a_1) + ... Only the hidden states of the
positions that predict answer tokens go through the output layer. In inference, what the prompts
share with the anchor (`prefix.py`) is taken from its key/value cache (`prefix_reuse`); with
gradients enabled (white-box sensitivities) every prompt runs whole, and the token embeddings
come from one call of the input-embedding module, as `TorchClassifier.word_saliency` expects.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import torch
from torch import nn

from robustcount.models.llm.prefix import Anchor, choose_anchor, groups, starts


class VerbalizedLM(nn.Module):
    """`lm` (a transformers causal LM) scoring `answers` (token ids of each answer, in verbaliser
    order, answer j standing for label `owners[j]`), each label's score shifted by `shift`."""

    def __init__(self, lm: nn.Module, answers: Sequence[Sequence[int]], owners: Sequence[int], shift: np.ndarray,
                 prefix_reuse: bool = True):
        super().__init__()
        self.lm = lm
        self.answers = [list(answer) for answer in answers]
        self.owners = list(owners)
        self.register_buffer("shift", torch.as_tensor(np.asarray(shift), dtype=torch.float32))
        self.prefix_reuse = prefix_reuse
        self.anchor: Anchor | None = None
        self.tokens_run = 0
        """Token positions run through the model so far, padding and anchors included."""

    def get_input_embeddings(self) -> nn.Module:
        return self.lm.get_input_embeddings()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Each label's score for each prompt, shape (batch, labels)."""
        likelihoods = self.answer_log_likelihoods(input_ids, attention_mask)
        scores = []
        for label in range(len(self.shift)):
            columns = [j for j, owner in enumerate(self.owners) if owner == label]
            scores.append(torch.logsumexp(likelihoods[:, columns], dim=1))
        return torch.stack(scores, dim=1) + self.shift.to(likelihoods.dtype)

    def answer_log_likelihoods(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Shape (batch, answers): log p(answer | prompt) of each answer after each prompt."""
        lengths = attention_mask.sum(dim=1).tolist()
        embedded = self.get_input_embeddings()(input_ids)  # the one call a saliency hook captures
        rows = [input_ids[i, :n] for i, n in enumerate(lengths)]
        embeddings = [embedded[i, :n] for i, n in enumerate(lengths)]
        if all(len(answer) == 1 for answer in self.answers):  # one forward per prompt scores them all
            hidden = self._last_hidden(rows, embeddings, [1] * len(rows))
            return torch.log_softmax(self._logits(hidden), dim=-1)[:, [answer[0] for answer in self.answers]]
        return self._whole_answers(rows, embeddings)

    def _whole_answers(self, rows: list[torch.Tensor], embeddings: list[torch.Tensor]) -> torch.Tensor:
        """Each answer scored token by token: one sequence per prompt and answer (the prompt, then
        the answer but its last token), its last len(answer) positions predicting the answer."""
        weight = self.get_input_embeddings().weight
        sequences, embedded, keep, targets = [], [], [], []
        for row, row_embedded in zip(rows, embeddings):
            for answer in self.answers:
                extra = torch.as_tensor(answer[:-1], dtype=row.dtype, device=row.device)
                sequences.append(torch.cat([row, extra]))
                embedded.append(torch.cat([row_embedded, nn.functional.embedding(extra, weight)]))
                keep.append(len(answer))
                targets += answer
        log_probs = torch.log_softmax(self._logits(self._last_hidden(sequences, embedded, keep)), dim=-1)
        picked = log_probs.gather(1, torch.as_tensor(targets, device=log_probs.device)[:, None])[:, 0]
        return torch.stack([part.sum() for part in picked.split(keep)]).reshape(len(rows), len(self.answers))

    def _logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm.get_output_embeddings()(hidden).float()

    def _last_hidden(self, rows: list[torch.Tensor], embeddings: list[torch.Tensor], keep: list[int]) -> torch.Tensor:
        """The final hidden states at each row's last `keep[i]` positions, rows one after the other."""
        reuse = self.prefix_reuse and not torch.is_grad_enabled()
        if reuse:
            self._update_anchor(rows, keep)
        first = starts([row.cpu().numpy() for row in rows], keep, self.anchor if reuse else None)
        fed = [embedded[start:] for embedded, start in zip(embeddings, first)]
        parts: list[torch.Tensor | None] = [None] * len(rows)
        for group in groups([len(part) for part in fed]) if reuse else [list(range(len(rows)))]:
            hidden = self._run([fed[i] for i in group], [first[i] for i in group])
            for row, i in enumerate(group):
                parts[i] = hidden[row, len(fed[i]) - keep[i] : len(fed[i])]
        return torch.cat(parts)

    def _run(self, fed: list[torch.Tensor], first: list[int]) -> torch.Tensor:
        """The final hidden states of the embedded tokens `fed`, right-padded, each row after the
        anchor's first `first[i]` tokens."""
        past, width = max(first), max(len(part) for part in fed)
        device, dtype = fed[0].device, fed[0].dtype
        inputs = torch.zeros((len(fed), width, fed[0].shape[-1]), dtype=dtype, device=device)
        mask = torch.zeros((len(fed), past + width), dtype=torch.long, device=device)
        positions = torch.zeros((len(fed), width), dtype=torch.long, device=device)
        for i, (part, start) in enumerate(zip(fed, first)):
            inputs[i, : len(part)] = part
            mask[i, :start] = 1
            mask[i, past : past + len(part)] = 1
            positions[i] = start + torch.arange(width, device=device)
        self.tokens_run += len(fed) * width
        cached = {self._cache_argument: self._past(past, len(fed))} if past else {}
        out = self.lm.base_model(inputs_embeds=inputs, attention_mask=mask, position_ids=positions,
                                 use_cache=past > 0, **cached)
        return out.last_hidden_state

    def _update_anchor(self, rows: list[torch.Tensor], keep: list[int]) -> None:
        current = None if self.anchor is None else self.anchor.ids
        chosen = choose_anchor([row.cpu().numpy() for row in rows], keep, current)
        if chosen is None:
            return
        ids = torch.as_tensor(chosen, device=rows[0].device)[None]
        out = self.lm.base_model(input_ids=ids, use_cache=True)
        self.tokens_run += len(chosen)
        cache = getattr(out, "cache", None) or out.past_key_values
        self.anchor = Anchor(chosen, [(layer.keys, layer.values) for layer in cache.layers])

    @cached_property
    def _cache_argument(self) -> str:
        """The base model's keyword for a key/value cache (`cache` in newer transformers)."""
        return "cache" if "cache" in inspect.signature(self.lm.base_model.forward).parameters else "past_key_values"

    def _past(self, length: int, rows: int):
        """The anchor's cache of its first `length` tokens, for `rows` rows (None when empty)."""
        if length == 0:
            return None
        from transformers import DynamicCache

        return DynamicCache(ddp_cache_data=[(keys[:, :, :length].expand(rows, -1, -1, -1),
                                             values[:, :, :length].expand(rows, -1, -1, -1))
                                            for keys, values in self.anchor.layers])
