"""Train certified (IBP) versions of the word networks, `cnn-rt-ibp` and `lstm-rt-ibp`, on
demo:train, and measure them beside `cnn-rt` and `lstm-rt`.

Each is `robustcount harden --family word-cnn|word-lstm --certified-training --augment none` on all
of demo:train (the default synonym space, seed 0), through the same `harden` a user runs, into the
model directory `runs/ibp/NAME` (interrupted, it resumes when run again), whose card holds the
recipe, the held-out history and the demo:test accuracy. Seeded, on the CPU with a fixed number of
threads. They are not in the zoo (docs/hardening/certified-training.md).
Run: `.venv/bin/python experiments/ibp_training.py [--threads 2] [--only cnn-rt-ibp]`

`--validation` prints, per trained recipe, what chose among them: after each epoch, the share of
the validation texts (the 10% of demo:train that `harden` holds out with seed 0, which the
natural cnn-rt and lstm-rt held out too, so a warm start has not trained on them) whose whole
space the training bound certifies, their accuracy, and the epoch kept. demo:test plays no part.

`--measure` then measures the natural and IBP models (docs/proofs/bounds.md, "Certified training"):
on the 200 examples of docs/papers/certified.md's table (demo:test shuffled with seed 0, the first
200), the share the simple prover certifies at r = 1, 2, 3 (misclassified examples count as not
certified), branch and bound's answers beside it (`prove_with_bounds`; any disagreement is
counted), and the share the ball's single sound bound certifies; with `--whole-split`, branch and
bound at r = 3 over all of demo:test on the IBP models, timed.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch

from robustcount.bounds.boxes import Box
from robustcount.bounds.decide import certifies
from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import token_slots
from robustcount.data import label_index, load_demo
from robustcount.goal import MARGIN_TOLERANCE, correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.models.families.word_networks import held_out_groups
from robustcount.models.model_dir import CARD_FILE, read_card
from robustcount.models.zoo import load_model
from robustcount.proofs.branch import prove_with_bounds
from robustcount.proofs.prover import CERTIFIED, prove
from robustcount.spaces.build import SpaceSpec
from robustcount.training import CertifiedTraining, HardenSpec, Sitting, TrainingCopies, harden
from robustcount.training.harden import WORK

RUNS = Path("runs/ibp")


def embeddings_only(kappa: float, *, ramp: int, epochs: int) -> dict:
    """An LSTM recipe warm from lstm-rt that trains its embeddings only (`--embeddings-only`)."""
    return dict(family="word-lstm", epochs=epochs, ramp=float(ramp), kappa=kappa, init_from="lstm-rt",
                train_embeddings=True, embeddings_only=True)


RECIPES = {
    "cnn-rt-ibp": dict(family="word-cnn", epochs=6, ramp=3.0, kappa=0.8),
    "cnn-rt-ibp-k05": dict(family="word-cnn", epochs=4, ramp=2.0, kappa=0.5),
    "lstm-rt-ibp": dict(family="word-lstm", epochs=4, ramp=2.0, kappa=0.8),
    "cnn-rt-ibp-warm-k08": dict(family="word-cnn", epochs=4, ramp=1.0, kappa=0.8, init_from="cnn-rt"),
    "cnn-rt-ibp-k065-long": dict(family="word-cnn", epochs=14, ramp=5.0, kappa=0.65),
    "cnn-rt-ibp-warm-emb-k065": dict(family="word-cnn", epochs=10, ramp=3.0, kappa=0.65, init_from="cnn-rt",
                                     train_embeddings=True),
    "lstm-rt-ibp-warm-emb-k05": dict(family="word-lstm", epochs=6, ramp=3.0, kappa=0.5, init_from="lstm-rt",
                                     train_embeddings=True),
    "lstm-rt-ibp-warm-k065": dict(family="word-lstm", epochs=8, ramp=3.0, kappa=0.65, init_from="lstm-rt"),
    "lstm-rt-ibp-warm-emb-k03": dict(family="word-lstm", epochs=3, ramp=2.0, kappa=0.3, init_from="lstm-rt",
                                     train_embeddings=True),
    "lstm-rt-ibp-warm-emb-k03-lr2e-4": dict(family="word-lstm", epochs=3, ramp=2.0, kappa=0.3, init_from="lstm-rt",
                                            train_embeddings=True, learning_rate=2e-4),
    "lstm-rt-ibp-warm-emb-k05-box1": dict(family="word-lstm", epochs=3, ramp=2.0, kappa=0.5, init_from="lstm-rt",
                                          train_embeddings=True, box_words=1),
    "lstm-rt-ibp-warm-embonly-k05": embeddings_only(0.5, ramp=2, epochs=3),
    "lstm-rt-ibp-warm-embonly-k03-e2": embeddings_only(0.3, ramp=2, epochs=2),
    "lstm-rt-ibp-warm-embonly-k07-e2": embeddings_only(0.7, ramp=2, epochs=2),
    "lstm-rt-ibp-warm-embonly-k05-r3": embeddings_only(0.5, ramp=3, epochs=3),
    "lstm-rt-ibp-warm-embonly-k085-e2": embeddings_only(0.85, ramp=2, epochs=2),
    "lstm-rt-ibp-warm-embonly-k07-e3": embeddings_only(0.7, ramp=2, epochs=3),
    "lstm-rt-ibp-warm-embonly-k05-r4": embeddings_only(0.5, ramp=4, epochs=4),
    "lstm-rt-ibp-warm-embonly-k07-r3": embeddings_only(0.7, ramp=3, epochs=3),
    "lstm-rt-ibp-warm-embonly-k05-r5": embeddings_only(0.5, ramp=5, epochs=5),
    "lstm-rt-ibp-warm-embonly-k05-r6": embeddings_only(0.5, ramp=6, epochs=6),
}
"""Per model, the epochs and the `CertifiedTraining` of a certified training on all of demo:train: the family,
epochs, ramp epochs (epsilon and kappa rise over the ramp, then hold), the final kappa, the
natural model a warm start begins from and whether the embeddings train too."""


def train(name: str, threads: int) -> dict:
    """The model directory runs/ibp/NAME, trained (or continued) unless an earlier sitting finished it."""
    recipe = dict(RECIPES[name])
    epochs = recipe.pop("epochs")
    spec = HardenSpec(CertifiedTraining(**recipe), copies=TrainingCopies("none"), epochs=epochs, threads=threads)
    directory = RUNS / name
    if (directory / CARD_FILE).exists() and not (directory / WORK).exists():
        return read_card(directory)
    began = time.time()
    card = harden(spec, load_demo("train"), {"spec": "demo:train"}, directory,
                  Sitting(resume=(directory / WORK).exists(), command_line=f"experiments/ibp_training.py ({name})"))
    card["training"]["seconds"] = round(time.time() - began)
    return card


def model_of(name: str) -> str:
    """Where a measured model loads from: the zoo's natural ones, runs/ibp for the IBP ones."""
    return str(RUNS / name) if name in RECIPES else name


