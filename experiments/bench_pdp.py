"""PDP's model calls against the greedy baseline's, and its distances against the oracle's minimum,
per zoo model and length bucket (docs/attacks/pdp-cost.md).

The space is one of SPACES (`--space`; by default Jia et al.'s counter-fitted table with stop words
left alone, where PDP's cost showed; `comparison` is experiments/attack_comparison.py's). Per
model and bucket, `--examples`
demo:test examples of that many words (a seeded sample; `whole` draws from every length) are
attacked by three methods, each with a query engine of its own: the greedy baseline (TextFooler's
search without its POS and similarity checks), PDP (K = 10, sensitivity order) and the exhaustive
oracle (distances 1..3, at most `--oracle-points` points). The minimum is known where the oracle
found an adversary, or where it cleared every distance below the one at which PDP found one.

Every result is cached, one JSON line per example, under `--cache` (runs/bench_pdp by default) in
a file named by model, bucket, seed, sample size and method, so an interrupted run resumes where it
stopped and a second table over the same samples reruns nothing. `--label` names a PDP variant
(its cache files are apart), so that figures before and after a change can stand side by side.

Run: `.venv/bin/python experiments/bench_pdp.py --seed 1 --apart 0 20 --examples 30 --models lstm-rt cnn-rt`
(prints the tables; `--markdown FILE` writes them too; `--apart SEED N` leaves the tuning sample
out, `--set NAME=VALUE` tries another constant of PDP's). The figures and the exact commands:
docs/attacks/pdp-cost.md.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from statistics import fmean

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from robustcount.attacks import pdp
from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import SKIPPED, SUCCESS, run_attack
from robustcount.attacks.textfooler import textfooler_attack
from robustcount.data import label_index, load_demo
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.runs.tables import format_table
from robustcount.spaces.build import DEFAULT_SOURCE, build_space
from robustcount.spaces.sources import make_source
from robustcount.text import tokenize

BUCKETS = {"<=10": (1, 10), "11-15": (11, 15), "16-25": (16, 25), "whole": (1, 10**9)}
MODELS = ("lstm-rt", "cnn-rt", "bow-rt", "tfidf-rt", "vader", "minilm-rt", "minilm-rt-ft")
SPACES = {"counter-fitted": ("counter-fitted", dict(stop_words=ENGLISH_STOP_WORDS)),
          "comparison": (DEFAULT_SOURCE, dict(stop_words=ENGLISH_STOP_WORDS, max_candidates=5)),
          "default": (DEFAULT_SOURCE, {})}
"""Per space: its source and filters. Jia et al.'s whole counter-fitted table with stop words left
alone (TextFooler's preset; 7.2 positions and 39 candidates a demo:test example), the attack
comparison's space (the default source, stop words left alone, at most 5 candidates a word; 3.8
positions, 7.3 candidates) and the default space of every command (the default source, no filter)."""


def sample(bucket: str, examples: int, seed: int, apart: tuple[int, int] | None = None):
    """`examples` demo:test examples of the bucket's lengths, drawn with `seed`; never one of the
    sample that `apart` = (seed, examples) draws (the tuning sample, for held-out figures)."""
    low, high = BUCKETS[bucket]
    excluded = {e.id for e in sample(bucket, apart[1], apart[0])} if apart else set()
    fitting = [e for e in load_demo("test") if low <= len(tokenize(e.input).words) <= high and e.id not in excluded]
    return random.Random(f"{seed}:{bucket}").sample(fitting, min(examples, len(fitting)))


def methods(oracle_points: int):
    return {
        "greedy": (textfooler_attack, dict(setting="paper", pos_check=False, similarity_check=False)),
        "pdp": (pdp_attack, dict(beam=10, order="sensitivity")),
        "oracle": (exhaustive_attack, dict(radius=3, max_points=oracle_points)),
    }


def cached_results(cache: Path, space_name: str, model_name: str, bucket: str, seed: int, examples: int, apart,
                   method: str, label: str, oracle_points: int) -> list[dict]:
    """Each sampled example's result for `method`, computed for the examples the cache file lacks."""
    tag = label if method == "pdp" else (f"{oracle_points}" if method == "oracle" else "")
    drawn = f"seed{seed}.n{examples}" + (f".apart{apart[0]}x{apart[1]}" if apart else "")
    path = cache / space_name / f"{model_name}.{bucket.replace('<=', 'le')}.{drawn}.{method}{'.' + tag if tag else ''}.jsonl"
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["id"]] = row
    chosen = sample(bucket, examples, seed, apart)
    missing = [e for e in chosen if str(e.id) not in done]
    if missing:
        model = load_model(model_name, device="cpu")
        source_name, filters = SPACES[space_name]
        (source,) = make_source(source_name)
        attack, options = methods(oracle_points)[method]
        engine = QueryEngine(model)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as out:
            for example in missing:
                space = build_space(example.input, [source], **filters)
                gold = label_index(example.label, model.labels)
                result = run_attack(method, attack, engine, space, gold, **options)
                row = {"id": str(example.id), "words": len(tokenize(example.input).words), "status": result.status,
                       "distance": result.distance, "cleared": result.cleared,
                       "model_calls": result.queries["model_calls"],
                       "gradient_calls": result.queries["gradient_calls"], "seconds": result.seconds}
                out.write(json.dumps(row) + "\n")
                out.flush()
                done[row["id"]] = row
    return [done[str(e.id)] for e in chosen]


