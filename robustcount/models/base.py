"""The Classifier protocol: the one thing robustcount asks of a model.

A classifier has `labels` (the names of its classes, in output order) and `predict_proba(batch)`,
which maps a sequence of inputs (texts, or (premise, hypothesis) pairs) to an (n, k) array of class
probabilities, k = len(labels). Classifiers that can differentiate their output with respect to
their input embeddings also implement `GradientClassifier.word_saliency`. A classifier that reads
only a prefix of a long input declares its `Window` (the optional `window` attribute: a
transformer's token limit, a service's character limit), so that spaces leave out the words it
never sees. Helper models that attacks consult are `SentenceEncoder`s (sentence similarity) and
`MaskedLanguageModel`s (BAE's and BERT-Attack's candidates, asked with `MaskQuery`s), and
`SubstitutionScorer`s (a language model's judgement of one-word substitutions, the contextual
space filters', asked with `SubstitutionQuery`s); every kind runs through the query engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.text import Input, perturbed_part, tokenize


@runtime_checkable
class Classifier(Protocol):
    """A model that maps a batch of inputs to class probabilities."""

    labels: tuple[str, ...]

    def predict_proba(self, batch: Sequence[Input]) -> np.ndarray:
        """Class probabilities, shape (len(batch), len(labels)), rows summing to one."""
        ...


@dataclass(frozen=True)
class Window:
    """How much of an input a classifier reads, the optional `window` attribute of a `Classifier`
    (absent or None: all of it). `size` says it in the model's own unit, as outputs show it
    ("512-token"); `end(item)` is the character offset in the input's perturbed part (the text,
    or a pair's hypothesis) where what the model reads of `item` ends, or None when it reads the
    whole of it. A word that ends after that offset is beyond the window."""

    size: str
    end: Callable[[Input], int | None]


def words_window(n: int) -> Window:
    """The window of a model that reads the first `n` words of the perturbed part (robustcount's
    words, `text.tokenize`): for a `FunctionClassifier` whose function or service truncates."""
    if n < 1:
        raise RobustcountError(f"a window holds at least one word, got {n}")

    def end(item: Input) -> int | None:
        spans = tokenize(perturbed_part(item)).spans()
        return spans[n - 1][1] if len(spans) > n else None

    return Window(f"{n}-word", end)


def characters_window(n: int) -> Window:
    """The window of a model that reads the first `n` characters of the perturbed part."""
    if n < 1:
        raise RobustcountError(f"a window holds at least one character, got {n}")
    return Window(f"{n}-character", lambda item: n if len(perturbed_part(item)) > n else None)


@runtime_checkable
class GradientClassifier(Classifier, Protocol):
    """A classifier that may expose input-embedding gradients (torch-based models); it does when
    `has_gradients` is true."""

    has_gradients: bool

    def word_saliency(
        self, item: Input, spans: Sequence[tuple[int, int]], label: int
    ) -> np.ndarray:
        """For each character span of the perturbed part of `item`, the sum over the sub-tokens that
        overlap it of |d p_label / d e_t . e_t| (gradient times input), e_t the sub-token's input
        embedding. A span that no
        sub-token covers (the model cannot see it, for example after truncation) scores zero."""
        ...


@runtime_checkable
class WordIdsClassifier(Classifier, Protocol):
    """A classifier that may read an input as token ids given word by word (a word-level tokenizer:
    the word networks, bag of words); it does when `reads_word_ids` is true. An input's ids are
    then `word_ids(word)` of each word of its perturbed part (`text.tokenize`) one after the other,
    whatever the neighbours, and `predict_proba_ids(rows)` of those rows (a list of lists, or one
    2-D int64 array when the rows are of one length) gives exactly `predict_proba` of the inputs."""

    reads_word_ids: bool

    def word_ids(self, word: str) -> tuple[int, ...]: ...

    def predict_proba_ids(self, rows: Sequence[Sequence[int]] | np.ndarray) -> np.ndarray: ...


@runtime_checkable
class SentenceEncoder(Protocol):
    """A model that maps a batch of texts to unit-norm sentence embeddings."""

    name: str
    dimensions: int

    def embed(self, batch: Sequence[str]) -> np.ndarray:
        """Embeddings, shape (len(batch), dimensions), each row of norm one."""
        ...


class MaskQuery(NamedTuple):
    """One question to a masked language model: which word pieces fit the word at characters
    [start, end) of `text`, replaced there by the model's mask token when `masked` (BAE), or left
    as it is (BERT-Attack reads the text unmasked)."""

    text: str
    start: int
    end: int
    masked: bool


@runtime_checkable
class MaskedLanguageModel(Protocol):
    """A model that says which word pieces of its vocabulary fit a word of a text."""

    name: str
    pieces: tuple[str, ...]
    """Its vocabulary of word pieces, in output order."""
    max_pieces: int
    """The word pieces of a word an answer covers (the first ones; one when masked)."""

    def fill(self, batch: Sequence[MaskQuery]) -> np.ndarray:
        """Shape (len(batch), max_pieces * len(pieces)): row block j holds the probability of every
        vocabulary piece at the word's piece j (the mask, when masked); blocks past the word's
        pieces are zero."""
        ...


class SubstitutionQuery(NamedTuple):
    """One question to a substitution scorer: how much likelier (in nats) the text is with its
    piece `index` replaced by each of `replacements`. The text is cut into `pieces` (piece k: the
    separator before word k and word k; the last piece: the text's trailing separator), and a
    replacement is a whole piece (the same separator, another word); the change is scored over
    the replaced piece and the `window` tokens after it, the text before it as the context."""

    pieces: tuple[str, ...]
    index: int
    replacements: tuple[str, ...]
    window: int


@runtime_checkable
class SubstitutionScorer(Protocol):
    """A language model that scores one-word substitutions in context (`SubstitutionQuery`)."""

    name: str

    def score(self, batch: Sequence[SubstitutionQuery]) -> np.ndarray:
        """Shape (len(batch), width), every query of the batch with `width` replacements: row i
        holds log p(text with replacement j) - log p(text) over the scored tokens of query i."""
        ...


def check_labels(labels: Sequence, who: str) -> tuple[str, ...]:
    """`labels` as a tuple of names; refused in one line unless there are at least two, all different
    (a label is known by its name: two classes of one name could not be told apart)."""
    names = tuple(str(label) for label in labels)
    if len(names) < 2:
        raise RobustcountError(f"{who}: a classifier needs at least two labels, got {list(names)}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise RobustcountError(f"{who}: the labels {list(names)} name {', '.join(map(repr, repeated))} more than once; "
                               "each class needs a name of its own")
    return names


def check_embeddings(vectors: np.ndarray, n: int, width: int, who: str) -> np.ndarray:
    """Validate a sentence encoder's output and return it as float64; raise a one-line error otherwise."""
    return _check_array(vectors, (n, width), who, "embeddings")


def check_probabilities(probs: np.ndarray, n: int, k: int, who: str) -> np.ndarray:
    """Validate a model's output and return it as float64; raise a one-line error otherwise."""
    values = as_numbers(probs, who, "probabilities")
    # Rows at least -1e-6 summing to 1 (np.allclose's test, faster) hold only finite values: a NaN
    # or an infinity fails one of the two comparisons, so the common case needs no other pass.
    if values.shape == (n, k) and (not n or (values.min() >= -1e-6 and np.abs(values.sum(axis=1) - 1.0).max()
                                             <= 1e-3 + 1e-5)):
        return values
    _check_array(values, (n, k), who, "probabilities")  # raises on the shape, or a non-finite value
    raise RobustcountError(f"{who} returned rows that are not probability distributions")


def check_scores(values: np.ndarray, n: int, width: int, who: str) -> np.ndarray:
    """Validate a substitution scorer's output (finite, of its shape) and return it as float64."""
    return _check_array(values, (n, width), who, "substitution scores")


def check_fills(values: np.ndarray, n: int, width: int, who: str) -> np.ndarray:
    """Validate a masked language model's output and return it as float64; raise a one-line error otherwise."""
    return _check_array(values, (n, width), who, "probabilities")


def as_numbers(values, who: str, what: str) -> np.ndarray:
    """`values` (an array, nested lists, a tensor on the CPU) as a float64 array; a one-line error
    naming `who` when they are no array of numbers: strings, other objects, rows of other lengths."""
    try:
        array = np.asarray(values)
        if array.dtype.kind == "O":
            array = array.astype(np.float64)
    except (TypeError, ValueError, RuntimeError) as err:  # RuntimeError: a torch tensor that requires grad
        said = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise RobustcountError(f"{who} returned {what} that are no array of numbers ({said})") from None
    if array.dtype.kind not in "biuf":
        kind = "strings" if array.dtype.kind in "US" else f"{array.dtype.name} values"
        raise RobustcountError(f"{who} returned {what} that are not numbers but {kind} (the first: "
                               f"{array.flat[0].item()!r})")
    return array.astype(np.float64, copy=False)


def _check_array(values, shape: tuple[int, int], who: str, what: str) -> np.ndarray:
    values = as_numbers(values, who, what)
    if values.shape != shape:
        raise RobustcountError(f"{who} returned shape {values.shape}, expected {shape}")
    if not np.all(np.isfinite(values)):
        raise RobustcountError(f"{who} returned non-finite {what}")
    return values


def model_digest(model) -> str | None:
    """The model's weight digest when it has one (torch models), else None."""
    digest = getattr(model, "digest", None)
    return digest() if callable(digest) else None


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, numerically stable."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)
