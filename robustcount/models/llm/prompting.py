"""What turns a language model into a classifier, apart from how the model is run: the prompt
template, the verbaliser (the answers that stand for each label) and content-free calibration
(Zhao et al. 2021). Nothing here runs a model, so a local forward (`models/llm/scoring.py`) and a
remote backend can share it.

Class probabilities: each answer's log-likelihood after the prompt, log-sum-exp over a label's
answers, normalised over the labels; calibrated, each label's probability is divided by its mean
probability on content-free inputs (`CONTENT_FREE_INPUTS` in place of the text), then
normalised again (a constant shift of the label scores, `Calibration.shift`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.text import Input

TEXT, PREMISE, HYPOTHESIS = "{text}", "{premise}", "{hypothesis}"
CONTENT_FREE_INPUTS = ("N/A", "", "[MASK]")
"""The content-free inputs of Zhao et al. (2021), put in place of the text (of both parts of a pair)."""
FIT_DIGITS = 4


@dataclass(frozen=True)
class PromptTemplate:
    """A user message with `{text}` in it once (or `{premise}` and `{hypothesis}` once each, for
    pairs). `chat`: whether it is wrapped in the tokenizer's chat template as a user turn
    followed by the assistant's turn (when the tokenizer has one)."""

    template: str
    chat: bool = True

    def __post_init__(self):
        single = self.template.count(TEXT) == 1
        pair = self.template.count(PREMISE) == 1 and self.template.count(HYPOTHESIS) == 1
        if single == pair:
            raise RobustcountError(f"prompt {shorten(self.template)!r}: put {TEXT} in it once, or {PREMISE} and "
                                   f"{HYPOTHESIS} once each for pairs (and not both)")

    @property
    def takes_pairs(self) -> bool:
        return TEXT not in self.template

    def parts(self, item: Input) -> list[str]:
        """The template cut around its placeholders: text pieces and inputs alternating, the
        perturbed part (the text, or the hypothesis) last among the inputs."""
        if isinstance(item, tuple) != self.takes_pairs:
            wanted = "(premise, hypothesis) pairs" if self.takes_pairs else "single texts"
            raise RobustcountError(f"the prompt takes {wanted}; the input is not one")
        if not self.takes_pairs:
            before, _, after = self.template.partition(TEXT)
            return [before, item, after]
        premise, hypothesis = item
        first, second = sorted((PREMISE, HYPOTHESIS), key=self.template.index)
        before, _, rest = self.template.partition(first)
        middle, _, after = rest.partition(second)
        values = {PREMISE: premise, HYPOTHESIS: hypothesis}
        return [before, values[first], middle, values[second], after]

    def perturbed_index(self) -> int:
        """The index in `parts` of the perturbed part."""
        if not self.takes_pairs:
            return 1
        return 3 if self.template.index(HYPOTHESIS) > self.template.index(PREMISE) else 1


def read_prompt(value: str) -> str:
    """`--prompt`'s value: a template, or the path of a file holding one (UTF-8)."""
    if TEXT not in value and PREMISE not in value and Path(value).is_file():
        try:
            return Path(value).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise RobustcountError(f"cannot read the prompt file {value}: {err}") from err
    return value


@dataclass(frozen=True)
class Verbalizer:
    """Each label's answers, in the classifier's label order."""

    answers: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def parse(cls, spec: str) -> Verbalizer:
        """`label=answer[|answer...],...` (at least two labels, each answer non-empty)."""
        entries = []
        for part in spec.split(","):
            label, sep, answers = part.partition("=")
            options = tuple(answer for answer in answers.split("|"))
            if not sep or not label.strip() or not all(answer.strip() for answer in options):
                raise RobustcountError(f"verbalizer {spec!r}: expected label=answer[|answer...],... "
                                       f"(got {part!r})")
            entries.append((label.strip(), options))
        labels = [label for label, _ in entries]
        if len(set(labels)) != len(labels) or len(labels) < 2:
            raise RobustcountError(f"verbalizer {spec!r}: name at least two labels, each once")
        return cls(tuple(entries))

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(label for label, _ in self.answers)

    def flat(self) -> list[str]:
        """Every answer, label by label."""
        return [answer for _, options in self.answers for answer in options]

    def owners(self) -> list[int]:
        """For each answer of `flat`, its label's index."""
        return [k for k, (_, options) in enumerate(self.answers) for _ in options]

    def spec(self) -> str:
        return ",".join(f"{label}={'|'.join(options)}" for label, options in self.answers)


def label_log_scores(answer_log_likelihoods: np.ndarray, owners: Sequence[int], n_labels: int) -> np.ndarray:
    """Per row, each label's log-sum-exp of its answers' log-likelihoods (rows: inputs; columns:
    the answers of `Verbalizer.flat`)."""
    scores = np.full((len(answer_log_likelihoods), n_labels), -np.inf)
    for column, label in enumerate(owners):
        scores[:, label] = np.logaddexp(scores[:, label], answer_log_likelihoods[:, column])
    return scores


@dataclass(frozen=True)
class Calibration:
    """Content-free calibration: `inputs` and the label probabilities the uncalibrated classifier
    gave them on average (`mean`), whose logarithm is subtracted from the label scores."""

    inputs: tuple[str, ...] = ()
    mean: tuple[float, ...] = ()

    @property
    def method(self) -> str:
        return "content-free" if self.inputs else "none"

    def shift(self, n_labels: int) -> np.ndarray:
        """What is added to each label's log score (zeros when uncalibrated)."""
        return -np.log(np.asarray(self.mean)) if self.inputs else np.zeros(n_labels)

    @classmethod
    def fitted(cls, inputs: Sequence[str], probabilities: np.ndarray) -> Calibration:
        """From the uncalibrated label probabilities of the content-free `inputs`, each average
        rounded to FIT_DIGITS decimals (so that the float noise of other CPU kernels does not
        change the calibration, and with it the classifier's digest, except in rare ties)."""
        mean = np.asarray(probabilities, dtype=np.float64).mean(axis=0)
        return cls(tuple(inputs), tuple(round(float(value), FIT_DIGITS) for value in mean))

    def record(self) -> dict:
        return {"method": self.method, "inputs": list(self.inputs), "mean": list(self.mean)}


@dataclass(frozen=True)
class PromptSpec:
    """How a language model is asked to classify: its `prompt` (a template or a file), its
    `verbalizer` (label=answer,...) and its `calibration` ("none", "content-free": fitted when the
    model is built, a `Calibration` fitted before, or "auto": the model's default, content-free for
    smollm2 and a served model, none for llm:PATH)."""

    prompt: str | None
    verbalizer: str | None
    calibration: str | Calibration = "none"


def content_free_inputs(template: PromptTemplate) -> list[Input]:
    """The content-free inputs in the template's kind (pairs of them for a pair template)."""
    return [(text, text) if template.takes_pairs else text for text in CONTENT_FREE_INPUTS]


def identity(template: PromptTemplate, verbalizer: Verbalizer, calibration: Calibration) -> dict:
    """What, besides the weights, makes the classifier the one it is (part of its digest)."""
    return {"prompt": template.template, "chat": template.chat, "verbalizer": verbalizer.spec(),
            "calibration": calibration.record()}


def identity_digest(weights: str, record: dict) -> str:
    """The classifier's digest: SHA-256 of its weights' digest and its `identity`."""
    return hashlib.sha256(json.dumps({"weights": weights, **record}, sort_keys=True).encode()).hexdigest()


def shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
