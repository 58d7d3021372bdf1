"""How to load one model: the one declaration of the model options a run records and the CLI offers."""

from __future__ import annotations

from dataclasses import field

from robustcount.models.engine import DEFAULT_BATCH_SIZE, QueryEngine
from robustcount.models.zoo import DEFAULT_MODEL, load_model
from robustcount.options import option, options_dataclass


CALIBRATIONS = ("auto", "none", "content-free")
"""A language model's calibrations as options name them (`auto`: the model's default)."""


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
        "A language model's prompt: a template with {text} (or {premise} and {hypothesis}), or a file holding one.",
        kind=str))
    verbalizer: str | None = field(default=None, metadata=option(
        "A language model's answers per label: label=answer[|answer...],...", kind=str))
    calibration: str = field(default="auto", metadata=option(
        "A language model's calibration: content-free (Zhao et al. 2021), none, or auto (the model's default).",
        choices=CALIBRATIONS))

    def load(self, device: str | None = None):
        """The classifier these options name, on `device` when given (else on `self.device`)."""
        return load_model(self.spec, device=device or self.device, dtype=self.precision, batch_size=self.batch_size,
                          trust_remote_code=self.trust_remote_code, prompt=self.prompt, verbalizer=self.verbalizer,
                          calibration=self.calibration)

    def engine(self, device: str | None = None) -> QueryEngine:
        """A query engine over the loaded model, batching as these options say."""
        return QueryEngine(self.load(device), batch_size=self.batch_size)
