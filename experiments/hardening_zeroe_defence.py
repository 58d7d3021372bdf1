"""Eger & Benz 2020's defences on minilm-rt: 1-1 heatmap, leave-one-out, ranking (docs/hardening/zeroe-defence.md).

`zeroe-defence` shields the default family (`minilm-rt`: the frozen encoder, a retrained head) as
Eger & Benz 2020 (section 4.3) do. Every perturbed set is embedded once (`robustcount.models.families.minilm_head`,
saved under runs/hardening/embeddings/, so a rerun or an interrupted run continues) and shared by
every head: the unshielded head is minilm-rt's own; the 1-1 head of attacker alpha is trained on
demo:train plus one copy of each example attacked by alpha at a level drawn from low, mid and high
(as `harden --model minilm-rt --attacker ALPHA` does, except that every head here keeps minilm-rt's
regularisation C instead of cross-validating its own: one fit a head instead of 55); the leave-one-out head
of beta on demo:train plus one copy of each example by an attacker drawn from the nine others.
The test sets are the `zeroe` command's (seed 0), so the unshielded row is the README's Zéroe
table. Values are the paper's eq. 2, Delta = sigma(p) / s(0) - s*(p) = (sigma(p) - s(p)) / s(0),
in percentage points: sigma the shielded head's accuracy, s the unshielded one's.

Run: `.venv/bin/python experiments/hardening_zeroe_defence.py`.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from hardening_common import (
    write_page,
    ATTACKERS,
    DOCS,
    RUNS,
    SEED,
    machine,
)
from safetensors.torch import load_file, save_file

from robustcount.attacks.zeroe_protocol import LEVELS, perturbed_inputs
from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.families.minilm_head import HEAD_CARD, HEAD_WEIGHTS, embed_texts, fit_head
from robustcount.models.minilm import MiniLMSentenceEncoder
from robustcount.runs.figures import new_figure, save_figure
from robustcount.runs.tables import format_table
from robustcount.seeding import derive_seed
from robustcount.training.augment import zeroe_copies


def accuracy(head: dict, embeddings: np.ndarray, targets: np.ndarray) -> float:
    logits = embeddings @ head["weight"].numpy().T + head["bias"].numpy()
    return float((logits.argmax(axis=1) == targets).mean())


def zeroe_defence(threads: int = 2, benchmark: bool = False) -> None:
    """Eger & Benz 2020's defence experiments on minilm-rt (see the module docstring): measured once into
    docs/hardening/zeroe-defence.json, then drawn from it. With `benchmark`, the whole measurement
    is made again from nothing (in a scratch folder) for its time alone, which goes to
    docs/hardening/zeroe-defence-benchmark.json and under the tables."""
    DOCS.mkdir(parents=True, exist_ok=True)
    if benchmark:
        with tempfile.TemporaryDirectory() as scratch:
            fresh = measure_zeroe_defence(threads, Path(scratch))
        kept = json.loads((DOCS / "zeroe-defence.json").read_text())["scores"] if (DOCS / "zeroe-defence.json").exists() \
            else None
        (DOCS / "zeroe-defence-benchmark.json").write_text(json.dumps(
            {"threads": threads, "seconds": fresh["seconds"], "machine": machine(),
             "same_scores_as_the_measured_run": kept == fresh["scores"] if kept else None}, indent=1) + "\n")
    measured = DOCS / "zeroe-defence.json"
    if not measured.exists():
        measured.write_text(json.dumps(measure_zeroe_defence(threads, RUNS), indent=1) + "\n")
    render_zeroe_defence(json.loads(measured.read_text()))


def measure_zeroe_defence(threads: int, folder: Path) -> dict:
    """Every head's accuracy on every test set, and what it cost on `threads` torch threads; the
    embeddings and heads are kept in `folder` (and taken from there when they are)."""
    began = time.time()
    torch.set_num_threads(threads)
    sentence_encoder = MiniLMSentenceEncoder()
    train, test = load_demo("train"), load_demo("test")
    y_train = np.array([DEMO_LABELS.index(e.label) for e in train])
    y_test = np.array([DEMO_LABELS.index(e.label) for e in test])

    def embedded(name: str, texts) -> np.ndarray:
        started = time.time()
        values = embed_texts(texts, folder / "embeddings" / name, sentence_encoder=sentence_encoder)
        print(f"embedded {name}: {len(texts)} texts in {time.time() - started:.0f} s", flush=True)
        return values

    x_train = embedded("train-clean", [e.input for e in train])
    copies = {a: embedded(f"train-{a}", [c.example.input for c in zeroe_copies(train, [a], seed=SEED)])
              for a in ATTACKERS}
    tests = {("none", "-"): embedded("test-clean", [e.input for e in test])}
    for b in ATTACKERS:
        for level in LEVELS:
            tests[b, level] = embedded(f"test-{b}-{level}", perturbed_inputs(test, b, level, SEED))
    embedding_seconds = time.time() - began

    heads_began = time.time()
    heads = {"unshielded": load_file(HEAD_WEIGHTS)}
    c = json.loads(HEAD_CARD.read_text())["C"]

    def head(name: str, extra: np.ndarray) -> dict:
        path = folder / "heads" / f"{name}.safetensors"
        if not path.exists():
            tensors, _ = fit_head(np.vstack([x_train, extra]), np.concatenate([y_train, y_train]), 2, c=c)
            path.parent.mkdir(parents=True, exist_ok=True)
            save_file(tensors, path)
        return load_file(path)

    for a in ATTACKERS:
        heads[f"1-1 {a}"] = head(f"one-{a}", copies[a])
    for b in ATTACKERS:
        others = [a for a in ATTACKERS if a != b]
        drawn = [random.Random(derive_seed(SEED, "leave-one-out", b, e.id)).choice(others) for e in train]
        heads[f"loo {b}"] = head(f"loo-{b}", np.stack([copies[a][i] for i, a in enumerate(drawn)]))
    heads_seconds = time.time() - heads_began

    scores = {name: {f"{b}/{lv}": accuracy(h, x, y_test) for (b, lv), x in tests.items()}
              for name, h in heads.items()}
    return {"seed": SEED, "C": c, "scores": scores, "threads": threads,
            "seconds": {"embedding": embedding_seconds, "heads": heads_seconds, "total": time.time() - began}}


def cost_line(data: dict, train_size: int, test_size: int) -> str:
    """What the experiment costs: the benchmark's time from nothing when there is one, else the
    measuring run's own (which may have found part of its work done by an earlier sitting)."""
    work = (f"embedding every perturbed set once ({len(ATTACKERS)} training copies of {train_size} texts, "
            f"{len(data['scores']['unshielded'])} test sets of {test_size}) and fitting the "
            f"{len(data['scores']) - 1} heads (logistic regression, C = {data['C']:g} as minilm-rt's own head)")
    path = DOCS / "zeroe-defence-benchmark.json"
    if path.exists():
        b = json.loads(path.read_text())
        return (f"Cost (`--benchmark --threads {b['threads']}`, the whole experiment from nothing): {work} took "
                f"**{b['seconds']['total'] / 60:.1f} minutes** ({b['seconds']['embedding'] / 60:.1f} embedding, "
                f"{b['seconds']['heads'] / 60:.1f} fitting) on {b['machine']}; it found the same accuracies as the "
                f"run above: {b['same_scores_as_the_measured_run']}.")
    s = data["seconds"]
    return (f"Cost of the measuring run's last sitting ({data.get('threads', 2)} torch threads, on {machine()}, "
            f"shared with other experiments): {s['total'] / 60:.1f} minutes for what was left of {work}.")


