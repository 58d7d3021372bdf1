"""A prompted language model served over HTTP as a black-box Classifier: `openai:BASE_URL#MODEL`,
any server of the OpenAI-compatible API (llama.cpp's, vLLM's, a hosted one).

The prompt, the verbaliser and the calibration are the local prompted model's (`prompting.py`).
The prompt goes through the chat completions API as the user's message (`api="chat"`, the
default: the server wraps it in the model's chat template, as the local path does with the
tokenizer's) or through the completions API as its plain text (`api="completions"`: a chat
model's turn markers belong in the prompt itself). How the answers are scored is chosen by
probing the server at load (`choose_scoring`): from the completions' echoed log-probabilities
when the server gives them right (`echo.py`: every token of an answer), else from the
`top_logprobs` of the first answer token (`top_logprobs.py`: as many first tokens as the user
asks, else as many as the server lists, `choose_top_k`); a server offering neither is
refused in one line, never guessed at. Each label's score is the log-sum-exp of its answers',
shifted by the calibration, and the probabilities their softmax, as the local path computes them.

Requests run `concurrency` at a time through `transport.py` (retries, backoff, `Retry-After`;
one that keeps failing makes its example undecided), are kept in the persistent response cache
(`response_cache.py`), so a rerun sends none it holds, and are counted in the `ledger`. At load the
server is probed for answers that move between identical requests (`determinism.py`). The probes
at load (the scoring mode's, the calibration's fit, the determinism probe) are the model's own
requests, sent before any query engine holds it and past its caches: they are counted in the same
ledger, which a run reports whole (`runs.served_ledgers.unreported_ledger`), never in the engine's calls. The digest
is of the endpoint's URL (without credentials), the model's name, the API and scoring mode (with
the number of first tokens asked for), the prompt, the verbaliser and the calibration.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from robustcount.errors import EndpointFailed, LimitReached, RobustcountError
from robustcount.models.base import softmax
from robustcount.models.llm.determinism import probe_determinism
from robustcount.models.llm.echo import CannotScore, answer_log_likelihood, check_echo, echo_body
from robustcount.models.llm.ledger import Ledger
from robustcount.models.llm.prompting import (
    Calibration,
    PromptSpec,
    PromptTemplate,
    Verbalizer,
    content_free_inputs,
    identity,
    identity_digest,
    label_log_scores,
    read_prompt,
)
from robustcount.models.llm.response_cache import ResponseCache, default_cache_path, request_key
from robustcount.models.llm.top_logprobs import (
    PROBED_K,
    TOP_K,
    check_answers,
    first_token_log_likelihoods,
    top_body,
    top_entries,
)
from robustcount.models.llm.transport import Retries, Transport
from robustcount.text import Input

OPENAI = "openai:"
"""The prefix of a served model's spec (`openai:BASE_URL#MODEL`)."""
API_KEY_VARIABLE = "OPENAI_API_KEY"
APIS = ("chat", "completions")
"""How the prompt is sent: as a chat's user message, or as the plain text of a completion."""
ECHO, TOP_LOGPROBS = "echo", "top_logprobs"
PATHS = {"chat": "/chat/completions", "completions": "/completions"}


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


@dataclass(frozen=True)
class Connection:
    """How an `EndpointLM`'s requests go out (`transport`, at most `concurrency` at once), where
    their answers are kept (`cache`, None: nowhere) and what counts them (`ledger`)."""

    transport: Transport
    cache: ResponseCache | None
    ledger: Ledger
    concurrency: int