RADII = (1, 2, 3)
MEASURED = ("cnn-rt", "lstm-rt", *RECIPES)


def table_examples(size: int = 200):
    """The certified-share table's examples (experiments/paper_tables.py `sample_file`)."""
    examples = load_demo("test")
    random.Random(0).shuffle(examples)
    return examples[:size]


def measure(name: str, examples) -> dict:
    """Per radius, on `examples`: certified by the simple prover, by branch and bound (with the
    disagreements), by the ball's single bound; points and seconds of both provers."""
    classifier = load_model(model_of(name), device="cpu")
    bounds, builder = bounds_for(classifier), SpaceSpec().builder(0)
    found = {r: {"simple": 0, "bound": 0, "ball_bound": 0, "disagreements": 0, "simple_points": 0,
                 "bound_points": 0, "simple_seconds": 0.0, "bound_seconds": 0.0} for r in RADII}
    correct = 0
    for example in examples:
        gold = label_index(example.label, classifier.labels)
        if not correct_on_input(QueryEngine(classifier), example.input, gold):
            continue
        correct += 1
        space = builder(example.input)
        slots = token_slots(classifier.tokenizer, space)
        for r in RADII:
            simple = prove(QueryEngine(classifier, cache_size=0), space, gold, r)
            bound = prove_with_bounds(QueryEngine(classifier, cache_size=0), space, gold, r)
            ball = bounds.differences([Box.ball(space, r).slots(slots)], gold)[0]
            row = found[r]
            row["simple"] += simple.status == CERTIFIED
            row["bound"] += bound.status == CERTIFIED
            row["ball_bound"] += certifies(ball, gold, MARGIN_TOLERANCE)
            row["disagreements"] += simple.status != bound.status
            row["simple_points"] += simple.checked
            row["bound_points"] += bound.checked
            row["simple_seconds"] += simple.seconds
            row["bound_seconds"] += bound.seconds
    return {"examples": len(examples), "accuracy": correct / len(examples), "radii": found}