def render_zeroe_defence(data: dict) -> None:
    """docs/hardening/zeroe-defence.md and its figures from the measured accuracies."""
    scores = data["scores"]
    s0 = scores["unshielded"]["none/-"]
    train_size, test_size = len(load_demo("train")), len(load_demo("test"))

    def delta(name: str, b: str, level: str) -> float:  # eq. 2, percentage points
        return 100 * (scores[name][f"{b}/{level}"] - scores["unshielded"][f"{b}/{level}"]) / s0

    one_one = {(a, b, level): delta(f"1-1 {a}", b, level) for a in ATTACKERS for b in ATTACKERS for level in LEVELS}
    loo = {(b, level): delta(f"loo {b}", b, level) for b in ATTACKERS for level in LEVELS}
    diagonal = [one_one[a, a, level] for a in ATTACKERS for level in LEVELS]
    off = [one_one[a, b, level] for a in ATTACKERS for b in ATTACKERS if a != b for level in LEVELS]
    ranking = sorted([("1-1 (alpha, alpha)", float(np.mean(diagonal))),
                      ("leave-one-out", float(np.mean(list(loo.values())))),
                      ("1-1 (alpha, beta), alpha != beta", float(np.mean(off)))], key=lambda r: -r[1])

    DOCS.mkdir(parents=True, exist_ok=True)
    figure, _ = new_figure(18, 7)
    figure.clf()
    panels = figure.subplots(1, len(LEVELS))
    for panel, level in zip(panels, LEVELS):
        matrix = np.array([[one_one[a, b, level] for a in ATTACKERS] for b in ATTACKERS])
        limit = max(1.0, float(np.abs(matrix).max()))
        panel.imshow(matrix, cmap="RdBu", vmin=-limit, vmax=limit)
        panel.set_xticks(range(len(ATTACKERS)), ATTACKERS, rotation=90)
        panel.set_yticks(range(len(ATTACKERS)), ATTACKERS)
        panel.set_xlabel("trained on (alpha)")
        panel.set_ylabel("attacked by (beta)")
        panel.set_title(f"{level} (p = {LEVELS[level]})")
        for i in range(len(ATTACKERS)):
            for j in range(len(ATTACKERS)):
                panel.text(j, i, f"{matrix[i, j]:.1f}", ha="center", va="center", fontsize=7)
    figure.suptitle("1-1 adversarial training of minilm-rt's head: Delta (eq. 2, pp) against the unshielded head")
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    save_figure(figure, DOCS / "zeroe-one-against-one.png")

    figure, axes = new_figure(11, 4.5)
    width = 0.8 / len(LEVELS)
    for k, level in enumerate(LEVELS):
        axes.bar(np.arange(len(ATTACKERS)) + (k - 1) * width, [loo[b, level] for b in ATTACKERS], width, label=level)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(range(len(ATTACKERS)), ATTACKERS, rotation=30, ha="right")
    axes.set_ylabel("Delta (eq. 2, pp)")
    axes.set_title("Leave-one-out: trained on the nine other attackers, attacked by this one")
    axes.legend(title="level")
    figure.tight_layout()
    save_figure(figure, DOCS / "zeroe-leave-one-out.png")

    unshielded_rows = [[b, level, f"{100 * scores['unshielded'][f'{b}/{level}']:.2f}",
                        f"{one_one[b, b, level]:+.2f}", f"{loo[b, level]:+.2f}",
                        f"{np.mean([one_one[a, b, level] for a in ATTACKERS if a != b]):+.2f}"]
                       for b in ATTACKERS for level in LEVELS]
    clean_rows = [[name, f"{100 * cells['none/-']:.2f}"] for name, cells in scores.items()]
    lines = [
        "# Shielding the default family against the ten Zéroe attackers (Eger & Benz 2020, section 4.3)", "",
        "## Ranking of the defences (Eger & Benz 2020, Table 3)", "",
        format_table(["defence", "mean Delta (pp)"], [[name, f"{value:+.2f}"] for name, value in ranking]), "",
        "Means over the ten attackers and the three levels. Paper, toxic-comment classification (TC) with "
        "RoBERTa: 1-1 (alpha, alpha) 12, leave-one-out 9, 1-1 (alpha, beta) 7 pp.", "",
        "## One against one (Eger & Benz 2020, Figure 3; Tables 8 to 10)", "",
        "![1-1 heatmap](zeroe-one-against-one.png)", "",
        "Column: the attacker the head was trained on (alpha); row: the attacker of the test data (beta). "
        "Blue: better than the unshielded head under the same attack, red: worse.", "",
        "## Leave-one-out (Eger & Benz 2020, Figure 4)", "",
        "![leave-one-out](zeroe-leave-one-out.png)", "",
        "## Per attacker: unshielded accuracy, 1-1 on its own attacker, leave-one-out, 1-1 mean over the others "
        "(Eger & Benz 2020, Figures 2 and 4, Table 7)", "",
        format_table(["attacker (beta)", "level", "unshielded accuracy %", "1-1 (beta, beta)", "leave-one-out",
                      "1-1 from the 9 others (mean)"], unshielded_rows), "",
        "## Clean accuracy of each head (demo:test)", "",
        format_table(["head", "clean accuracy %"], clean_rows), "",
        cost_line(data, train_size, test_size),
        "", "Command: `.venv/bin/python experiments/hardening_zeroe_defence.py` (numbers: zeroe-defence.json; "
        "`--benchmark` measures the whole experiment again from nothing, for its time).",
    ]
    write_page("zeroe-defence.md", lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="torch threads for the encoder")
    parser.add_argument("--benchmark", action="store_true", help="time the whole of it from nothing")
    args = parser.parse_args()
    zeroe_defence(args.threads, args.benchmark)