class EndpointLM:
    """The classifier of `verbalizer`'s labels that `endpoint` answers when asked `template`
    through `api`, scored as `scoring` says (`ECHO`, or `TOP_LOGPROBS` from the `top_k` most
    likely first tokens), calibrated by `calibration` (see the module docstring)."""

    digest_covers_weights = True

    def __init__(self, endpoint: Endpoint, template: PromptTemplate, verbalizer: Verbalizer, calibration: Calibration,
                 connection: Connection, *, api: str, scoring: str, top_k: int = TOP_K):
        self.endpoint, self.template, self.verbalizer = endpoint, template, verbalizer
        self.calibration, self.api, self.scoring, self.top_k = calibration, api, scoring, top_k
        self.transport, self.cache = connection.transport, connection.cache
        self.concurrency, self.ledger = connection.concurrency, connection.ledger
        self.labels = verbalizer.labels
        self.name = endpoint.spec
        self.settings = {**identity(template, verbalizer, calibration), "served": self.served}
        self.determinism: float | None = None
        """The determinism probe's figure (`determinism.py`), once `load_endpoint_lm` has run it."""

    @property
    def served(self) -> dict:
        """How the server is asked and its answers scored (part of the identity): the API, the
        scoring mode and, for `TOP_LOGPROBS`, the number of first tokens asked for."""
        return {"api": self.api, "scoring": self.scoring,
                **({"top_logprobs": self.top_k} if self.scoring == TOP_LOGPROBS else {})}

    def predict_proba(self, batch: Sequence[Input]) -> np.ndarray:
        """Each input's label probabilities, shape (len(batch), len(labels))."""
        return self.probabilities([self.render(item) for item in batch])

    def probabilities(self, prompts: Sequence[str], fresh: bool = False, concurrency: int | None = None) -> np.ndarray:
        """Each prompt's label probabilities (`fresh`: asked of the server, not the response cache)."""
        scores = label_log_scores(self.answer_log_likelihoods(prompts, fresh, concurrency), self.verbalizer.owners(),
                                  len(self.labels))
        return softmax(scores + self.calibration.shift(len(self.labels)))

    def answer_log_likelihoods(self, prompts: Sequence[str], fresh: bool = False,
                               concurrency: int | None = None) -> np.ndarray:
        """Shape (prompts, answers): each answer's log-likelihood after each prompt, as the scoring
        mode gives it (echo: one request per prompt and answer; top_logprobs: one per prompt),
        `concurrency` (default the model's) requests at a time (`each_answered`)."""
        answers = self.verbalizer.flat()
        with ThreadPoolExecutor(max_workers=concurrency or self.concurrency) as pool:
            if self.scoring == ECHO:
                asked = [(p, a) for p in prompts for a in answers]
                values = each_answered(pool, lambda pair: self.echoed(*pair, fresh=fresh), asked)
            else:
                values = [v for row in each_answered(pool, lambda prompt: self.first_tokens(prompt, fresh), prompts)
                          for v in row]
        return np.asarray(values, dtype=np.float64).reshape(len(prompts), len(answers))

    def echoed(self, prompt: str, answer: str, fresh: bool = False) -> float:
        """log p(answer | prompt) from the completions' echo."""
        return self.request("/completions", echo_body(self.endpoint.model, prompt, answer),
                            lambda found: answer_log_likelihood(found, prompt, answer), fresh)

    def first_tokens(self, prompt: str, fresh: bool = False) -> list[float]:
        """Each answer's log-probability as the first token after `prompt`."""
        entries = self.request(PATHS[self.api], top_body(self.api, self.endpoint.model, prompt, self.top_k), top_entries,
                               fresh)
        return first_token_log_likelihoods(entries, self.verbalizer.flat())

    def render(self, item: Input) -> str:
        """The prompt's text for `item` (the user's message, for the chat API)."""
        return "".join(self.template.parts(item))

    def content_free_prompts(self) -> list[str]:
        return [self.render(item) for item in content_free_inputs(self.template)]

    def request(self, path: str, body: dict, read: Callable[[dict], object] = lambda found: found,
                fresh: bool = False):
        """What `read` makes of the server's answer to POST `path` with `body`: the answer from the
        response cache when it holds it (unless `fresh`), else sent for, counted in the ledger and
        stored once `read` has taken it (an answer it refuses is never stored; a fresh one
        stays beside the one stored)."""
        key = request_key(self.endpoint.url, self.endpoint.model, {"path": path, "body": body})
        found = self.cache.get(key) if self.cache is not None and not fresh else None
        if found is not None:
            self.ledger.hit()
            return read(found)
        self.ledger.send()
        found = self.transport.post(path, body)
        self.ledger.answer(found)
        value = read(found)
        if self.cache is not None:
            self.cache.put(key, found)
        return value

    def digest(self) -> str:
        """SHA-256 of the endpoint (URL without credentials, model) and the classifier's identity."""
        served = hashlib.sha256(json.dumps({"url": self.endpoint.url, "model": self.endpoint.model},
                                           sort_keys=True).encode()).hexdigest()
        return identity_digest(served, self.settings)


