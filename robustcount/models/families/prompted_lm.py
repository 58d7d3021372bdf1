"""The `prompted-lm` family: a causal language model asked a question about the text, the
likelihoods of its answers as class scores (`models/llm/`; the built-in `smollm2`, and any
`llm:PATH`). It neither trains nor rebuilds from a model directory, so `harden` does not train it."""

from __future__ import annotations

from robustcount.models.families import Family


class PromptedLM(Family):
    name = "prompted-lm"
    description = "a prompted causal language model, its answers' likelihoods as class scores"
