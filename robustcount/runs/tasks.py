"""The work of each dataset command on one chunk of examples, as JSON-able records.

A task maps `(worker, spec, examples)` to one record per example, yielded in order as each is
done (so that a failure keeps the records before it). Records hold results
only: what depends on the machine or the moment (seconds, model seconds) is the runner's to log
apart, so that the same inputs and seed give the same records wherever they run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from robustcount.data import Example, label_index
from robustcount.goal import keeps_label
from robustcount.runs.spec import RunSpec, Worker

Task = Callable[[Worker, RunSpec, Sequence[Example]], Iterator[dict]]


def evaluate_task(worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
    """The model's prediction and probabilities for each example."""
    from robustcount.evaluate import predictions

    labels = worker.engine.labels
    for p in predictions(worker.engine, examples):
        yield {"id": p.example.id, "input": p.example.input, "gold": None if p.gold is None else labels[p.gold],
               "predicted": labels[p.predicted], "correct": p.correct,
               "probabilities": [float(x) for x in p.probabilities]}


def zeroe_task(worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
    """The clean prediction and the prediction under each Zéroe attack and level."""
    from robustcount.zeroe_benchmark import attack_examples

    yield from attack_examples(worker.engine, examples, spec.options["attacks"], spec.options["levels"], spec.seed)


def attack_task(worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
    """One attack (PDP, TextFooler or the oracle) on each example's space, re-checked."""
    from robustcount.attacks.run import attack_example
    from robustcount.attacks.summary import ATTACKS

    method, options = spec.options["method"], dict(spec.options["settings"])
    if method == "textfooler" and options.get("similarity_check", True):
        options["encoder"] = worker.sentence_encoder()
    engine = worker.engine
    for example in examples:
        space = worker.build(example.input)
        gold = label_index(example.label, engine.labels)
        result = attack_example(method, ATTACKS[method], engine, space, gold, spec.options["budget"], **options)
        yield {"id": example.id, **result.as_dict(), "gold": engine.labels[result.gold],
               "space_digest": space.digest(), "space_positions": len(space.positions)}


def certify_task(worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
    """Proofs at r = 1, 2, ... and the certificates of the largest certified radius and of the
    adversary that ends the search."""
    from robustcount.certificate import make_certificate, model_digest
    from robustcount.prove import ADVERSARIAL, CERTIFIED, certify_radii

    engine, o = worker.engine, spec.options
    digest = model_digest(engine.model)
    for example in examples:
        space = worker.build(example.input)
        gold = label_index(example.label, engine.labels)
        with engine.example(o["budget"]) as stats:
            correct = bool(keeps_label(engine.predict_proba([example.input]), gold)[0])
            proofs = certify_radii(engine, space, gold, o["radius"], order=o["order"], max_points=o["max_points"],
                                   time_limit=o["time_limit"]) if correct else []
        record = {"id": example.id, "input": example.input, "gold": engine.labels[gold], "correct": correct,
                  "space_digest": space.digest(), "space_positions": space.max_radius(), "queries": stats.as_dict(),
                  "proofs": [p.as_dict() for p in proofs]}
        if correct:
            reached = sum(p.status == CERTIFIED for p in proofs)
            record["certified_radius"] = reached
            # every point of a non-empty space checked: certified at any radius, however large
            record["whole_space_certified"] = 0 < reached == space.max_radius()
            record["undecided"] = bool(proofs) and proofs[-1].status not in (CERTIFIED, ADVERSARIAL)
            kept = ([proofs[reached - 1]] if reached else []) + [p for p in proofs if p.status == ADVERSARIAL]
            record["certificates"] = [make_certificate(example.id, space, gold, engine.labels, proof,
                                                       spec.models[0].spec, digest) for proof in kept]
        yield record


def radius_task(worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
    """Each example's robust radius bracketed: the prover's certified r and PDP's adversary."""
    from robustcount.attacks.pdp import pdp_attack
    from robustcount.attacks.result import SUCCESS
    from robustcount.errors import BudgetExhausted
    from robustcount.prove import CERTIFIED, certify_radii

    engine, o = worker.engine, spec.options
    for example in examples:
        space = worker.build(example.input)
        gold = label_index(example.label, engine.labels)
        record = {"id": example.id, "input": example.input, "gold": engine.labels[gold], "lower": None,
                  "upper": None, "space_digest": space.digest()}
        with engine.example(o["budget"]) as stats:
            try:
                correct = bool(keeps_label(engine.predict_proba([example.input]), gold)[0])
                if correct:
                    proofs = certify_radii(engine, space, gold, o["max_radius"], max_points=o["max_points"])
                    record["lower"] = sum(p.status == CERTIFIED for p in proofs)
                    found = pdp_attack(engine, space, gold, beam=o["beam"])
                    record["upper"] = found.distance - 1 if found.status == SUCCESS else None
            except BudgetExhausted as exhausted:
                correct, record["reason"] = True, str(exhausted)
        record["queries"] = stats.as_dict()
        if not correct:
            record["kind"] = "misclassified"
        elif record["upper"] is not None and record["lower"] == record["upper"]:
            record["kind"] = "exact"
        else:
            record["kind"] = "bracketed"
        yield record


def estimate_task(worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
    """PR estimates of each correctly classified example, by every model of the run on the same
    space and the same samples (`compare` runs two models; `estimate` one)."""
    from robustcount.count import default_radius, estimate_pr, pr_by_distance
    from robustcount.seeding import derive_seed

    o = spec.options
    for example in examples:
        space = worker.build(example.input)
        example_seed = derive_seed(spec.seed, example.id)
        r = o["radius"] if o["radius"] is not None else default_radius(space, o["radius_share"])
        by_model = []
        for options, engine in zip(spec.models, worker.engines):
            gold = label_index(example.label, engine.labels)
            with engine.example() as stats:
                correct = bool(keeps_label(engine.predict_proba([example.input]), gold)[0])
                found = estimate_pr(engine, space, gold, r, method=o["method"], eps=o["eps"], delta=o["delta"],
                                    seed=example_seed, point=o["point"]) if correct else None
                shells = pr_by_distance(engine, space, gold, r, o["shell_samples"], delta=o["delta"],
                                        seed=example_seed) if correct and o["shell_samples"] else []
            by_model.append({"model": options.spec, "correct": correct,
                             "estimate": None if found is None else found.as_dict(),
                             "by_distance": [s.as_dict() for s in shells], "queries": stats.as_dict()})
        labels = worker.engine.labels
        record = {"id": example.id, "input": example.input, "gold": labels[label_index(example.label, labels)],
                  "example_seed": example_seed,
                  "space_digest": space.digest()}
        if len(by_model) == 1:
            record.update({k: v for k, v in by_model[0].items() if k != "model"})
        else:
            record["models"] = by_model
        yield record


TASKS: dict[str, Task] = {"evaluate": evaluate_task, "zeroe": zeroe_task, "attack": attack_task,
                          "certify": certify_task, "radius": radius_task, "estimate": estimate_task,
                          "compare": estimate_task}


BATCHES_PER_CHUNK = 8


def chunk_size(spec: RunSpec) -> int:
    """Examples per unit of work: one for the per-example searches; eight model batches' worth for
    evaluate and zeroe, whose examples are cheap, so that the engine's length-sorted batching has
    inputs of similar lengths to group (one batch of random texts pads to the longest: about twice
    the work). It depends on the spec alone, so every run of the same spec forms the same chunks
    (and the same model batches)."""
    if spec.command in ("evaluate", "zeroe"):
        return BATCHES_PER_CHUNK * spec.models[0].batch_size
    return 1