def minimum_known(oracle: dict, pdp: dict) -> int | None:
    """The fewest substitutions of an adversary, where the oracle's run shows it."""
    if oracle["status"] == SUCCESS:
        return oracle["distance"]
    if pdp["status"] == SUCCESS and oracle["cleared"] is not None and pdp["distance"] == oracle["cleared"] + 1:
        return pdp["distance"]
    return None


def bucket_row(greedy: list[dict], pdp: list[dict], oracle: list[dict]) -> dict:
    attacked = [i for i, g in enumerate(greedy) if g["status"] != SKIPPED]
    known = [(i, m) for i in attacked if (m := minimum_known(oracle[i], pdp[i])) is not None]
    calls = {name: sum(rows[i]["model_calls"] for i in attacked) for name, rows in (("greedy", greedy), ("pdp", pdp))}
    broken = [i for i in attacked if pdp[i]["status"] == SUCCESS]
    by_distance = defaultdict(list)
    for i in attacked:
        by_distance[pdp[i]["distance"] if pdp[i]["status"] == SUCCESS else "none"].append(pdp[i]["model_calls"])
    return {
        "attacked": len(attacked),
        "greedy_calls": calls["greedy"] / max(1, len(attacked)),
        "pdp_calls": calls["pdp"] / max(1, len(attacked)),
        "ratio": calls["pdp"] / calls["greedy"] if calls["greedy"] else None,
        "pdp_gradients": fmean(pdp[i]["gradient_calls"] for i in attacked) if attacked else 0.0,
        "pdp_broken": len(broken),
        "greedy_broken": sum(greedy[i]["status"] == SUCCESS for i in attacked),
        "known": len(known),
        "pdp_at_minimum": sum(pdp[i]["status"] == SUCCESS and pdp[i]["distance"] == m for i, m in known),
        "greedy_at_minimum": sum(greedy[i]["status"] == SUCCESS and greedy[i]["distance"] == m for i, m in known),
        "unbreakable_share": (sum(by_distance.get("none", [])) / calls["pdp"]) if calls["pdp"] else 0.0,
        "calls_by_distance": {str(d): (len(v), fmean(v)) for d, v in sorted(by_distance.items(), key=str)},
        "missed": [(pdp[i]["id"], m, pdp[i]["distance"]) for i, m in known
                   if not (pdp[i]["status"] == SUCCESS and pdp[i]["distance"] == m)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--buckets", nargs="+", default=list(BUCKETS), choices=list(BUCKETS))
    parser.add_argument("--examples", type=int, default=30, help="sampled examples per model and bucket")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--space", default="counter-fitted", choices=SPACES)
    parser.add_argument("--apart", type=int, nargs=2, metavar=("SEED", "EXAMPLES"),
                        help="leave out the sample this seed and size draw (the tuning sample)")
    parser.add_argument("--oracle-points", type=int, default=5000)
    parser.add_argument("--label", default="current", help="names the PDP variant's cache files")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                        help="tuning: override a constant of robustcount.attacks.pdp (name the variant with --label)")
    parser.add_argument("--cache", type=Path, default=Path("runs/bench_pdp"))
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    for setting in args.set:
        name, value = setting.split("=")
        setattr(pdp, name, type(getattr(pdp, name))(value))
    rows, where = [], []
    totals = defaultdict(int)
    for model_name in args.models:
        for bucket in args.buckets:
            results = {m: cached_results(args.cache, args.space, model_name, bucket, args.seed, args.examples, args.apart, m, args.label,
                                         args.oracle_points) for m in ("greedy", "pdp", "oracle")}
            r = bucket_row(results["greedy"], results["pdp"], results["oracle"])
            for key in ("known", "pdp_at_minimum", "greedy_at_minimum"):
                totals[key] += r[key]
            rows.append([model_name, bucket, r["attacked"], f"{r['greedy_calls']:.1f}", f"{r['pdp_calls']:.1f}",
                         f"{r['ratio']:.2f}" if r["ratio"] is not None else "-", f"{r['pdp_gradients']:.2f}",
                         f"{r['greedy_broken']}/{r['pdp_broken']}", f"{r['pdp_at_minimum']}/{r['known']}",
                         f"{r['greedy_at_minimum']}/{r['known']}", f"{100 * r['unbreakable_share']:.0f}%"])
            where.append([model_name, bucket, "  ".join(f"{d}: {n} x {c:.0f}" for d, (n, c) in r["calls_by_distance"].items()),
                          " ".join(f"{i}({m}->{d})" for i, m, d in r["missed"])])
    table = format_table(["model", "words", "attacked", "greedy calls/ex", "PDP calls/ex", "PDP/greedy",
                          "PDP gradients/ex", "broken greedy/PDP", "PDP at min", "greedy at min",
                          "PDP calls on unbroken"], rows)
    calls = format_table(["model", "words", "PDP's distance: examples x calls each", "missed (id, min -> PDP)"], where)
    share = totals["pdp_at_minimum"] / totals["known"] if totals["known"] else float("nan")
    drawn = f", none of seed {args.apart[0]}'s {args.apart[1]}" if args.apart else ""
    lines = [f"{args.space} space, seed {args.seed}{drawn}, {args.examples} sampled examples per model and bucket, PDP variant "
             f"{args.label!r}, oracle at most {args.oracle_points} points", "",
             table, "", f"PDP at the oracle's minimum: {totals['pdp_at_minimum']}/{totals['known']} ({100 * share:.1f}%); "
             f"greedy {totals['greedy_at_minimum']}/{totals['known']}", "", calls, ""]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