def whole_split(name: str, radius: int = 3, method: str = "bound") -> dict:
    """Branch and bound (`method` bound) or the simple prover (enumerate) at `radius` over every
    demo:test example, timed (a misclassified example is checked and counted as not certified)."""
    classifier = load_model(model_of(name), device="cpu")
    builder, statuses = SpaceSpec().builder(0), {}
    began = time.perf_counter()
    for example in load_demo("test"):
        gold = label_index(example.label, classifier.labels)
        engine = QueryEngine(classifier)
        if not correct_on_input(engine, example.input, gold):
            statuses["misclassified"] = statuses.get("misclassified", 0) + 1
            continue
        proof = (prove_with_bounds if method == "bound" else prove)(engine, builder(example.input), gold, radius)
        statuses[proof.status] = statuses.get(proof.status, 0) + 1
    return {"radius": radius, "method": method, "examples": sum(statuses.values()), "statuses": statuses,
            "seconds": round(time.perf_counter() - began, 1)}


VALIDATION_SIZE = 200


def validation_examples(size: int = VALIDATION_SIZE):
    """`size` of the validation texts (the 10% of demo:train that `harden` holds out with seed 0),
    drawn with seed 1 (0: all of them, in order): where the LSTM recipes are compared by the
    complete prover."""
    examples = load_demo("train")
    held = sorted(held_out_groups(range(len(examples)), random.Random(0)))
    return [examples[i] for i in (random.Random(1).sample(held, size) if size else held)]


def robust_share(classifier, examples, radius: int = 3) -> dict:
    """On `examples`: the accuracy and the share the simple prover (complete: exact) certifies at
    `radius` (a misclassified example counts as not certified), with the seconds it took."""
    builder, correct, certified = SpaceSpec().builder(0), 0, 0
    began = time.perf_counter()
    for example in examples:
        gold = label_index(example.label, classifier.labels)
        if not correct_on_input(QueryEngine(classifier), example.input, gold):
            continue
        correct += 1
        proof = prove(QueryEngine(classifier, cache_size=0), builder(example.input), gold, radius)
        certified += proof.status == CERTIFIED
    return {"examples": len(examples), "accuracy": correct / len(examples), f"certified_r{radius}":
            certified / len(examples), "seconds": round(time.perf_counter() - began, 1)}


def validation() -> dict:
    """Per trained recipe: its settings, the validation measures after each epoch, the epoch kept."""
    found = {}
    for name, recipe in RECIPES.items():
        if (RUNS / name / CARD_FILE).exists():
            training = read_card(RUNS / name)["training"]
            found[name] = {**recipe, "certified": training["held_out_certified"],
                           "accuracy": training["held_out_accuracy"], "kept_epoch": training["kept_epoch"]}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", choices=tuple(RECIPES))
    parser.add_argument("--measure", nargs="*", choices=MEASURED, help="measure these models (none named: all)")
    parser.add_argument("--whole-split", action="store_true", help="--measure: also the whole demo:test at r = 3")
    parser.add_argument("--whole-split-method", choices=("bound", "enumerate"), default="bound",
                        help="--whole-split: branch and bound, or the simple prover (where bounds do not pay)")
    parser.add_argument("--validation", action="store_true", help="print the trained recipes' validation measures")
    parser.add_argument("--robust-validation", nargs="+", choices=MEASURED, metavar="MODEL",
                        help="certify these models on 200 validation texts (the complete prover) at --radius")
    parser.add_argument("--radius", type=int, default=3, help="--robust-validation: the radius")
    parser.add_argument("--validation-size", type=int, default=VALIDATION_SIZE,
                        help="--robust-validation: the validation texts drawn (0: all 1,083)")
    args = parser.parse_args()
    if args.validation:
        for name, found in validation().items():
            print(json.dumps({"model": name, **found}), flush=True)
        return
    if args.robust_validation:
        torch.set_num_threads(1)
        for name in args.robust_validation:
            found = robust_share(load_model(model_of(name), device="cpu"), validation_examples(args.validation_size),
                                 args.radius)
            print(json.dumps({"model": name, **found}), flush=True)
        return
    if args.measure is not None:
        torch.set_num_threads(1)
        for name in args.measure or MEASURED:
            print(json.dumps({"model": name, **measure(name, table_examples())}), flush=True)
            if args.whole_split and name in RECIPES:
                print(json.dumps({"model": name, "whole_split": whole_split(name, method=args.whole_split_method)}),
                      flush=True)
        return
    for name in [args.only] if args.only else RECIPES:
        card = train(name, args.threads)
        print(json.dumps({k: v for k, v in card.items() if k != "demo_test"}, indent=2), flush=True)
        print(f"{name}: demo:test accuracy {card['demo_test']['test_accuracy']}", flush=True)


if __name__ == "__main__":
    main()
