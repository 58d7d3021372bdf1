"""Draw the blind set of adversaries that readers judge for in-context validity.

For each model and each space of the judged set `--set` (`SETS`), one PDP attack run (`robustcount
attack --recipe pdp`) on a seeded sample of demo:test (the set's `sample`, `--seed`), each example under
`--time-limit` seconds; the commands are recorded in the key. Of each run's adversaries,
`--per-cell` are drawn with a seed derived from `--seed`, the model and the space, spread over the
numbers of substitutions (1, 2, 3 and more, in turn, as far as each has adversaries). An
adversary that several runs found (the same original and adversary text) is judged once. The
items are shuffled and numbered (a0001, a0002, ... in the first set)

Writes, in `--out` (default experiments/judged):

- blind.jsonl: one item a line, {"id", "original", "adversary", "label"} (the original's gold
  label): no space, model or number of substitutions, so that a reader cannot tell where it came
  from;
- key.jsonl: a header line (the seed, the sample, each space's definition as its runs recorded it,
  the commands) and one line an item: its id, the
  texts, the label, the example id, the number of substitutions, and each (space, model) whose run
  found it.

The run files go to `--runs` (default experiments/judged/runs, not versioned); a run whose file is
complete is not run again. The readers' judgments are joined with the key by
experiments/join_judged_adversaries.py.

Run: `OMP_NUM_THREADS=1 .venv/bin/python experiments/adversaries_to_judge.py` (about 10 minutes on
one CPU core).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from robustcount.seeding import derive_seed
from robustcount.spaces.judged_adversaries import JUDGED_ADVERSARIES, read_judged_set

CONTEXT = ("--keep-names", "--keep-expressions")
WIDE = ("--source", "synonyms", "--source", "counter-fitted", "--source", "wordnet")


@dataclass(frozen=True)
class JudgedSet:
    """Which models' adversaries in which spaces a set draws, and how many demo:test examples each
    space's runs attack (PDP breaks about a quarter of them in the synonym table's small spaces
    and about two thirds in the others); its items are numbered `prefix`0001, ..., apart from
    other sets'."""

    prefix: str
    models: tuple[str, ...]
    spaces: dict[str, tuple[str, ...]]
    sample: dict[str, int]
    unseen: bool = False
    """Draw only adversaries of texts the shipped judged set does not hold (its thresholds were
    chosen on those)."""


SETS = {
    "first": JudgedSet(
        "a", ("lstm-rt", "minilm-rt-ft", "cnn-rt"),
        {"synonyms": ("--source", "synonyms"), "synonyms --same-pos": ("--source", "synonyms", "--same-pos"),
         "counter-fitted": ("--source", "counter-fitted"), "wordnet": ("--source", "wordnet")},
        {"synonyms": 250, "synonyms --same-pos": 250, "counter-fitted": 100, "wordnet": 100}),
    "contextual": JudgedSet(
        "c", ("lstm-rt", "minilm-rt-ft"),
        {"synonyms": ("--source", "synonyms"),
         "synonyms in context": ("--source", "synonyms", *CONTEXT, "--context-lm-min", "-4",
                                 "--context-similarity-min", "0.85"),
         "wide pool in context": (*WIDE, *CONTEXT, "--context-lm-min", "-4", "--context-similarity-min", "0.85"),
         "wide pool in context, loose": (*WIDE, *CONTEXT, "--context-lm-min", "-6",
                                         "--context-similarity-min", "0.8")},
        {"synonyms": 100, "synonyms in context": 100, "wide pool in context": 50, "wide pool in context, loose": 50}),
    "heldout": JudgedSet(
        "h", ("lstm-rt", "minilm-rt-ft"),
        {"synonyms": ("--source", "synonyms"),
         "synonyms, names and expressions": ("--source", "synonyms", *CONTEXT),
         "synonyms in context": ("--source", "synonyms", *CONTEXT, "--context-lm-min", "-4",
                                 "--context-similarity-min", "0.85")},
        {"synonyms": 120, "synonyms, names and expressions": 120, "synonyms in context": 200}),
    "word-sense": JudgedSet(
        "w", ("lstm-rt", "minilm-rt-ft"),
        {"synonyms": ("--source", "synonyms"),
         "wide pool, word sense 0.7": (*WIDE, "--context-word-similarity-min", "0.7"),
         "wide pool, names, word sense 0.7": (*WIDE, "--keep-names", "--context-word-similarity-min", "0.7")},
        {"synonyms": 120, "wide pool, word sense 0.7": 80, "wide pool, names, word sense 0.7": 80}, unseen=True),
}
"""The judged sets: `first` (experiments/judged), `contextual` (experiments/judged-contextual,
thresholds chosen on another sample by experiments/contextual_filters.py) and `heldout`
(experiments/judged-heldout: the points of the validity-coverage curve, on examples drawn after
the thresholds were chosen) and `word-sense` (experiments/judged-word-sense: the word-in-context
similarity filter at the threshold experiments/contextual_tradeoff.py chose on the judged set, on
texts outside it)."""
HERE = Path(__file__).resolve().parent


