"""Hugging Face sequence classifiers, from a local directory or (online) a hub name."""

from __future__ import annotations

import os
import pickle
import socket
from pathlib import Path

from safetensors import SafetensorError

from robustcount.errors import RobustcountError
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.torch_adapter import TorchClassifier, hf_tokenizer


def quiet_transformers() -> None:
    """Silence transformers' loading progress bars and advisory logs (our CLI has its own output)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def load_transformers(
    name_or_path: str,
    *,
    device: str = "auto",
    dtype: str = "float32",
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_length: int | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
) -> TorchClassifier:
    """An `AutoModelForSequenceClassification` with its fast tokenizer as a TorchClassifier.

    Weights load from safetensors when the checkpoint has them; otherwise transformers loads
    PyTorch files with `weights_only=True`. Code shipped with a checkpoint runs only with
    `trust_remote_code=True`. A local directory never touches the network. The checkpoint loads only
    whole (`load_whole`): its tokenizer and all its weights.
    """
    from transformers import AutoModelForSequenceClassification

    local = Path(name_or_path).is_dir()
    offline = local or os.environ.get("HF_HUB_OFFLINE") == "1" or not _cached(name_or_path) and not hub_reachable()
    if offline and not local and not _cached(name_or_path):
        raise RobustcountError(f"cannot load transformers model {name_or_path!r}: it is not in the local cache and "
                               f"{HUB_HOST} cannot be reached (no network); use a local directory")
    model, tokenizer = load_whole(name_or_path, AutoModelForSequenceClassification, revision=revision,
                                  trust_remote_code=trust_remote_code, local_files_only=offline)
    return transformers_classifier(model, tokenizer, name_or_path, device=device, dtype=dtype, batch_size=batch_size,
                                   max_length=max_length)


MIN_VOCABULARY = 1000
"""Fewer tokens than this is no real tokenizer: transformers builds one from the special tokens
alone (every word `[UNK]`) when a directory lacks its tokenizer files."""


def load_whole(name_or_path: str, model_class, *, new_modules: tuple[str, ...] = (), model_options: dict | None = None,
               **options):
    """`model_class.from_pretrained(name_or_path)` and its tokenizer (`AutoTokenizer`), both with
    `options`, the model also with `model_options`; refused in one line unless whole: the
    tokenizer's files are there (a local directory), its vocabulary is real (at least
    MIN_VOCABULARY tokens) and within the embedding matrix, and the weights match the
    configuration (no key missing, unexpected or of another shape; keys of `new_modules`, modules
    the caller adds fresh, may be missing)."""
    from transformers import AutoTokenizer

    quiet_transformers()
    where = f"directory {name_or_path!r}" if Path(name_or_path).is_dir() else \
        f"model {name_or_path!r} (hub name, needs network access)"
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, **options)
        model, info = model_class.from_pretrained(name_or_path, output_loading_info=True, ignore_mismatched_sizes=True,
                                                  **options, **(model_options or {}))
    except (OSError, ValueError, ImportError) as err:
        raise RobustcountError(f"cannot load transformers {where}: {_first_line(err)}") from err
    except SafetensorError as err:
        weights = Path(name_or_path) / "model.safetensors"
        named = weights if weights.is_file() else "its safetensors weights"
        raise RobustcountError(f"cannot load transformers {where}: {named} is not a whole safetensors file, "
                               f"truncated or of another format ({_first_line(err)})") from err
    except (pickle.UnpicklingError, EOFError) as err:
        raise RobustcountError(f"cannot load transformers {where}: a weights file is not a checkpoint PyTorch "
                               f"can read ({_first_line(err)})") from err
    except Exception as err:
        if not options.get("trust_remote_code"):
            raise
        raise RobustcountError(f"cannot load transformers {where}: the code shipped with it raised "
                               f"{type(err).__name__}: {_first_line(err)}") from err
    problem = _weights_problem(info, new_modules) or _tokenizer_problem(name_or_path, tokenizer, model)
    if problem is not None:
        raise RobustcountError(f"cannot load transformers {where}: {problem}")
    return model, tokenizer


def _first_line(err: BaseException) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def _tokenizer_problem(name_or_path: str, tokenizer, model) -> str | None:
    """What makes `tokenizer` not the whole tokenizer of `model`, or None."""
    files = sorted({"tokenizer.json", *getattr(type(tokenizer), "vocab_files_names", {}).values()})
    if Path(name_or_path).is_dir() and not any((Path(name_or_path) / name).is_file() for name in files):
        return f"its tokenizer files are missing (it needs one of {', '.join(files)}: tokenizer.save_pretrained writes them)"
    if len(tokenizer) < MIN_VOCABULARY:
        return f"its tokenizer has only {len(tokenizer)} tokens (a real vocabulary has at least {MIN_VOCABULARY})"
    rows = getattr(model.get_input_embeddings(), "num_embeddings", None)
    top = max(tokenizer.get_vocab().values())
    if rows is not None and top >= rows:
        return (f"its tokenizer has token ids up to {top}, beyond the model's {rows} embeddings "
                "(the tokenizer is not this model's)")
    return None


def _weights_problem(info: dict, new_modules: tuple[str, ...]) -> str | None:
    """What `from_pretrained`'s loading `info` says does not match the configuration, or None."""
    fresh = tuple(f"{module}." for module in new_modules)
    mismatch = key_mismatch([key for key in info["missing_keys"] if not key.startswith(fresh)],
                            info["unexpected_keys"], {key: (found, wanted) for key, found, wanted in info["mismatched_keys"]})
    errors = [str(message).strip().splitlines()[0] for message in info.get("error_msgs") or () if str(message).strip()]
    problems = [problem for problem in (mismatch, *errors) if problem]
    return f"its weights do not match its configuration: {'; '.join(problems)}" if problems else None


