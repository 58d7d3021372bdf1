"""`certify`: proofs that no adversary lies within r substitutions, r = 1, 2, ..., with a certificate
for the largest certified radius and for the adversary that ends the search."""

from __future__ import annotations

from collections import Counter

from robustcount import journal
from robustcount.data import label_index
from robustcount.goal import correct_on_input
from robustcount.errors import LimitReached, RobustcountError
from robustcount.models.accounting import EngineState
from robustcount.proofs.branch import BoundProof, chosen_method, prove_with_bounds
from robustcount.proofs.certificate import make_certificate
from robustcount.proofs.certify_record import CertifyRecord, certificate_proofs
from robustcount.proofs.options import CertifyOptions
from robustcount.proofs.proof_checks import EARLIER_METHOD
from robustcount.proofs.prover import CERTIFIED, Checkpointing, certify_radii, planned_points
from robustcount.proofs.records import run_problems
from robustcount.runs.command import (
    Command,
    Planned,
    capped,
    timings_apart,
)
from robustcount.runs.figures import share_figure
from robustcount.runs.provenance import served_record
from robustcount.runs.report import Section
from robustcount.runs.summaries import total_queries
from robustcount.spaces.coverage import space_coverage
from robustcount.status import Undecided, limit_of


def certify_example(engine, space, example, o: CertifyOptions, model_spec: str, digest: str | None) -> dict:
    """The run record of one example (`proofs.certify_record.CertifyRecord`): its proofs r = 1, 2, ... over
    `space` when the model keeps its gold label, by the method `o.method` chooses for the model
    (`branch.chosen_method`), and their certificates naming `model_spec`. It continues from the
    checkpoint of the current journal, when there is one, and keeps its own
    (`robustcount.journal`); a bound proof restarts its radius there (the radii before it kept).
    When a limit refuses the input's own model call, whether the model keeps gold is unknown: the
    record's `correct` is None, with the limit and the reason (undecided at every radius)."""
    gold = label_index(example.label, engine.labels)
    method = chosen_method(o.method, engine.model)
    notes = journal.current()
    saved = notes.saved
    resumed = EngineState(**saved["engine"]) if saved else None
    stopped = None
    with engine.example(o.budget, o.time_limit, resumed=resumed) as stats:
        try:
            correct = saved["correct"] if saved else correct_on_input(engine, example.input, gold)
        except LimitReached as refused:
            correct, stopped = None, (refused.kind, str(refused))

        def checkpoint(prover: dict) -> None:
            notes.save({"correct": correct, "engine": engine.state().as_dict(), "prover": prover})

        by_bounds = {"prover": prove_with_bounds, "proof_type": BoundProof} if method == "bound" else {}
        proofs = certify_radii(engine, space, gold, o.radius, order=o.order, max_points=o.max_points,
                               checkpointing=Checkpointing(saved["prover"] if saved else None,
                                                           checkpoint if notes.keeps else None),
                               **by_bounds) if correct else []
    certificates = [make_certificate(example.id, space, gold, engine.labels, proof, model_spec, digest,
                                     engine.batching()) for proof in certificate_proofs(proofs)]
    return CertifyRecord(example.id, example.input, engine.labels[gold], correct, space.digest(), space.max_radius(),
                         stats.as_dict(), tuple(proofs), tuple(certificates), space_coverage(space, o.radius),
                         space.window, stopped).as_dict()


def certified_at(record: dict, r: int) -> bool | None:
    """Whether a record's example is certified at radius `r` (True), not (False: misclassified,
    an adversary within r, an empty space), or undecided at r (None: its search stopped
    undecided at a radius up to r, below which it is decided; or a limit refused its input's own
    model call: undecided at every radius)."""
    if "correct" in record and record["correct"] is None:
        return None
    if record.get("certified_radius", 0) >= r or record.get("whole_space_certified"):
        return True
    if record.get("undecided") and record["proofs"][-1]["radius"] <= r:
        return None
    return False


