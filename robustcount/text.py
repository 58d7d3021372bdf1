"""Texts as words and separators, with a lossless round trip.

Rule: a *word* is a maximal run of letters, digits and underscores (Unicode `\\w`) and combining
diacritical marks (U+0300 to U+036F), possibly joined by single inner apostrophes or hyphens ("don't", "well-made").
Everything else (spaces, punctuation, symbols, emoji) belongs to the *separators* between words
and is never perturbed. A text of n words has n + 1 separators and

    separators[0] + words[0] + separators[1] + ... + words[n-1] + separators[n] == original.

An input to a classifier is either a text or a (premise, hypothesis) pair; only the hypothesis of
a pair is split and perturbed, the premise is fixed context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Input = str | tuple[str, str]
"""What a classifier reads: a single text, or a (premise, hypothesis) pair."""

_WORD = re.compile(r"[\w\u0300-\u036f]+(?:['’\-][\w\u0300-\u036f]+)*")


@dataclass(frozen=True)
class Tokens:
    """A text split into `words` and the `separators` around them (one more separator than words)."""

    words: tuple[str, ...]
    separators: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.separators) != len(self.words) + 1:
            raise ValueError("a text of n words needs n + 1 separators")

    def join(self, words: tuple[str, ...] | list[str] | None = None) -> str:
        """The text with `words` in place of the original words (the original text if None)."""
        words = self.words if words is None else words
        if len(words) != len(self.words):
            raise ValueError(f"expected {len(self.words)} words, got {len(words)}")
        parts = [self.separators[0]]
        for word, sep in zip(words, self.separators[1:]):
            parts.append(word)
            parts.append(sep)
        return "".join(parts)

    def spans(self) -> list[tuple[int, int]]:
        """Character span (start, end) of each word in the original text."""
        spans, pos = [], len(self.separators[0])
        for word, sep in zip(self.words, self.separators[1:]):
            spans.append((pos, pos + len(word)))
            pos += len(word) + len(sep)
        return spans

    def without(self, index: int) -> str:
        """The text with word `index` and the separator after it deleted (leave-one-out)."""
        if not 0 <= index < len(self.words):
            raise IndexError(index)
        words = list(self.words)
        seps = list(self.separators)
        del words[index]
        del seps[index + 1]  # keep the separator before the word, drop the one after it
        return Tokens(tuple(words), tuple(seps)).join()


def tokenize(text: str) -> Tokens:
    """Split `text` into words and separators, losslessly."""
    words, separators, pos = [], [], 0
    for match in _WORD.finditer(text):
        separators.append(text[pos : match.start()])
        words.append(match.group())
        pos = match.end()
    separators.append(text[pos:])
    return Tokens(tuple(words), tuple(separators))


def words_between(tokens: Tokens, words: list[str], start: int, end: int) -> str:
    """`words[start:end]` (the words of `tokens`, some replaced) joined by the separators of
    `tokens` between them: the text of that window of words."""
    parts = []
    for i in range(start, end):
        parts.append(words[i])
        if i < end - 1:
            parts.append(tokens.separators[i + 1])
    return "".join(parts)


def perturbed_part(item: Input) -> str:
    """The part of an input that perturbations act on: the text, or a pair's hypothesis."""
    return item[1] if isinstance(item, tuple) else item


def replace_perturbed_part(item: Input, new_text: str) -> Input:
    """`item` with its perturbed part replaced by `new_text` (a pair keeps its premise)."""
    return (item[0], new_text) if isinstance(item, tuple) else new_text
