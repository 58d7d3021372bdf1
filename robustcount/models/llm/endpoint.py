"""A prompted language model served over HTTP as a black-box Classifier: `openai:BASE_URL#MODEL`,
any server of the OpenAI-compatible completions API (llama.cpp's, vLLM's, a hosted one).

The prompt, the verbaliser and the calibration are the local prompted model's (`prompting.py`);
the prompt is sent as its plain text (no chat template: a server's completions take text, so a
chat model's turn markers belong in the prompt itself). Each answer of the verbaliser is scored by
one completions request with `echo` and `logprobs`: the prompt followed by the answer, whose
tokens' log-probabilities sum to log p(answer | prompt); each label's score is the log-sum-exp of
its answers', shifted by the calibration, and the probabilities their softmax, as the local path
computes them. The answer's tokens are found by their text (token offsets are not reliable across
servers: llama.cpp's count its special tokens as nothing). A server whose answer holds no such
log-probabilities, or whose tokens do not split where the answer starts, cannot score: it is
refused in one line, never guessed at.

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
ECHO_TOLERANCE = 0.01
"""The most a token's echoed log-probability may differ from the one its generation had (`EndpointLM.check_echo`)."""
CANNOT_SCORE = ("cannot score an answer from its completions' echoed log-probabilities ({detail}); robustcount "
                "refuses rather than guess")


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
        """log p(answer | prompt) as the server scores it."""
        body = {"model": self.endpoint.model, "prompt": prompt + answer, "max_tokens": 1, "temperature": 0,
                "echo": True, "logprobs": 1}
        return self.request(body, lambda found: answer_log_likelihood(found, prompt, answer, self.name))

    def request(self, body: dict, read=lambda found: found):
        """What `read` makes of the server's answer to a completions request, the answer from the
        response cache when it holds it, else sent for and stored once `read` has taken it (an
        answer it refuses is never stored)."""
        key = request_key(self.endpoint.url, self.endpoint.model, body)
        found = self.cache.get(key) if self.cache is not None else None
        if found is not None:
            return read(found)
        found = self.transport.post("/completions", body)
        value = read(found)
        if self.cache is not None:
            self.cache.put(key, found)
        return value

    def check_echo(self) -> None:
        """Refuse a server whose echoed log-probabilities are not each token's given the tokens
        before it (llama-cpp-python's server, for a prompt that does not begin with its BOS token,
        gives each token the log-probability of the next position's): a content-free prompt's
        greedy next token, echoed after it, must get the log-probability its generation had
        (within ECHO_TOLERANCE), for the first two of the content-free prompts (each alone, then
        followed by each answer) whose next token can be echoed apart from them."""
        checked = 0
        bare = [self.render(item) for item in content_free_inputs(self.template)]
        for prompt in bare + [prompt + answer for prompt in bare for answer in self.verbalizer.flat()]:
            body = {"model": self.endpoint.model, "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": 1}
            choice = (self.request(body).get("choices") or [{}])[0]
            text, values = choice.get("text"), (choice.get("logprobs") or {}).get("token_logprobs")
            if not isinstance(text, str) or not text or not values or not isinstance(values[0], (int, float)):
                continue
            try:
                echoed = self.score(prompt, text)
            except RobustcountError:  # its tokens join the prompt's end: not a token to check with
                continue
            if abs(echoed - values[0]) > ECHO_TOLERANCE:
                raise RobustcountError(f"{self.name} " + CANNOT_SCORE.format(
                    detail=f"its echo gives {text!r} after the prompt a log-probability of {echoed:.3f} where its "
                           f"generation gave {values[0]:.3f}: not each token's given the ones before it; a prompt "
                           "that begins with the model's BOS token may fix it"))
            checked += 1
            if checked == 2:
                return
        if not checked:
            raise RobustcountError(f"{self.name} " + CANNOT_SCORE.format(
                detail="no content-free prompt's next token, echoed after it, could be checked against its generation"))

    def digest(self) -> str:
        """SHA-256 of the endpoint (URL without credentials, model) and the classifier's identity."""
        served = hashlib.sha256(json.dumps({"url": self.endpoint.url, "model": self.endpoint.model},
                                           sort_keys=True).encode()).hexdigest()
        return identity_digest(served, self.settings)