class Certify(Command, name="certify", options=CertifyOptions):
    """Certify that no adversary lies within r substitutions; print the share certified at each r."""

    def task(self, worker, spec, examples):
        if hasattr(worker.engine.model, "served") and not served_record(worker.engine.model)["deterministic"]:
            moved = worker.engine.model.determinism
            how = "could not be probed" if moved is None or moved != moved else \
                f"move beyond the margin tolerance (by up to {moved:.2g} in probability)"
            raise RobustcountError(f"{spec.models[0].spec}: its answers to identical requests {how}: no certificate "
                                   "can hold for it (attack and estimate still run)")
        digest = worker.engine.digest()
        for example in examples:
            yield timings_apart(certify_example(worker.engine, worker.build(example.input), example, spec.options,
                                                spec.models[0].spec, digest))

    def plan(self, spec, space, example):
        """Every point of Omega_r up to the largest radius within --max-points (`planned_points`):
        what a certified example spends; an adversary ends the search sooner."""
        o: CertifyOptions = spec.options
        calls, refused = planned_points(space, o.radius, o.max_points)
        note = f"|Omega_{refused}| = {space.count(refused)} points, above --max-points {o.max_points}: undecided " \
            f"from r = {refused}" if refused is not None else None
        basis = "the points of Omega_r, each checked once" + (
            " (bounds decide boxes of them without a call each)" if o.method == "bound" else "")
        return capped(Planned(calls, basis, radius=o.radius, size=space.count(o.radius), note=note), o.budget)

    def recorded_options(self, recorded: dict):
        """The options of a header; one written before `--method` enumerated."""
        return self.Options(**{"method": EARLIER_METHOD, **recorded})

    def undecided(self, record):
        """The limit and the reason of the proof that ended the search undecided (of the record,
        when a limit refused its input's own model call)."""
        if "correct" in record and record["correct"] is None:
            return Undecided((limit_of(record["limit"], record["reason"]),), record["reason"])
        if not record.get("undecided"):
            return None
        proof = record["proofs"][-1]
        return Undecided((limit_of(proof.get("limit"), proof["reason"]),), proof["reason"])

    def run_problems(self, run) -> list[str]:
        """Everything `verify` refuses a certify run for without a model (`proofs.records`)."""
        return [str(problem) for problem in run_problems(run.header, run.records)]

    def summarise(self, run) -> dict:
        """Per radius r (up to the largest any example's space reaches: beyond it every Omega_r is
        its whole space), the examples certified, not certified and undecided at r
        (`certified_at`); each share is of the examples decided at r. Empty spaces certify
        nothing and are counted apart; the points of certified radii, and those bounds decided."""
        radius = run.options.radius
        records = run.records
        shown = min(radius, max((rec.get("space_positions", radius) for rec in records), default=radius)) or 1
        outcomes = {r: [certified_at(rec, r) for rec in records] for r in range(1, shown + 1)}
        certified = {r: found.count(True) for r, found in outcomes.items()}
        undecided = {r: found.count(None) for r, found in outcomes.items()}
        decided = {r: len(records) - undecided[r] for r in outcomes}
        proofs = [p for rec in records for p in rec["proofs"]]
        certified_proofs = [p for p in proofs if p["status"] == CERTIFIED]
        return {"radius": radius, "method": run.options.method,
                "proved_by": "bound" if any("certified_by_bounds" in p for p in proofs) else
                "enumerate" if proofs else None,
                "certified_by_bounds": sum(int(p.get("certified_by_bounds", 0)) for p in certified_proofs),
                "points": sum(int(p["total"]) for p in certified_proofs),
                "misclassified": sum(r["correct"] is False for r in records),
                "empty_spaces": sum(r.get("space_positions") == 0 for r in records), "certified": certified,
                "decided_at": decided, "undecided_at": undecided,
                "certified_share": {r: c / decided[r] if decided[r] else float("nan") for r, c in certified.items()},
                "queries": total_queries(records)}

    def table(self, summary):
        """Radius, certified and share; with the examples not certified and undecided at each
        radius when any example is undecided (the share is then of the decided)."""
        radii = summary["certified"]
        if not any(summary["undecided_at"].values()):
            return (["radius", "certified", "share of examples"],
                    [[r, summary["certified"][r], summary["certified_share"][r]] for r in radii])
        return (["radius", "certified", "not certified", "undecided", "share of the decided"],
                [[r, summary["certified"][r], summary["decided_at"][r] - summary["certified"][r],
                  summary["undecided_at"][r], summary["certified_share"][r]] for r in radii])

    def undecided_note(self, summary) -> str:
        """An example whose search stopped undecided at radius k is decided below k: the figures
        at each radius cover the examples decided at that radius."""
        at = ", ".join(f"{n} at r = {r}" for r, n in summary["decided_at"].items())
        return (f"{summary['decided']} examples decided at every radius, {summary['undecided']} undecided from some "
                "radius on (a limit, never a result; listed in the report): the figures at each radius cover the "
                f"examples decided at it ({at})")

    def sections(self, run, summary):
        radii = list(summary["certified_share"])
        of = "the decided examples" if summary["undecided"] else "examples"
        figure = share_figure([int(r) for r in radii], [summary["certified_share"][r] for r in radii],
                              "radius r (substitutions)", f"share of {of} certified")
        reached = Counter(r.get("certified_radius") for r in run.records if r["correct"])
        return [Section("Certification", note=f"{summary['misclassified']} misclassified examples are never "
                        f"certified; {summary['empty_spaces']} had an empty space (nothing to certify, never "
                        f"certified); {summary['undecided']} stopped undecided (space too large, budget or time).",
                        tables=[("Largest certified radius", ["radius", "examples"], sorted(reached.items()))],
                        figures=[("certified", figure)])]

    def finish(self, spec, summary, outputs, data_spec):
        by_bounds = f"; proved by branch and bound: {summary['certified_by_bounds']} of the {summary['points']} " \
            "points of certified radii decided by bounds" if summary["proved_by"] == "bound" else ""
        return [f"{summary['examples']} examples: {summary['misclassified']} misclassified (not certified), "
                f"{summary['empty_spaces']} with an empty space (nothing to certify, not certified), "
                f"{summary['undecided']} undecided; {summary['queries'].get('model_calls', 0)} model calls{by_bounds}"]
