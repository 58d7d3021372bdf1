"""Readers' judgments of (word, neighbour) pairs, and the precision of a source they give.

The sample (drawn by experiments/sample_pairs_to_judge.py): for each source, a seeded uniform
sample of the pairs it offers for a list of words; pairs that several sources offered are judged
once, and the pairs are shuffled so that a reader cannot tell which source offered which. The key
(`Key`: id, word, neighbour, the sources whose sample drew it) records each source's definition,
so that a source whose table has changed since is not credited with another table's judgments.

The judgments: one TSV per reader, with the judging rule at the top (`#` lines) and the columns
id, word, neighbour, judgment (yes or no) and an optional note. A source's precision is the share
of its own sample that most readers judged yes (or that one reader did), with a Wilson score
interval; Fleiss' kappa says how far the readers agree.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

from robustcount.errors import RobustcountError
from robustcount.spaces.resources import ASSETS

JUDGED = ASSETS / "judged_pairs"
PAIR_SOURCES = JUDGED / "sources.tsv"
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Proportion:
    """`successes` of `trials`, with the Wilson score interval at `CONFIDENCE`."""

    successes: int
    trials: int

    @property
    def estimate(self) -> float:
        return self.successes / self.trials

    @property
    def interval(self) -> tuple[float, float]:
        z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
        n, p = self.trials, self.estimate
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return max(0.0, centre - half), min(1.0, centre + half)

    def as_dict(self) -> dict:
        low, high = self.interval
        return {"successes": self.successes, "trials": self.trials, "estimate": self.estimate,
                "low": low, "high": high, "confidence": CONFIDENCE}


@dataclass(frozen=True)
class SampledPair:
    """One pair to judge, with the sources whose sample drew it."""

    id: str
    word: str
    neighbour: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Key:
    """The key of a judged sample: how it was drawn, each source's definition when it was, and its
    pairs with the sources whose sample drew them."""

    descriptions: tuple[str, ...]
    definitions: dict[str, dict]
    pairs: tuple[SampledPair, ...]


def read_key(path: str | Path) -> Key:
    comments, rows = _rows(Path(path), ("id", "word", "neighbour", "sources"))
    definitions = {}
    for line in comments:
        if line.startswith("source "):
            name, _, definition = line.removeprefix("source ").partition(" ")
            definitions[name] = json.loads(definition)
    return Key(tuple(line for line in comments if not line.startswith("source ")), definitions,
               tuple(SampledPair(row[0], row[1], row[2], tuple(filter(None, row[3].split(",")))) for row in rows))


def _rows(path: Path, columns: tuple[str, ...]) -> tuple[list[str], list[list[str]]]:
    """(comment lines, rows) of a TSV whose header starts with `columns`."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise RobustcountError(f"cannot read {path}: {err}") from err
    comments = [line[1:].strip() for line in lines if line.startswith("#")]
    body = [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]
    if not body or tuple(body[0][: len(columns)]) != columns:
        raise RobustcountError(f"{path}: expected a header starting {chr(9).join(columns)!r}")
    for number, row in enumerate(body[1:], 2):
        if len(row) < len(columns):
            raise RobustcountError(f"{path}: row {number} has {len(row)} columns, expected {len(columns)}")
    return comments, body[1:]


@dataclass(frozen=True)
class Judgments:
    """The judged sample: each source's definition at sampling time, the ids of each source's
    sample, the readers, and each pair's votes (one per reader: True yes, False no, None unjudged)."""

    definitions: dict[str, dict]
    samples: dict[str, tuple[str, ...]]
    readers: tuple[str, ...]
    votes: dict[str, tuple[bool | None, ...]]

    def precision(self, name: str, definition: dict, reader: str | None = None) -> Proportion | None:
        """The judged precision of the source sampled as `name`: the share of its sampled pairs
        that most of their readers judged yes (a tie is no), or that `reader` did; None when it was
        not sampled, its `definition` is not the one it had then, or nobody judged its pairs."""
        if self.definitions.get(name) != definition:
            return None
        column = None if reader is None else self.readers.index(reader)
        verdicts = [_majority(self.votes[i] if column is None else self.votes[i][column:column + 1])
                    for i in self.samples.get(name, ())]
        verdicts = [v for v in verdicts if v is not None]
        return Proportion(sum(verdicts), len(verdicts)) if verdicts else None

    def agreement(self) -> float | None:
        """Fleiss' kappa of the readers over the pairs all of them judged (None with one reader)."""
        n = len(self.readers)
        yes = [sum(votes) for votes in self.votes.values() if None not in votes]
        if n < 2 or not yes:
            return None
        share = sum(yes) / (n * len(yes))
        observed = sum(y * (y - 1) + (n - y) * (n - y - 1) for y in yes) / (len(yes) * n * (n - 1))
        expected = share ** 2 + (1 - share) ** 2
        return (observed - expected) / (1 - expected) if expected < 1 else 1.0


def _majority(votes: tuple[bool | None, ...]) -> bool | None:
    cast = [v for v in votes if v is not None]
    return None if not cast else sum(cast) * 2 > len(cast)


def judged_files() -> tuple[Path, ...]:
    """The packaged readers' judgments (assets/judged_pairs/reader_*.tsv)."""
    return tuple(sorted(JUDGED.glob("reader_*.tsv")))


def read_judgments(readers=None, key: str | Path = PAIR_SOURCES) -> Judgments:
    """Join each reader's judgments (default: the packaged ones) to the key by id; a reader is
    named by the file's stem, and a pair a reader left unjudged has no vote of theirs."""
    readers = [Path(r) for r in (judged_files() if readers is None else readers)]
    sample = read_key(key)
    pairs = {p.id: (p.word, p.neighbour) for p in sample.pairs}
    samples = {name: tuple(p.id for p in sample.pairs if name in p.sources) for name in sample.definitions}
    votes = {i: [None] * len(readers) for i in pairs}
    for column, judged in enumerate(readers):
        seen = set()
        for row in _rows(judged, ("id", "word", "neighbour", "judgment"))[1]:
            if row[0] in seen:
                raise RobustcountError(f"{judged}: pair {row[0]} is judged twice")
            seen.add(row[0])
            if pairs.get(row[0]) != (row[1], row[2]):
                raise RobustcountError(f"{judged}: pair {row[0]} {row[1]} -> {row[2]} is not in the key {key}")
            verdict = row[3].strip().lower()
            if verdict not in ("yes", "no"):
                raise RobustcountError(f"{judged}: pair {row[0]}: judgment must be yes or no, got {row[3]!r}")
            votes[row[0]][column] = verdict == "yes"
    return Judgments(sample.definitions, samples, tuple(r.stem for r in readers),
                     {i: tuple(v) for i, v in votes.items()})