def answer_log_likelihood(answer: dict, prompt: str, said: str, name: str) -> float:
    """The sum of the log-probabilities of the echoed tokens that spell `said` after `prompt`,
    refused in one line when the server's answer cannot say it (see `answer_tokens`)."""
    choices = answer.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    logprobs, text = choice.get("logprobs"), choice.get("text")
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values) \
            or not isinstance(text, str) or not all(isinstance(token, str) for token in tokens):
        raise RobustcountError(f"{name} " + CANNOT_SCORE.format(detail="no echoed tokens with token_logprobs"))
    if not text.startswith(prompt + said):
        raise RobustcountError(f"{name} " + CANNOT_SCORE.format(detail="its echo is not the prompt it was sent"))
    found = answer_tokens(tokens, said, text[len(prompt) + len(said):])
    if found is None:
        raise RobustcountError(f"{name} " + CANNOT_SCORE.format(
            detail=f"no echoed tokens spell the answer {said!r} alone: its tokenizer joins it to the prompt"))
    picked = [values[i] for i in found]
    if not all(isinstance(value, (int, float)) and math.isfinite(value) for value in picked):
        raise RobustcountError(f"{name} " + CANNOT_SCORE.format(detail="an answer token has no log-probability"))
    return float(sum(picked))


def answer_tokens(tokens: list[str], said: str, generated: str) -> range | None:
    """The places of the echoed `tokens` that spell `said`, the answer, each token non-empty and
    none shared with the prompt, followed either by the tokens of the `generated` text or by
    nothing (servers differ in whether the echo lists what they generated: llama.cpp's does or
    does not, by prompt); None when no such places exist, or when both readings fit and differ."""
    ends = []
    if not generated:
        end = len(tokens)
        while end and not tokens[end - 1]:  # an end of text generated, spelled as nothing
            end -= 1
        ends.append(end)
    else:
        ends += [end for end in (_spelled_from(tokens, len(tokens), generated), len(tokens)) if end is not None]
    readings = {range(start, end) for end in ends if (start := _spelled_from(tokens, end, said)) is not None}
    return readings.pop() if len(readings) == 1 else None


def _spelled_from(tokens: list[str], end: int, text: str) -> int | None:
    """The place from which the non-empty tokens up to `end` spell exactly `text`, or None."""
    start, spelled = end, ""
    while len(spelled) < len(text) and start > 0 and tokens[start - 1]:
        start -= 1
        spelled = tokens[start] + spelled
    return start if spelled == text else None


def load_endpoint_lm(spec: str, *, prompt: str | None, verbalizer: str | None, calibration: str = "auto",
                     concurrency: int = 4, retries: Retries = Retries(), api_key_variable: str = API_KEY_VARIABLE,
                     cache: str | Path | None = None) -> EndpointLM:
    """The classifier `openai:BASE_URL#MODEL` names, asked `prompt` and answering as `verbalizer`
    says (both required), calibrated as `calibration` says (`auto` and `none`: uncalibrated;
    `content-free`: fitted now through the endpoint). The API key is the environment variable
    `api_key_variable`'s value (none when unset); answers are kept in `cache` (default
    `response_cache.default_cache_path()`). The server is checked now (`EndpointLM.check_echo`),
    and refused if it cannot score."""
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
    bare.check_echo()
    neutral = content_free_inputs(template)
    fitted = Calibration.fitted([str(item) for item in neutral], bare.predict_proba(neutral)) \
        if calibration == "content-free" else Calibration()
    return EndpointLM(endpoint, template, verbal, fitted, transport, responses, concurrency)
