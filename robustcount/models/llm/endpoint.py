"""A prompted language model served over HTTP as a black-box Classifier: `openai:BASE_URL#MODEL`,
any server of the OpenAI-compatible completions API (llama.cpp's, vLLM's, a hosted one).

The prompt, the verbaliser and the calibration are the local prompted model's (`prompting.py`);
the prompt is sent as its plain text (no chat template: a server's completions take text, so a
chat model's turn markers belong in the prompt itself). Each answer of the verbaliser is scored by
one completions request with `echo` and `logprobs`: the prompt followed by the answer, whose
tokens' log-probabilities sum to log p(answer | prompt); each label's score is the log-sum-exp of
its answers', shifted by the calibration, and the probabilities their softmax, as the local path
computes them. A server whose answer holds no such log-probabilities, or whose tokens do not
split where the answer starts, cannot score: it is refused in one line, never guessed at.

Requests run `concurrency` at a time through `transport.py` (retries, backoff, `Retry-After`;
one that keeps failing makes its example undecided) and are kept in the persistent response
cache (`response_cache.py`), so a rerun sends none it holds. The digest is of the endpoint's URL
(without credentials), the model's name, the prompt, the verbaliser and the calibration.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.base import softmax
from robustcount.models.llm.prompting import (
    Calibration,
    PromptTemplate,
    Verbalizer,
    content_free_inputs,
    identity,
    identity_digest,
    label_log_scores,
    read_prompt,
)
from robustcount.models.llm.response_cache import ResponseCache, default_cache_path, request_key
from robustcount.models.llm.transport import Retries, Transport
from robustcount.text import Input

OPENAI = "openai:"
"""The prefix of a served model's spec (`openai:BASE_URL#MODEL`)."""
API_KEY_VARIABLE = "OPENAI_API_KEY"
CANNOT_SCORE = ("cannot score an answer: its completions do not return the prompt's token log-probabilities "
                "with echo and logprobs ({detail}); robustcount refuses rather than guess")


@dataclass(frozen=True)
class Endpoint:
    """A served model: the API's base URL (up to `/v1`, without credentials) and the model's name."""

    url: str
    model: str

    @classmethod
    def parse(cls, spec: str) -> Endpoint:
        """`openai:BASE_URL#MODEL`, e.g. `openai:http://127.0.0.1:8080/v1#smollm2`."""
        url, sep, model = spec.removeprefix(OPENAI).rpartition("#")
        parts = urlsplit(url)
        if not sep or not model or parts.scheme not in ("http", "https") or not parts.hostname:
            raise RobustcountError(f"{spec!r}: expected openai:BASE_URL#MODEL (e.g. openai:http://127.0.0.1:8080/v1#smollm2)")
        if parts.username or parts.password or parts.query:
            raise RobustcountError("openai:BASE_URL#MODEL: put no credentials or query in the URL (the API key is read "
                                   f"from ${API_KEY_VARIABLE} or the variable you name)")
        return cls(url.rstrip("/"), model)

    @property
    def spec(self) -> str:
        return f"{OPENAI}{self.url}#{self.model}"


