"""Whether a served model answers the same request alike: the determinism probe.

A server may batch concurrent requests together, and its kernels may then round differently, so
that one prompt's label probabilities move with the requests beside it. At load, the content-free
prompts and the batch probe's texts (`batch_probe.PROBE_TEXTS`) but its longest (PROBED_TEXTS: a
text of one word to a few sentences) are asked three times, past the
response cache: one request at a time, then all at once (`concurrency` in flight), then all at
once in the reverse order; the probe's figure is the largest change of a label probability
between the first round and the others. A run header records whether it keeps within the goal's
margin tolerance (`runs.provenance`); certificates are refused for a model whose answers move
beyond it (`commands/certify.py`), attacks and estimates run and say so.

The figure is kept in the response cache (under its own key), so a rerun re-asks nothing.
"""

from __future__ import annotations

import numpy as np

from robustcount.errors import AnswerUnscored
from robustcount.models.batch_probe import PROBE_TEXTS
from robustcount.models.llm.prompting import content_free_inputs
from robustcount.models.llm.response_cache import request_key

PROBED_TEXTS = tuple(sorted(PROBE_TEXTS, key=len)[:-1])
"""The batch probe's texts the determinism probe asks, with the content-free ones (a served
model's requests cost: the longest, a paragraph, is left out)."""


def probe_determinism(lm) -> float:
    """The largest change of a label probability of `lm` (an `EndpointLM`) between the rounds of
    the probe (module docstring); prompts whose answers the server does not list are left out
    (none left: NaN, unknown, which no certificate accepts)."""
    key = request_key(lm.endpoint.url, lm.endpoint.model, {"determinism probe": lm.settings})
    stored = lm.cache.get(key) if lm.cache is not None else None
    if stored is not None:
        return float(stored["max_difference"])
    prompts, first = [], []
    texts = [(text, text) if lm.template.takes_pairs else text for text in PROBED_TEXTS]
    for item in content_free_inputs(lm.template) + texts:
        prompt = lm.render(item)
        try:
            first.append(lm.probabilities([prompt], fresh=True, concurrency=1)[0])
            prompts.append(prompt)
        except AnswerUnscored:
            continue
    if not prompts:
        return float("nan")
    together = lm.probabilities(prompts, fresh=True)
    reversed_order = lm.probabilities(prompts[::-1], fresh=True)[::-1]
    found = float(max(np.abs(together - first).max(), np.abs(reversed_order - first).max()))
    if lm.cache is not None:
        lm.cache.put(key, {"max_difference": found})
    return found