def attack_command(model: str, space: str, args, output: Path) -> list[str]:
    """The `robustcount attack` command of one run."""
    judged = SETS[args.set]
    return ["robustcount", "attack", "--model", model, "--recipe", "pdp", "--data", "demo:test",
            "--sample", str(judged.sample[space]), "--seed", str(args.seed), *judged.spaces[space],
            "--time-limit", str(args.time_limit), "--workers", str(args.workers), "--output", str(output),
            "--overwrite"]


def run_attack(command: list[str], output: Path, expected: int) -> tuple[dict, list[dict]]:
    """The header and example records of `output`, running `command` first unless it holds
    `expected` of them."""
    if not _complete(output, expected):
        output.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "robustcount", *command[1:]], check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    return records[0], [r for r in records if r.get("record") == "example"]


def _complete(output: Path, expected: int) -> bool:
    if not output.exists():
        return False
    lines = output.read_text(encoding="utf-8").splitlines()
    return sum('"record": "example"' in line for line in lines) == expected


def _relative(part: str) -> str:
    """A command's argument, a path inside the repository written from its root."""
    return part.removeprefix(str(HERE.parent) + "/")


def bucket(substitutions: int) -> str:
    """The substitution count as reports break it down: 1, 2, 3+."""
    return str(substitutions) if substitutions < 3 else "3+"


def draw(adversaries: list[dict], size: int, seed: int) -> list[dict]:
    """`size` of `adversaries` (records of successful examples), drawn uniformly within each
    number of substitutions (1, 2, 3+), taking from each in turn while it has any."""
    rng = random.Random(seed)
    pools = {}
    for record in sorted(adversaries, key=lambda r: r["id"]):
        pools.setdefault(bucket(record["distance"]), []).append(record)
    for pool in pools.values():
        rng.shuffle(pool)
    drawn = []
    while len(drawn) < size and any(pools.values()):
        for name in ("1", "2", "3+"):
            if pools.get(name) and len(drawn) < size:
                drawn.append(pools[name].pop())
    return drawn


def collect(args) -> tuple[dict, list[dict]]:
    """Run every (model, space) attack; the header of the key and its items, shuffled and numbered."""
    items: dict[tuple[str, str], dict] = {}
    commands, definitions, judged = [], {}, SETS[args.set]
    judged_texts = {a.original for a in read_judged_set(JUDGED_ADVERSARIES).adversaries} if judged.unseen else set()
    for model in judged.models:
        for space in judged.spaces:
            output = args.runs / f"{model}_{space.replace(' --', '_')}.jsonl"
            command = attack_command(model, space, args, output)
            commands.append(" ".join(_relative(part) for part in command))
            header, records = run_attack(command, output, judged.sample[space])
            if definitions.setdefault(space, header["space"]) != header["space"]:
                raise SystemExit(f"{output}: space {space} is not the one the other runs searched")
            found = [r for r in records if r["status"] == "success" and r["input"] not in judged_texts]
            drawn = draw(found, args.per_cell, derive_seed(args.seed, "judge-adversaries", model, space))
            print(f"{model:14s} {space:22s} {len(found):3d} adversaries of {len(records)}, {len(drawn)} drawn",
                  file=sys.stderr)
            for record in drawn:
                item = items.setdefault((record["input"], record["adversarial"]), {
                    "original": record["input"], "adversary": record["adversarial"], "label": record["gold"],
                    "example": record["id"], "substitutions": record["distance"], "found_by": []})
                item["found_by"].append({"space": space, "model": model})
    order = sorted(items)
    random.Random(derive_seed(args.seed, "judge-adversaries", "shuffle")).shuffle(order)
    numbered = [{"id": f"{judged.prefix}{i:04d}", **items[key]} for i, key in enumerate(order, 1)]
    header = {"record": "header", "data": "demo:test", "set": args.set, "sample": judged.sample, "seed": args.seed,
              "time_limit": args.time_limit, "per_cell": args.per_cell, "models": list(judged.models),
              "spaces": {name: list(flags) for name, flags in judged.spaces.items()}, "definitions": definitions,
              "commands": commands}
    return header, numbered


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "judged")
    parser.add_argument("--runs", type=Path, default=HERE / "judged" / "runs")
    parser.add_argument("--per-cell", type=int, default=40, help="Adversaries drawn per (model, space).")
    parser.add_argument("--time-limit", type=float, default=5.0, help="Seconds per example.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", choices=sorted(SETS), default="first", help="Which models and spaces (SETS).")
    parser.add_argument("--workers", type=int, default=1, help="Worker processes of each attack run.")
    args = parser.parse_args()
    header, items = collect(args)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "blind.jsonl", [{key: item[key] for key in ("id", "original", "adversary", "label")}
                                           for item in items])
    write_jsonl(args.out / "key.jsonl", [header, *items])
    print(f"{len(items)} adversaries to judge -> {args.out / 'blind.jsonl'}; key -> {args.out / 'key.jsonl'}")


if __name__ == "__main__":
    main()
