"""Join the blind adversaries, their key and the readers' judgments into the shipped judged set.

Reads, in each `--dir` (default experiments/judged; repeatable, each a set the readers judged
blind, its items numbered apart): blind.jsonl and key.jsonl (written by
experiments/adversaries_to_judge.py) and judgments.jsonl, one judgment a line: {"id", "valid"
(true or false), "reader", and optionally "why"}, each reader judging each item at most once. An item is valid when
most of its readers judged it valid (a tie is invalid); an item no reader judged is left out (and
counted). Writes the judged set `robustcount.spaces.judged_adversaries` reads (default: the
packaged one), whose header says the rule and, in `--judged-by`'s words, who judged: say it
honestly (language-model readers are named as such).

Run: `.venv/bin/python experiments/join_judged_adversaries.py --dir experiments/judged --dir
experiments/judged-contextual --judged-by "..."` (who judged, honestly).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from robustcount.spaces.judged_adversaries import FORMAT, JUDGED_ADVERSARIES, VALIDITY_RULE, read_judged_set

HERE = Path(__file__).resolve().parent


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def votes_of(judgments: list[dict], items: dict[str, dict]) -> tuple[dict, dict]:
    """Each item's votes by reader, the judgments checked against the items; and each item's
    readers' notes (a judgment's optional "why")."""
    votes: dict[str, dict[str, bool]] = defaultdict(dict)
    notes: dict[str, dict[str, str]] = defaultdict(dict)
    for number, row in enumerate(judgments, 1):
        item, reader, valid = row.get("id"), row.get("reader"), row.get("valid")
        if item not in items:
            raise SystemExit(f"judgment {number}: item {item!r} is not in the key")
        if not isinstance(reader, str) or not reader or type(valid) is not bool:
            raise SystemExit(f"judgment {number}: needs a reader and valid true or false, got {row}")
        if reader in votes[item]:
            raise SystemExit(f"judgment {number}: reader {reader} judged {item} twice")
        votes[item][reader] = valid
        if isinstance(row.get("why"), str):
            notes[item][reader] = row["why"]
    return votes, notes


def joined(sets: list[tuple[list[dict], list[dict], list[dict]]], judged_by: str) -> tuple[list[dict], int]:
    """The judged set's lines (header first) of the (blind, key, judgments) `sets`, and how many
    items no reader judged. A space several sets name must have the same definition in each (but for the seed of
    the runs that drew them: the first set's is kept)."""
    lines, unjudged, drawn, spaces, readers, several = [], 0, [], {}, set(), []
    for blind, key, judgments in sets:
        header, items = key[0], {item["id"]: item for item in key[1:]}
        for row in blind:
            item = items.get(row["id"], {})
            if [item.get(k) for k in ("original", "adversary", "label")] != [row[k] for k in ("original", "adversary", "label")]:
                raise SystemExit(f"blind item {row['id']} is not the key's")
        for name, definition in header["definitions"].items():
            if _unseeded(spaces.setdefault(name, definition)) != _unseeded(definition):
                raise SystemExit(f"space {name} has different definitions in two sets")
        drawn.append({k: v for k, v in header.items() if k not in ("record", "definitions")})
        votes, notes = votes_of(judgments, items)
        readers |= {reader for cast in votes.values() for reader in cast}
        several += [cast for cast in votes.values() if len(cast) > 1]
        lines += adversary_lines(items, votes, notes)
        unjudged += len(items) - sum(1 for i in items if votes.get(i))
    agreement = {"items_judged_by_several": len(several),
                 "items_all_agreed": sum(len(set(cast.values())) == 1 for cast in several)}
    head = {"record": "header", "format": FORMAT, "rule": VALIDITY_RULE, "judged_by": judged_by,
            "readers": sorted(readers), "agreement": agreement, "drawn": drawn[0] if len(drawn) == 1 else drawn,
            "spaces": spaces}
    return [head, *lines], unjudged


def _unseeded(definition: dict) -> dict:
    """A space's definition but for the run's seed (two sets drawn with different seeds)."""
    return {key: value for key, value in definition.items() if key != "seed"}


def adversary_lines(items: dict[str, dict], votes: dict, notes: dict) -> list[dict]:
    """One line per judged item and (space, model) whose run found it; valid when most of its
    readers said so (a tie is invalid)."""
    lines = []
    for item_id, item in items.items():
        cast = votes.get(item_id)
        if not cast:
            continue
        valid = sum(cast.values()) * 2 > len(cast)
        for found in item["found_by"]:
            lines.append({"record": "adversary", "id": item_id, "original": item["original"],
                          "adversary": item["adversary"], "label": item["label"],
                          "substitutions": item["substitutions"], "space": found["space"], "model": found["model"],
                          "valid": valid, "votes": dict(sorted(cast.items())),
                          "notes": dict(sorted(notes.get(item_id, {}).items()))})
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, action="append",
                        help="A judged set's folder (repeatable; default: experiments/judged).")
    parser.add_argument("--judgments", type=Path, help="With one --dir: its judgments (default: judgments.jsonl in it).")
    parser.add_argument("--judged-by", required=True, help="Who judged, in words, for the file's header.")
    parser.add_argument("--out", type=Path, default=JUDGED_ADVERSARIES)
    args = parser.parse_args()
    folders = args.dir or [HERE / "judged"]
    if args.judgments and len(folders) > 1:
        raise SystemExit("--judgments names the judgments of one --dir")
    sets = [(read_jsonl(folder / "blind.jsonl"), read_jsonl(folder / "key.jsonl"),
             read_jsonl(args.judgments or folder / "judgments.jsonl")) for folder in folders]
    lines, unjudged = joined(sets, args.judged_by)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    judged = read_judged_set(args.out)  # the file as source-quality reads it
    agreement = lines[0]["agreement"]
    print(f"{len(judged.adversaries)} adversary lines by {len(judged.readers)} readers -> {args.out}; "
          f"{unjudged} items unjudged, left out; of {agreement['items_judged_by_several']} items judged by several "
          f"readers, all agreed on {agreement['items_all_agreed']}")


if __name__ == "__main__":
    main()
