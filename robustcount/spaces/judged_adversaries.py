"""Readers' judgments of adversaries in context, and the in-context validity of a space they give.

A source's precision (`robustcount.spaces.judged`) judges its pairs out of context; an attack
uses them in a sentence, several at a time. The judged set holds adversaries that attacks found
in given spaces against given models, each judged by readers, blind to where it came from, by
`VALIDITY_RULE`: valid when the adversary means what the original means and the original's label
is still right for it. A space's in-context validity is the share of its judged adversaries that
are valid, with a Wilson score interval, overall and by number of substitutions (1, 2, 3+).

The file (JSON lines, written by experiments/join_judged_adversaries.py): a header
{"record": "header", "format", "rule", "judged_by" (who the readers are, in words: language-model
readers are named as such), "readers", "agreement" (of the items several readers judged, how
many they all agreed on), "drawn" (how the adversaries were drawn), "spaces" (each
space's definition as its attack runs recorded it)}, then one line per adversary and space and
model whose run found it: {"record": "adversary", "id", "original", "adversary", "label",
"substitutions", "space", "model", "valid", "votes" (each reader's judgment), "notes" (a reader's
reason, where given)}. An adversary that
several runs found is judged once and appears once per run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.spaces.judged import Proportion
from robustcount.spaces.resources import ASSETS

FORMAT = "robustcount-judged-adversaries/1"
VALIDITY_RULE = (
    "Valid when, read in context, the altered text says the same thing as the original (same meaning: no word in "
    "the wrong sense, no broken idiom or fixed expression, no changed name or title, no shift in what is said or "
    "in its strength or polarity) and a human would still give it the original label; otherwise invalid. Grammar "
    "slips that leave the meaning intact (an inflection slightly off) do not by themselves make an item invalid.")
"""The rule the readers were given, word for word but for its layout (experiments/judged/README.md)."""
JUDGED_ADVERSARIES = ASSETS / "judged_adversaries" / "adversaries.jsonl"
BUCKETS = ("1", "2", "3+")
"""The numbers of substitutions validity is broken down by."""
_FIELDS = {"id": str, "original": str, "adversary": str, "label": str, "substitutions": int, "space": str,
           "model": str, "valid": bool, "votes": dict}


def bucket(substitutions: int) -> str:
    """The number of substitutions as validity is broken down by it: 1, 2 or 3+."""
    return str(substitutions) if substitutions < 3 else "3+"


@dataclass(frozen=True)
class JudgedAdversary:
    """One judged adversary as one run found it (see the module docstring)."""

    id: str
    original: str
    adversary: str
    label: str
    substitutions: int
    space: str
    model: str
    valid: bool
    votes: dict


@dataclass(frozen=True)
class JudgedSet:
    """A judged set of adversaries: the rule, who judged, each space's definition, the adversaries."""

    path: Path
    rule: str
    judged_by: str
    readers: tuple[str, ...]
    definitions: dict[str, dict]
    adversaries: tuple[JudgedAdversary, ...]

    def spaces_of(self, source_definition: dict) -> tuple[str, ...]:
        """The judged spaces built from this one source as it is defined now (a source whose table
        changed since is not credited with the judgments of the old one)."""
        return tuple(name for name, definition in self.definitions.items()
                     if definition.get("sources") == [source_definition])

    def models(self, space: str) -> tuple[str, ...]:
        return tuple(sorted({a.model for a in self.adversaries if a.space == space}))

    def validity(self, space: str, model: str | None = None) -> dict[str, Proportion | None]:
        """The in-context validity of `space` (against `model`, or every model): the share of its
        judged adversaries judged valid, for each of `BUCKETS` and "all" (None where it has none);
        an adversary that runs against several models found counts once."""
        found = list({a.id: a for a in self.adversaries if a.space == space and model in (None, a.model)}.values())
        groups = {name: [a for a in found if bucket(a.substitutions) == name] for name in BUCKETS}
        groups["all"] = found
        return {name: Proportion(sum(a.valid for a in group), len(group)) if group else None
                for name, group in groups.items()}


def read_judged_set(path: str | Path = JUDGED_ADVERSARIES) -> JudgedSet:
    """The judged set in `path` (its format checked: a one-line error naming the line)."""
    path = Path(path)
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = [json.loads(line) for line in lines]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RobustcountError(f"cannot read the judged adversaries {path}: {err}") from err
    header = rows[0] if rows and isinstance(rows[0], dict) else {}
    if header.get("record") != "header" or header.get("format") != FORMAT:
        raise RobustcountError(f"{path}: not a judged set of adversaries (its first line is no {FORMAT} header)")
    missing = [key for key in ("rule", "judged_by", "readers", "spaces") if key not in header]
    if missing:
        raise RobustcountError(f"{path}: the header lacks {', '.join(missing)}")
    adversaries = tuple(_adversary(row, path, number, header["spaces"]) for number, row in enumerate(rows[1:], 2))
    return JudgedSet(path, header["rule"], header["judged_by"], tuple(header["readers"]), header["spaces"],
                     adversaries)


def _adversary(row, path: Path, number: int, spaces: dict) -> JudgedAdversary:
    if not isinstance(row, dict) or row.get("record") != "adversary":
        raise RobustcountError(f"{path}:{number}: expected an adversary record")
    for key, kind in _FIELDS.items():
        if type(row.get(key)) is not kind:
            raise RobustcountError(f"{path}:{number}: {key} must be a {kind.__name__}, got {row.get(key)!r}")
    if row["substitutions"] < 1:
        raise RobustcountError(f"{path}:{number}: an adversary has at least one substitution")
    if row["space"] not in spaces:
        raise RobustcountError(f"{path}:{number}: space {row['space']!r} is not defined in the header")
    return JudgedAdversary(**{key: row[key] for key in _FIELDS})