def each_answered(pool: ThreadPoolExecutor, ask: Callable, items: Sequence) -> list:
    """`ask(item)` of each item, run in `pool`; when any fails, the first failure (in the items'
    order) is raised once every other has run, so that the requests sent for a batch do not depend
    on which finished first (a batch stopped by a limit is asked whole on a resume, as an
    uninterrupted run asks it); only a request that kept failing (`EndpointFailed`: the server is
    failing) cancels those not yet begun."""
    futures = [pool.submit(ask, item) for item in items]
    failures = []
    for future in futures:
        error = None if future.cancelled() else future.exception()
        if error is not None:
            failures.append(error)
            if isinstance(error, EndpointFailed):
                for pending in futures:
                    pending.cancel()
    if failures:
        raise failures[0]
    return [future.result() for future in futures]


def check_top_logprobs(lm: EndpointLM) -> int:
    """The fewest first tokens the server lists, asked for `lm.top_k`, in its answers to the
    content-free prompts; refused (`CannotScore`) when one lists no `top_logprobs`, and for
    answers their first tokens cannot tell apart."""
    check_answers(lm.verbalizer.flat())
    return min(len(lm.request(PATHS[lm.api], top_body(lm.api, lm.endpoint.model, prompt, lm.top_k), top_entries))
               for prompt in lm.content_free_prompts())


def choose_top_k(lm: EndpointLM, wanted: int | None = None) -> int:
    """The number of first tokens `lm` asks for, set on it: `wanted` when given, else PROBED_K
    when the server lists that many for every content-free prompt, else TOP_K (a server that
    refuses PROBED_K, or lists fewer, is asked TOP_K); checked by `check_top_logprobs`."""
    if wanted is None:
        lm.top_k = PROBED_K
        try:
            if check_top_logprobs(lm) >= PROBED_K:
                return PROBED_K
        except LimitReached:
            raise
        except RobustcountError:  # refused (an HTTP 400: more than its cap) or not read: ask TOP_K
            pass
    lm.top_k = wanted or TOP_K
    check_top_logprobs(lm)
    return lm.top_k


def choose_scoring(lm: EndpointLM, wanted: str | None = None, top_k: int | None = None) -> str:
    """The scoring mode the server allows (only `wanted`, when given): `ECHO` (completions only)
    when its echo checks out and no `top_k` is given, else `TOP_LOGPROBS` (asking `top_k` first
    tokens, else as many as `choose_top_k` finds); refused in one line, with each mode's reason,
    when none works."""
    reasons = []
    if lm.api == "completions" and wanted in (None, ECHO) and top_k is None:
        try:
            check_echo(lm)
            return ECHO
        except CannotScore as err:
            reasons.append(str(err))
    if wanted == ECHO:
        raise RobustcountError(f"{lm.name} {reasons[0]}: robustcount refuses rather than guess")
    try:
        choose_top_k(lm, top_k)
        return TOP_LOGPROBS
    except CannotScore as err:
        reasons.append(str(err))
    raise RobustcountError(f"{lm.name} {'; nor '.join(reasons)}: robustcount refuses rather than guess")


@dataclass(frozen=True)
class RequestSettings:
    """How a served model's requests are sent: at most `concurrency` at once, retried as `retries`
    says (each attempt `timeout` seconds at most when given), with the API key the environment
    variable `api_key_variable` holds (none when unset), their answers kept in `cache` (default
    `response_cache.default_cache_path()`)."""

    concurrency: int = 4
    retries: Retries = Retries()
    timeout: float | None = None
    api_key_variable: str = API_KEY_VARIABLE
    cache: str | Path | None = None


@dataclass(frozen=True)
class SpendLimits:
    """What a served model's requests cost (`price` per 1,000 tokens, in and out) and the limits
    past which none is sent (`max_requests`, `max_cost`; None: no limit)."""

    price: tuple[float, float] = (0.0, 0.0)
    max_requests: int | None = None
    max_cost: float | None = None


SCORING_OPTIONS = ("api", "scoring", "top_logprobs")
"""The served-model options that say how the server is asked and scored (`load_endpoint_lm`'s keywords)."""