class EndpointLM:
    """The classifier of `verbalizer`'s labels that `endpoint` answers when asked `template`,
    calibrated by `calibration` (see the module docstring)."""

    digest_covers_weights = True

    def __init__(self, endpoint: Endpoint, template: PromptTemplate, verbalizer: Verbalizer, calibration: Calibration,
                 transport: Transport, cache: ResponseCache | None, concurrency: int):
        self.endpoint, self.template, self.verbalizer = endpoint, template, verbalizer
        self.calibration = calibration
        self.transport, self.cache, self.concurrency = transport, cache, concurrency
        self.labels = verbalizer.labels
        self.name = endpoint.spec
        self.settings = identity(template, verbalizer, calibration)

    def predict_proba(self, batch: Sequence[Input]) -> np.ndarray:
        """Each input's label probabilities, shape (len(batch), len(labels))."""
        scores = label_log_scores(self.answer_log_likelihoods(batch), self.verbalizer.owners(), len(self.labels))
        return softmax(scores + self.calibration.shift(len(self.labels)))

    def answer_log_likelihoods(self, batch: Sequence[Input]) -> np.ndarray:
        """Shape (batch, answers): log p(answer | prompt), one request per input and answer."""
        prompts = [self.render(item) for item in batch]
        asked = [(prompt, answer) for prompt in prompts for answer in self.verbalizer.flat()]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            values = list(pool.map(lambda pair: self.score(*pair), asked))
        return np.asarray(values, dtype=np.float64).reshape(len(batch), len(self.verbalizer.flat()))

    def render(self, item: Input) -> str:
        """The prompt's text for `item`."""
        return "".join(self.template.parts(item))

    def score(self, prompt: str, answer: str) -> float:
        """log p(answer | prompt) as the server scores it (from the response cache when it holds it)."""
        body = {"model": self.endpoint.model, "prompt": prompt + answer, "max_tokens": 1, "temperature": 0,
                "echo": True, "logprobs": 1}
        key = request_key(self.endpoint.url, self.endpoint.model, body)
        found = self.cache.get(key) if self.cache is not None else None
        if found is None:
            found = self.transport.post("/completions", body)
            value = answer_log_likelihood(found, len(prompt), len(prompt) + len(answer), self.name)
            if self.cache is not None:
                self.cache.put(key, found)
            return value
        return answer_log_likelihood(found, len(prompt), len(prompt) + len(answer), self.name)

    def digest(self) -> str:
        """SHA-256 of the endpoint (URL without credentials, model) and the classifier's identity."""
        served = hashlib.sha256(json.dumps({"url": self.endpoint.url, "model": self.endpoint.model},
                                           sort_keys=True).encode()).hexdigest()
        return identity_digest(served, self.settings)


def answer_log_likelihood(answer: dict, start: int, end: int, name: str) -> float:
    """The sum of the log-probabilities of the echoed tokens that spell characters [start, end)
    (the answer after its prompt), refused in one line when the server's answer cannot say it."""
    choices = answer.get("choices")
    logprobs = choices[0].get("logprobs") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    offsets = logprobs.get("text_offset") if isinstance(logprobs, dict) else None
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(offsets, list) or not isinstance(values, list) or len(offsets) != len(values):
        raise RobustcountError(f"{name} " + CANNOT_SCORE.format(detail="no text_offset and token_logprobs"))
    inside = [i for i, offset in enumerate(offsets) if start <= offset < end]
    if not inside or offsets[inside[0]] != start:
        raise RobustcountError(f"{name} " + CANNOT_SCORE.format(
            detail="no echoed token starts where the answer does: its tokenizer joins the prompt's end to the answer"))
    picked = [values[i] for i in inside]
    if not all(isinstance(value, (int, float)) and math.isfinite(value) for value in picked):
        raise RobustcountError(f"{name} " + CANNOT_SCORE.format(detail="an answer token has no log-probability"))
    return float(sum(picked))


def load_endpoint_lm(spec: str, *, prompt: str | None, verbalizer: str | None, calibration: str = "auto",
                     concurrency: int = 4, retries: Retries = Retries(), api_key_variable: str = API_KEY_VARIABLE,
                     cache: str | Path | None = None) -> EndpointLM:
    """The classifier `openai:BASE_URL#MODEL` names, asked `prompt` and answering as `verbalizer`
    says (both required), calibrated as `calibration` says (`auto` and `none`: uncalibrated;
    `content-free`: fitted now through the endpoint). The API key is the environment variable
    `api_key_variable`'s value (none when unset); answers are kept in `cache` (default
    `response_cache.default_cache_path()`). The server is asked one answer now, and refused if it
    cannot score."""
    endpoint = Endpoint.parse(spec)
    if prompt is None or verbalizer is None:
        raise RobustcountError(f"{endpoint.spec}: a served language model needs --prompt and --verbalizer")
    if calibration not in ("auto", "none", "content-free"):
        raise RobustcountError(f"unknown calibration {calibration!r} (use none or content-free)")
    template = PromptTemplate(read_prompt(prompt), chat=False)
    verbal = Verbalizer.parse(verbalizer)
    transport = Transport(endpoint.url, os.environ.get(api_key_variable) or None, concurrency=concurrency,
                          retries=retries)
    responses = ResponseCache(default_cache_path() if cache is None else cache)
    bare = EndpointLM(endpoint, template, verbal, Calibration(), transport, responses, concurrency)
    neutral = content_free_inputs(template)
    probabilities = bare.predict_proba(neutral if calibration == "content-free" else neutral[:1])
    fitted = Calibration.fitted([str(item) for item in neutral], probabilities) \
        if calibration == "content-free" else Calibration()
    return EndpointLM(endpoint, template, verbal, fitted, transport, responses, concurrency)