def key_mismatch(missing, unexpected, reshaped: dict) -> str | None:
    """Keys missing, unexpected, and of another shape (`reshaped`: key -> (shape found, shape
    wanted)), said in one line with the first few of each; None when there are none."""
    shapes = [f"{key} {list(found)} not {list(wanted)}" for key, (found, wanted) in sorted(reshaped.items())]
    groups = (("missing", sorted(missing)), ("unexpected", sorted(unexpected)), ("of another shape", shapes))
    return "; ".join(f"{len(keys)} {what} ({_first_few(keys)})" for what, keys in groups if keys) or None


def _first_few(keys: list[str], shown: int = 3) -> str:
    return ", ".join(keys[:shown]) + (f", and {len(keys) - shown} more" if len(keys) > shown else "")


HUB_HOST = "huggingface.co"


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers at all (one connection, `timeout` seconds), so that an
    offline machine fails at once instead of retrying each file for most of a minute."""
    try:
        socket.create_connection((HUB_HOST, 443), timeout=timeout).close()
    except OSError:
        return False
    return True


def _cached(name: str) -> bool:
    """Whether the hub model `name` has a configuration in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except ValueError:  # not a valid hub name
        return False


def transformers_classifier(model, tokenizer, name: str, *, device: str = "auto", dtype: str = "float32",
                            batch_size: int = DEFAULT_BATCH_SIZE, max_length: int | None = None) -> TorchClassifier:
    """A loaded sequence-classification model and its fast tokenizer as a TorchClassifier, its labels
    from the model's config. It reads at most `max_length` tokens of an input (default: the
    tokenizer's `model_max_length`, or the model's `max_position_embeddings` when the tokenizer
    names no smaller limit, at most 4096): its window, which spaces keep to."""
    id2label = model.config.id2label
    labels = [str(id2label[i]) for i in range(model.config.num_labels)]
    positions = getattr(model.config, "max_position_embeddings", None)
    limit = max_length or min(getattr(tokenizer, "model_max_length", 512), positions or 4096, 4096)
    return TorchClassifier(model, hf_tokenizer(tokenizer, limit), labels, name=name, device=device, dtype=dtype,
                           batch_size=batch_size)