def served_keywords(options: dict) -> dict:
    """`load_endpoint_lm`'s keywords from one flat dict of served-model options (SCORING_OPTIONS
    and the fields of `RequestSettings` and `SpendLimits`, as `zoo.load_model(served=...)` takes
    them); an unknown name is refused."""
    request_fields = {f.name for f in dataclasses.fields(RequestSettings)}
    limit_fields = {f.name for f in dataclasses.fields(SpendLimits)}
    unknown = sorted(set(options) - request_fields - limit_fields - set(SCORING_OPTIONS))
    if unknown:
        raise RobustcountError(f"unknown served-model option(s): {', '.join(unknown)}")
    return {**{name: options[name] for name in SCORING_OPTIONS if name in options},
            "requests": RequestSettings(**{k: v for k, v in options.items() if k in request_fields}),
            "limits": SpendLimits(**{k: v for k, v in options.items() if k in limit_fields})}


def load_endpoint_lm(spec: str, asked: PromptSpec, *, api: str = "chat", scoring: str | None = None,
                     top_logprobs: int | None = None, requests: RequestSettings = RequestSettings(), limits: SpendLimits = SpendLimits()) -> EndpointLM:
    """The classifier `openai:BASE_URL#MODEL` names, asked `asked.prompt` through `api` (`chat` or
    `completions`) and answering as `asked.verbalizer` says (both required), calibrated as
    `asked.calibration` says (`auto`, the default, and `content-free`: fitted now through the
    endpoint, as the local smollm2's default is; `none`: uncalibrated). Requests are sent as `requests` says. The scoring mode is `scoring` when given
    (checked), else the one the server allows (`choose_scoring`; `top_logprobs`: the first
    tokens asked for, default as many as the server lists, `choose_top_k`). Its `ledger` counts the requests
    at `limits.price` and sends none past `limits.max_requests` or `limits.max_cost`, counted from
    the end of the load (a run counts them from its first example: `runs.backends.run_chunk`)."""
    prompt, verbalizer, calibration = asked.prompt, asked.verbalizer, asked.calibration
    endpoint = Endpoint.parse(spec)
    if prompt is None or verbalizer is None:
        raise RobustcountError(f"{endpoint.spec}: a served language model needs --prompt and --verbalizer")
    if calibration not in ("auto", "none", "content-free"):
        raise RobustcountError(f"unknown calibration {calibration!r} (use none or content-free)")
    if api not in APIS:
        raise RobustcountError(f"unknown API {api!r} (use {' or '.join(APIS)})")
    template = PromptTemplate(read_prompt(prompt), chat=api == "chat")
    verbal = Verbalizer.parse(verbalizer)
    retries = requests.retries if requests.timeout is None else dataclasses.replace(requests.retries,
                                                                                   timeout=requests.timeout)
    transport = Transport(endpoint.url, os.environ.get(requests.api_key_variable) or None,
                          concurrency=requests.concurrency, retries=retries)
    responses = ResponseCache(default_cache_path() if requests.cache is None else requests.cache)
    connection = Connection(transport, responses, Ledger(limits.price, limits.max_requests, limits.max_cost),
                            requests.concurrency)
    bare = EndpointLM(endpoint, template, verbal, Calibration(), connection, api=api, scoring=scoring or ECHO)
    if scoring not in (None, ECHO, TOP_LOGPROBS) or scoring == ECHO and api == "chat":
        raise RobustcountError(f"scoring {scoring!r}: use {TOP_LOGPROBS}, or {ECHO} with the completions API")
    if top_logprobs is not None and (top_logprobs < 2 or scoring == ECHO):
        raise RobustcountError(f"top_logprobs {top_logprobs}: ask for 2 first tokens or more, with {TOP_LOGPROBS} "
                               "scoring")
    bare.scoring = choose_scoring(bare, scoring, top_logprobs)
    neutral = content_free_inputs(template)
    fitted = Calibration.fitted([str(item) for item in neutral], bare.predict_proba(neutral)) \
        if calibration in ("auto", "content-free") else Calibration()
    model = EndpointLM(endpoint, template, verbal, fitted, connection, api=api, scoring=bare.scoring,
                       top_k=bare.top_k)
    model.determinism = probe_determinism(model)
    connection.ledger.start_limits()
    return model
