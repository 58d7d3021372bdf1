"""A prompted causal LM as a white-box Classifier: the prompt (`prompting.py`) rendered through the
tokenizer's chat template, each label scored by its answers (`scoring.py`), calibrated or not.

`prompted_lm(lm, tokenizer, ...)` builds it from a loaded causal LM; `load_prompted_lm(spec, ...)`
from `smollm2` or `llm:PATH`. Its digest is of the weights and of the prompt, the verbaliser and
the calibration, so a certificate names exactly the classifier it proves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from robustcount.errors import RobustcountError
from robustcount.models.base import Window
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.llm.loading import load_causal_lm, smollm2_gguf
from robustcount.models.llm.prompting import (
    CONTENT_FREE_INPUTS,
    Calibration,
    PromptSpec,
    PromptTemplate,
    Verbalizer,
    content_free_inputs,
    identity,
    identity_digest,
    read_prompt,
    shorten,
)
from robustcount.models.llm.scoring import VerbalizedLM
from robustcount.models.torch_adapter import Encoding, TorchClassifier
from robustcount.text import Input, perturbed_part, replace_perturbed_part

SMOLLM2 = "smollm2"
SMOLLM2_PROMPT = "Is this movie review positive or negative? Answer with one word.\n\nReview: {text}"
SMOLLM2_VERBALIZER = "negative=Negative|negative,positive=Positive|positive"
SMOLLM2_CALIBRATION = Calibration(CONTENT_FREE_INPUTS, (0.2639, 0.7361))
"""The packaged model's defaults, for the demo task (docs/models.md says how they were chosen). Its
content-free calibration ships as fitted (`prompted_lm` with calibration "content-free" and the
defaults, rounded as every fit is), so that its digest does not depend on the CPU's kernels; a
test checks the fit against it."""


class PromptTokenizer:
    """Renders each input into the prompt (through the chat template when there is one) and
    tokenizes it, with each token's span within the perturbed part (None outside it).

    A prompt reads at most `max_length` tokens (the model's positions less its longest answer):
    the prompt's own parts are kept whole and the perturbed part (the text, or a pair's
    hypothesis) is cut after the last of its tokens that fits. That is the model's `window`,
    which spaces keep to (docs/long-documents.md)."""

    def __init__(self, tokenizer, template: PromptTemplate, max_length: int):
        if not getattr(tokenizer, "is_fast", False):
            raise RobustcountError("robustcount needs a fast (Rust) tokenizer for its character offsets")
        self.tokenizer = tokenizer
        self.template = template
        self.max_length = max_length
        self.chat = template.chat and bool(getattr(tokenizer, "chat_template", None))
        self.pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.window = Window(f"{max_length}-token", self.window_end)

    def window_end(self, item: Input) -> int | None:
        """The character offset in `item`'s perturbed part where what the model reads of it ends
        (the end of its last token within `max_length`), or None when the whole prompt fits."""
        text = perturbed_part(item)
        end = len(text)
        while True:
            prompt, start, stop = self.render(replace_perturbed_part(item, text[:end]))
            encoded = self.tokenizer(prompt, add_special_tokens=not self.chat, return_offsets_mapping=True)
            over = len(encoded["input_ids"]) - self.max_length
            if over <= 0:
                return None if end == len(text) else end
            ends = [e - start for s, e in encoded["offset_mapping"] if start <= s and e <= stop and e > s]
            if len(ends) <= over:
                raise RobustcountError(f"the prompt without its {'hypothesis' if isinstance(item, tuple) else 'text'} "
                                       f"has more tokens than the model reads ({self.max_length})")
            end = min(ends[len(ends) - over - 1], end - 1)  # a token of several pieces: cut before it

    def render(self, item: Input) -> tuple[str, int, int]:
        """The prompt's text and the character span of the perturbed part in it."""
        parts = self.template.parts(item)
        content = "".join(parts)
        start = sum(len(part) for part in parts[: self.template.perturbed_index()])
        end = start + len(parts[self.template.perturbed_index()])
        before, after = self._turn
        return before + content + after, len(before) + start, len(before) + end

    @cached_property
    def _turn(self) -> tuple[str, str]:
        """What the chat template puts before and after the user's message (nothing without one)."""
        if not self.chat:
            return "", ""
        marker = "\x00robustcount\x00"
        wrapped = self.tokenizer.apply_chat_template([{"role": "user", "content": marker}], tokenize=False,
                                                     add_generation_prompt=True)
        before, found, after = wrapped.partition(marker)
        if not found or marker in after:
            raise RobustcountError("the tokenizer's chat template does not keep the user's message as it is")
        return before, after

    def __call__(self, batch: Sequence[Input]) -> Encoding:
        rendered = [self.render(item) for item in batch]
        encoded = self.tokenizer([text for text, _, _ in rendered], add_special_tokens=not self.chat,
                                 return_offsets_mapping=True)
        if any(len(row) > self.max_length for row in encoded["input_ids"]):  # each cut at the window
            cut = [item if (end := self.window_end(item)) is None
                   else replace_perturbed_part(item, perturbed_part(item)[:end]) for item in batch]
            rendered = [self.render(item) for item in cut]
            encoded = self.tokenizer([text for text, _, _ in rendered], add_special_tokens=not self.chat,
                                     return_offsets_mapping=True)
        rows = encoded["input_ids"]
        longest = max(map(len, rows), default=0)
        ids = torch.full((len(rows), max(longest, 1)), self.pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        offsets = []
        for i, (row, spans, (_, start, end)) in enumerate(zip(rows, encoded["offset_mapping"], rendered)):
            ids[i, : len(row)] = torch.as_tensor(row)
            mask[i, : len(row)] = 1
            offsets.append([(s - start, e - start) if start <= s and e <= end and e > s else None for s, e in spans])
        return Encoding({"input_ids": ids, "attention_mask": mask}, offsets)


class PromptedLM(TorchClassifier):
    """A TorchClassifier over a `VerbalizedLM` whose identity (`settings`) is in its digest."""

    def __init__(self, module: VerbalizedLM, tokenizer: PromptTokenizer, labels, settings: dict, **options):
        super().__init__(module, tokenizer, labels, **options)
        self.settings = settings

    @property
    def max_length(self) -> int:
        """The most tokens a prompt may have (the model's positions)."""
        return self.tokenizer.max_length

    @property
    def prefix_reuse(self) -> bool:
        return self.module.prefix_reuse

    @prefix_reuse.setter
    def prefix_reuse(self, value: bool) -> None:
        self.module.prefix_reuse = value

    @cached_property
    def _weights_digest(self) -> str:
        return TorchClassifier.digest(self)

    def digest(self) -> str:
        """SHA-256 of the weights' digest, the prompt, the verbaliser and the calibration."""
        return identity_digest(self._weights_digest, self.settings)


@dataclass(frozen=True)
class LMRuntime:
    """Where and how a local language model runs: its `device`, its weights' `dtype` and the
    inputs per forward pass (`batch_size`)."""

    device: str = "auto"
    dtype: str = "float32"
    batch_size: int = DEFAULT_BATCH_SIZE


def prompted_lm(lm, tokenizer, name: str, asked: PromptSpec, *, chat: bool = True, runtime: LMRuntime = LMRuntime(),
                prefix_reuse: bool = True) -> PromptedLM:
    """The causal LM `lm` with its `tokenizer` as a classifier of the verbaliser's labels, asked as
    `asked` says: prompted with its `prompt` (a template or a file), calibrated as its `calibration`
    says ("none", "content-free": fitted now on `prompting.CONTENT_FREE_INPUTS`, or a `Calibration`
    fitted before); run as `runtime` says."""
    prompt, verbalizer, calibration = asked.prompt, asked.verbalizer, asked.calibration
    device, dtype, batch_size = runtime.device, runtime.dtype, runtime.batch_size
    if not isinstance(calibration, Calibration) and calibration not in ("none", "content-free"):
        raise RobustcountError(f"unknown calibration {calibration!r} (use none or content-free)")
    template = PromptTemplate(read_prompt(prompt), chat=chat)
    verbal = Verbalizer.parse(verbalizer)
    answers = [tokenizer(answer, add_special_tokens=False)["input_ids"] for answer in verbal.flat()]
    if not all(answers):
        raise RobustcountError(f"verbalizer {verbal.spec()!r}: an answer has no tokens")
    positions = getattr(lm.config, "max_position_embeddings", None) or 4096
    module = VerbalizedLM(lm, answers, verbal.owners(), np.zeros(len(verbal.labels)), prefix_reuse)
    _check_output_layer(lm, tokenizer)
    prompts = PromptTokenizer(tokenizer, template, positions - max(map(len, answers)))
    options = dict(name=name, device=device, dtype=dtype, batch_size=batch_size)
    fitted = calibration if isinstance(calibration, Calibration) else Calibration()
    if calibration == "content-free":
        bare = PromptedLM(module, prompts, verbal.labels, {}, **options)
        fitted = Calibration.fitted([str(item) for item in content_free_inputs(template)],
                                    bare.predict_proba(content_free_inputs(template)))
    if fitted.inputs:
        module.shift.copy_(torch.as_tensor(fitted.shift(len(verbal.labels)), dtype=torch.float32))
        module.anchor = None
    return PromptedLM(module, prompts, verbal.labels, identity(template, verbal, fitted), **options)


def _check_output_layer(lm, tokenizer) -> None:
    """Refuse a model whose logits are not its output layer over its base model's last hidden
    states (the scoring runs those two apart)."""
    ids = torch.as_tensor([tokenizer("a test", add_special_tokens=False)["input_ids"] or [0]])
    with torch.inference_mode():
        whole = lm(input_ids=ids).logits.float()
        apart = lm.get_output_embeddings()(lm.base_model(input_ids=ids).last_hidden_state).float()
    if whole.shape != apart.shape or not torch.allclose(whole, apart, atol=1e-4, rtol=1e-4):
        raise RobustcountError(f"{type(lm).__name__}: its logits are not its output layer over its base model "
                               "(an architecture robustcount cannot score)")


def load_prompted_lm(spec: str, *, prompt: str | None = None, verbalizer: str | None = None,
                     calibration: str = "auto", device: str = "auto", dtype: str = "float32", batch_size: int = DEFAULT_BATCH_SIZE
                     ) -> PromptedLM:
    """`smollm2` (its defaults for whatever is not given) or `llm:PATH` (a directory or a .gguf
    file; `prompt` and `verbalizer` required; calibration `auto` is none). smollm2's content-free
    calibration with its default prompt and verbaliser is the shipped one."""
    if spec == SMOLLM2:
        lm, tokenizer = load_causal_lm(smollm2_gguf())
        prompt, verbalizer = prompt or SMOLLM2_PROMPT, verbalizer or SMOLLM2_VERBALIZER
        defaults = prompt == SMOLLM2_PROMPT and verbalizer == SMOLLM2_VERBALIZER
        if calibration == "auto" or calibration == "content-free" and defaults:
            calibration = SMOLLM2_CALIBRATION if defaults else "content-free"
    else:
        path = spec.removeprefix("llm:")
        if not path:
            raise RobustcountError("llm:PATH: name a transformers directory or a .gguf file")
        if prompt is None or verbalizer is None:
            raise RobustcountError(f"{shorten(spec)}: a language model needs --prompt and --verbalizer")
        lm, tokenizer = load_causal_lm(path)
        calibration = "none" if calibration == "auto" else calibration
    return prompted_lm(lm, tokenizer, spec, PromptSpec(prompt, verbalizer, calibration),
                       runtime=LMRuntime(device, dtype, batch_size))
