"""How to load one model: the one declaration of the model options a run records and the CLI offers."""

from __future__ import annotations

from dataclasses import field

from robustcount.errors import RobustcountError
from robustcount.models.engine import DEFAULT_BATCH_SIZE, QueryEngine
from robustcount.models.llm.prompting import read_prompt
from robustcount.models.zoo import DEFAULT_MODEL, is_served, load_model
from robustcount.options import option, options_dataclass


CALIBRATIONS = ("auto", "none", "content-free")
"""A language model's calibrations as options name them (`auto`: the model's default)."""
NOT_RECORDED = ("device", "concurrency", "timeout", "cache", "price_per_1k_tokens")
"""The model options a run header leaves out: where and how fast a model runs, and what its
requests cost, never change a result (a resume may change them)."""
SERVED_OPTIONS = {"api": "chat", "concurrency": 4, "timeout": 120.0, "cache": None, "price_per_1k_tokens": None,
                  "max_requests": None, "max_cost": None, "top_logprobs": None}
"""The options of a served model (`openai:`) only, with their defaults."""


@options_dataclass
class ModelSpec:
    """A model by name (`spec`) and how to run it."""

    spec: str = field(default=DEFAULT_MODEL, metadata=option(
        "A name from `robustcount models`, llm:PATH (a causal language model: a directory or a .gguf file), "
        "openai:BASE_URL#MODEL (a language model served over the OpenAI-compatible completions API; key from "
        "$OPENAI_API_KEY), "
        "a transformers directory, a hub name (online), py:module:function, or a scikit-learn estimator saved as "
        "PATH.skops or PATH.joblib (a pickle: with --trust-remote-code only).",
        names=("--model",)))
    device: str = field(default="auto", metadata=option("cpu, cuda, cuda:N or auto."))
    precision: str = field(default="float32", metadata=option(
        "Half precision needs a GPU.", choices=("float32", "float16", "bfloat16")))
    batch_size: int = field(default=DEFAULT_BATCH_SIZE, metadata=option("Inputs per forward batch.", minimum=1))
    trust_remote_code: bool = field(default=False, metadata=option(
        "Run code a model brings: a hub checkpoint's, the types a .skops file names beyond scikit-learn's, NumPy's "
        "and SciPy's, or a .joblib file (a pickle).", flag=True))
    prompt: str | None = field(default=None, metadata=option(
        "A language model's prompt: a template with {text} (or {premise} and {hypothesis}), or a file holding one "
        "(run headers record the template).",
        kind=str))
    verbalizer: str | None = field(default=None, metadata=option(
        "A language model's answers per label: label=answer[|answer...],...", kind=str))
    calibration: str = field(default="auto", metadata=option(
        "A language model's calibration: content-free (Zhao et al. 2021), none, or auto (the model's default).",
        choices=CALIBRATIONS))
    api: str = field(default="chat", metadata=option(
        "A served model (openai:): send the prompt as a chat's user message (the server applies the model's chat "
        "template) or as a completion's plain text.", choices=("chat", "completions")))
    top_logprobs: int | None = field(default=None, metadata=option(
        "A served model scored from the top_logprobs of its first answer token: how many of the most likely first "
        "tokens to ask for (default: 100 where the server lists that many, as llama.cpp's does, else 20, "
        "the most OpenAI's API gives). An answer not among them leaves its example undecided.",
        minimum=2, kind=int))
    concurrency: int = field(default=4, metadata=option("A served model's requests in flight at once.", minimum=1))
    timeout: float = field(default=120.0, metadata=option(
        "A served model's seconds per request attempt; one that times out is retried (8 attempts in all).",
        minimum=0, open_minimum=True))
    cache: str | None = field(default=None, metadata=option(
        "A served model's response cache, a SQLite file several processes share (default: "
        "endpoint-responses.sqlite in $ROBUSTCOUNT_CACHE, else ~/.cache/robustcount).", kind=str))
    price_per_1k_tokens: str | None = field(default=None, metadata=option(
        "A served model's price per 1,000 tokens, IN,OUT (prompt, completion), for the ledger's cost.", kind=str))
    max_requests: int | None = field(default=None, metadata=option(
        "Send at most this many requests to a served model (per process); later examples end undecided "
        "(`max requests`) and a resume with a higher limit runs them.", minimum=1, kind=int))
    max_cost: float | None = field(default=None, metadata=option(
        "Send no request to a served model once its cost reaches this (per process; needs "
        "--price-per-1k-tokens); later examples end undecided (`max cost`), resumable with a higher limit.",
        minimum=0, open_minimum=True, kind=float))

    def __post_init__(self):
        served = is_served(self.spec)
        given = [name for name, default in SERVED_OPTIONS.items() if getattr(self, name) != default]
        if given and not served:
            raise RobustcountError(f"--{given[0].replace('_', '-')} applies to a served model (openai:BASE_URL#MODEL), "
                                   f"not to {self.spec!r}")
        if self.max_cost is not None and self.price_per_1k_tokens is None:
            raise RobustcountError("--max-cost needs --price-per-1k-tokens IN,OUT")
        if self.price_per_1k_tokens is not None:
            parse_price(self.price_per_1k_tokens)
        if self.prompt is not None:  # a file's template, so that run headers record the prompt itself
            object.__setattr__(self, "prompt", read_prompt(self.prompt))

    def load(self, device: str | None = None):
        """The classifier these options name, on `device` when given (else on `self.device`)."""
        served = {}
        if is_served(self.spec):
            served = {name: getattr(self, name) for name in SERVED_OPTIONS if name != "price_per_1k_tokens"}
            served["price"] = parse_price(self.price_per_1k_tokens) if self.price_per_1k_tokens else (0.0, 0.0)
        return load_model(self.spec, device=device or self.device, dtype=self.precision, batch_size=self.batch_size,
                          trust_remote_code=self.trust_remote_code, prompt=self.prompt, verbalizer=self.verbalizer,
                          calibration=self.calibration, served=served)

    def engine(self, device: str | None = None) -> QueryEngine:
        """A query engine over the loaded model, batching as these options say."""
        return QueryEngine(self.load(device), batch_size=self.batch_size)


def recorded_options(options: dict) -> dict:
    """A model's options (`ModelSpec` as a dict) as run headers record them: without NOT_RECORDED,
    and without the served models' options for any other model."""
    served = is_served(str(options.get("spec", "")))
    return {name: value for name, value in options.items()
            if name not in NOT_RECORDED and (served or name not in SERVED_OPTIONS)}


def parse_price(value: str) -> tuple[float, float]:
    """`--price-per-1k-tokens IN,OUT` as two non-negative numbers, refused in one line otherwise."""
    try:
        prices = tuple(float(part) for part in value.split(","))
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(price >= 0 for price in prices):
        raise RobustcountError(f"--price-per-1k-tokens {value!r}: expected IN,OUT, two non-negative numbers (e.g. 0.15,0.6)")
    return prices
