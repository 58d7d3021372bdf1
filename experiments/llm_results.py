"""SmolLM2 (`--model smollm2`) as the classifier under test, measured on demo:test, written to
docs/llm/results.md.

Every figure comes from a `robustcount` run on a seeded sample of demo:test (run files under
`runs/llm/`; a run already there is reused, so an interrupted script continues): accuracy with and
without content-free calibration, and minilm-rt-ft's on the same examples; PDP, TextFooler and
DeepWordBug attacks; certify at r = 1 and 2; PR estimates (share above 0.9); model calls and
seconds per example. The prefix-cache speed-up is measured in this process: the points certify
and estimate evaluate (each example's space at r <= 2, enumerated, and uniform samples), run
through the model with the key/value cache reuse and with the bare batched forward, alternating,
the same points in the same batches. Run (minutes on one core):

    .venv/bin/python experiments/llm_results.py --accuracy 50 --attack 10 --certify 20 --estimate 6
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

import robustcount.commands  # noqa: F401  (registers the commands whose run files are read)
from robustcount.data import DataSpec
from robustcount.models.zoo import load_model
from robustcount.runs.files import read_run
from robustcount.runs.summaries import seconds_by_index
from robustcount.spaces.build import SpaceSpec
from robustcount.text import perturbed_part, tokenize

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "runs" / "llm"
PAGE = ROOT / "docs" / "llm" / "results.md"
SEED = 0
TIME_LIMIT = 600
"""Seconds per example for certify and estimate (an example past it is undecided, and counted so)."""


def robustcount(name: str, *arguments: str) -> tuple[dict, Path]:
    """The summary of `robustcount ARGUMENTS --json` writing runs/llm/NAME.jsonl (reused when complete)."""
    out = RUNS / f"{name}.jsonl"
    done = subprocess.run([sys.executable, "-m", "robustcount", *arguments, "--json", "--output", str(out),
                           "--resume"], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if done.returncode:
        raise SystemExit(f"robustcount {' '.join(arguments)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), out


def per_example(out: Path, summary: dict) -> str:
    """Model calls and wall seconds per example of a run (from its timings)."""
    run = read_run(out)
    seconds = seconds_by_index(run)
    calls = sum(timing["model_calls"] for timing in run.timings if timing.get("record") == "chunk")
    return f"{calls / summary['examples']:.0f} | {sum(seconds.values()) / max(len(seconds), 1):.1f}"


def accuracy_rows(n: int, split: str = "test", models: tuple[str, ...] = ("smollm2", "minilm-rt-ft")) -> list[str]:
    """Accuracy on a sample of demo:SPLIT (the calibration is chosen on demo:train, reported on demo:test)."""
    data = ("--data", f"demo:{split}", "--sample", str(n), "--seed", str(SEED))
    rows = []
    for label, model in (("smollm2, content-free calibration (default)", ("--model", "smollm2")),
                         ("smollm2, uncalibrated", ("--model", "smollm2", "--calibration", "none")),
                         ("minilm-rt-ft", ("--model", "minilm-rt-ft"))):
        if model[1] not in models:
            continue
        summary, out = robustcount(f"evaluate-{split}-{model[1]}-{model[-1]}-{n}", "evaluate", *model, *data)
        low, high = summary["ci95"]
        rows.append(f"| {label} | demo:{split} | {summary['examples']} | {summary['accuracy']:.3f} | "
                    f"[{low:.3f}, {high:.3f}] | {per_example(out, summary)} |")
    return rows


def attack_rows(n: int) -> list[str]:
    rows = []
    for model in ("smollm2", "minilm-rt-ft"):
        for recipe in ("pdp", "textfooler", "deepwordbug"):
            summary, out = robustcount(f"attack-{model}-{recipe}-{n}", "attack", "--model", model, "--recipe", recipe,
                                       "--data", "demo:test", "--sample", str(n), "--seed", str(SEED))
            rows.append(f"| {model} | {recipe} | {summary['attacked']} of {summary['examples']} | "
                        f"{summary['success_rate']:.3f} | {summary['mean_substitutions'] or 0:.2f} | "
                        f"{summary['accuracy_under_attack']:.3f} | {per_example(out, summary)} |")
    return rows


def proof_rows(certify: int, estimate: int) -> list[str]:
    rows = []
    for model in ("smollm2", "minilm-rt-ft"):
        summary, out = robustcount(f"certify-{model}-{certify}", "certify", "--model", model, "--radius", "2",
                                   "--time-limit", str(TIME_LIMIT), "--data", "demo:test", "--sample", str(certify),
                                   "--seed", str(SEED))
        share = summary["certified_share"]
        rows.append(f"| {model} | certify, r <= 2 | {summary['examples']} (undecided {summary['undecided']}, "
                    f"misclassified {summary['misclassified']}) | r = 1: {share['1']:.3f}, r = 2: {share['2']:.3f} | "
                    f"{per_example(out, summary)} |")
        verified = subprocess.run([sys.executable, "-m", "robustcount", "verify", str(out)], capture_output=True,
                                  text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        verdict = verified.stdout.strip().splitlines()[-1] if verified.returncode == 0 else "VERIFY FAILED"
        rows.append(f"| {model} | verify in a fresh process | {summary['examples']} | {verdict} | - | - |")
        summary, out = robustcount(f"estimate-{model}-{estimate}", "estimate", "--model", model, "--time-limit",
                                   str(TIME_LIMIT), "--data", "demo:test", "--sample", str(estimate), "--seed", str(SEED))
        rows.append(f"| {model} | estimate PR, r = 25% of words | {summary['examples']} (undecided "
                    f"{summary['undecided']}, misclassified {summary['misclassified']}) | PR > 0.9: "
                    f"{summary['share_above_0.9']:.3f} (median {summary['median']:.3f}) | {per_example(out, summary)} |")
    return rows


def speed(examples: int, points: int, rounds: int) -> tuple[list[str], dict]:
    """Seconds for the same points with the cache reuse and with the bare batched forward."""
    model = load_model("smollm2", device="cpu")
    builder = SpaceSpec().builder(SEED)
    chosen = random.Random(SEED).sample(DataSpec("demo:test").load(), examples)
    timings = {"reuse": [], "bare": []}
    positions = {"reuse": 0, "bare": 0}
    agreement = 0.0
    for example in chosen:
        space = builder(example.input)
        enumerated = []
        for point in space.points(min(2, space.max_radius())):
            enumerated.append(point)
            if len(enumerated) == points // 2:
                break
        words = len(tokenize(perturbed_part(example.input)).words)  # estimate's radius: 25% of the words
        radius = min(space.max_radius(), max(1, math.ceil(0.25 * words)))
        sampled = space.sample(radius, points - len(enumerated), random.Random(SEED))
        texts = [space.apply(point) for point in enumerated + sampled]
        answers = {}
        for round_ in range(rounds):
            for mode in (("reuse", "bare") if round_ % 2 == 0 else ("bare", "reuse")):
                model.prefix_reuse = mode == "reuse"
                model.module.anchor, model.module.tokens_run = None, 0
                began = time.perf_counter()
                with torch.inference_mode():
                    answers[mode] = model.predict_proba(texts)
                timings[mode].append(time.perf_counter() - began)
                positions[mode] += model.module.tokens_run
        agreement = max(agreement, float(abs(answers["reuse"] - answers["bare"]).max()))
    ratio = statistics.median(b / r for b, r in zip(timings["bare"], timings["reuse"]))
    rows = [f"| {examples} examples x {points} points x {rounds} rounds | {sum(timings['bare']):.1f} | "
            f"{sum(timings['reuse']):.1f} | {ratio:.2f} | {positions['bare'] / positions['reuse']:.2f} | "
            f"{agreement:.1e} |"]
    return rows, {"ratio": ratio}


LOAD = """
import os, time
began = time.perf_counter()
import torch, transformers  # noqa: F401  (what every command imports anyway)
imported = time.perf_counter()
from robustcount.models.zoo import load_model
load_model("smollm2", device="cpu")
loaded = time.perf_counter()
print(f"{imported - began:.1f} {loaded - imported:.1f} {os.getloadavg()[0]:.1f}")
"""


def load_rows() -> list[str]:
    """smollm2's load in a fresh process whose weights cache already holds the converted model."""
    done = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, check=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    imports, load, machine = done.stdout.split()
    return [f"| {imports} | {load} | {machine} |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--selection", type=int, default=60, help="demo:train examples that chose the calibration")
    parser.add_argument("--accuracy", type=int, default=50)
    parser.add_argument("--attack", type=int, default=10)
    parser.add_argument("--certify", type=int, default=20)
    parser.add_argument("--estimate", type=int, default=6)
    parser.add_argument("--speed-examples", type=int, default=4)
    parser.add_argument("--speed-points", type=int, default=128)
    parser.add_argument("--speed-rounds", type=int, default=2)
    parser.add_argument("--only", choices=("selection", "accuracy", "attack", "proofs", "speed", "load", "page"),
                        action="append", help="run only these sections (page: none, the page rewritten)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    RUNS.mkdir(parents=True, exist_ok=True)
    parts = args.only or ["selection", "accuracy", "speed", "load", "proofs", "attack"]
    sections = {}
    if "selection" in parts:
        sections["selection"] = accuracy_rows(args.selection, "train", ("smollm2",))
    if "accuracy" in parts:
        sections["accuracy"] = accuracy_rows(args.accuracy)
    if "attack" in parts:
        sections["attack"] = attack_rows(args.attack)
    if "proofs" in parts:
        sections["proofs"] = proof_rows(args.certify, args.estimate)
    if "speed" in parts:
        sections["speed"] = speed(args.speed_examples, args.speed_points, args.speed_rounds)[0]
    if "load" in parts:
        load_model("smollm2", device="cpu")  # converted into the weights cache, if no process did before
        sections["load"] = load_rows()
    kept = RUNS / "sections.json"  # the sections of earlier invocations (--only), merged as they are now
    sections = {**(json.loads(kept.read_text()) if kept.is_file() else {}), **sections}
    kept.write_text(json.dumps(sections, indent=1))
    write_page(sections, args)


def write_page(sections: dict, args: argparse.Namespace) -> None:
    heads = {
        "selection": "| model | data | examples | accuracy | 95% CI | model calls / example | seconds / example |\n|---|---|---|---|---|---|---|",
        "accuracy": "| model | data | examples | accuracy | 95% CI | model calls / example | seconds / example |\n|---|---|---|---|---|---|---|",
        "attack": "| model | recipe | attacked | success rate | substitutions | accuracy under attack | model calls / example | seconds / example |\n|---|---|---|---|---|---|---|---|",
        "proofs": "| model | run | examples | result | model calls / example | seconds / example |\n|---|---|---|---|---|---|",
        "load": "| importing torch and transformers, s | then loading smollm2, s | load average of the machine |\n|---|---|---|",
        "speed": "| points | bare forward, s | with reuse, s | speed-up (median per example) | positions run, bare / reuse | largest probability difference |\n|---|---|---|---|---|---|",
    }
    titles = {"selection": "Choosing the calibration (demo:train, not demo:test)", "accuracy": "Accuracy", "attack": "Attacks (synonym space, default options)",
              "proofs": "Certified share and PR (synonym space)",
              "load": "Loading smollm2 in a second process (the converted model cached)", "speed": "Prefix cache: the same points, bare and reused"}
    lines = ["# SmolLM2 as the classifier under test", "",
             f"Written by `experiments/llm_results.py` (the sections run with `--only` one after the other; sample "
             f"sizes: --selection {args.selection} --accuracy {args.accuracy} --attack {args.attack} --certify "
             f"{args.certify} --estimate {args.estimate} --speed-examples {args.speed_examples} --speed-points "
             f"{args.speed_points} --speed-rounds {args.speed_rounds}; seed {SEED}; demo:test samples drawn with "
             "`--sample N --seed 0`, so each table's smollm2 and minilm-rt-ft rows are the same examples); "
             "CPU, one torch thread, on a shared machine (seconds are indicative). See docs/models.md for the "
             "model and its defaults.", ""]
    notes = {
        "selection": "smollm2's default calibration was chosen on these demo:train examples (content-free calibration "
                     "against none); demo:test played no part.",
        "proofs": f"Each example has {TIME_LIMIT} s; one past it is undecided (counted apart, never as certified or "
                  "not). The certified share is over all the examples of the sample (misclassified ones are not "
                  "certified). `verify` re-checks every certificate in a new process, its own prefix caches "
                  "included. With 60 s per example, 7 of smollm2's 20 were undecided, after 11 to 29 of their "
                  "points: the query engine refuses a batch that its speed model (seconds per character, measured "
                  "on the example's earlier batches) expects to end past the limit; the examples had run 27 s at "
                  "most, so that model overestimated (a batch of points sharing the original's prefix costs the "
                  "prefix-reusing model less per character than the prompts it measured first; the machine was "
                  "also loaded). With 600 s, none was undecided.",
        "speed": "For each of the examples (demo:test, seed 0), the first points of its synonym space at r <= 2 in "
                 "the order the prover enumerates them and uniform samples at estimate's radius (25% of its words): "
                 "half each. The same points, in the same batches of 64, through smollm2 with the key/value cache "
                 "reuse and without it (the bare batched forward: every prompt whole, padded), alternating which "
                 "goes first, each pass from an empty anchor. Speed-up: the median over passes of bare seconds / "
                 "reuse seconds; positions run count padding and anchors. The largest probability difference "
                 "between the two is float noise (the margin tolerance is 1e-4).",
        "load": "Seconds of a fresh Python process: importing torch and transformers (what every command pays), then "
                "`load_model(\"smollm2\")` from the converted folder: tokenizer, weights, the check of the output "
                "layer. The machine was shared; its load average is shown.",
    }
    for key in ("selection", "accuracy", "attack", "proofs", "speed", "load"):
        if key in sections:
            lines += [f"## {titles[key]}", "", *([notes[key], ""] if key in notes else []), heads[key],
                      *sections[key], ""]
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text("\n".join(lines))
    print(PAGE.read_text())


if __name__ == "__main__":
    main()
