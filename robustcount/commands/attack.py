"""`attack`: one attack recipe (PDP, TextFooler, BAE, BERT-Attack, the exhaustive oracle, or any
other in `robustcount.attacks`, named as TextAttack names them) on every example, each adversary
re-checked, summed up as TextFooler's Table 3, and each example shown as it finishes
(`AdversaryLog`: a table row with the texts marked, JSON lines with --json, TextAttack's CSV)."""

from __future__ import annotations

import contextlib
import csv
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from statistics import fmean

from robustcount.attacks.recipe import recipe_named, recipe_options, recipe_summaries
from robustcount.attacks.result import SKIPPED, SUCCESS, recorded_status, run_attack
from robustcount.data import label_index
from robustcount.errors import RobustcountError
from robustcount.options import budget_field, option, options_dataclass, time_limit_field, variants
from robustcount.runs.command import (
    Command,
    Planned,
    capped,
    timings_apart,
    window_field,
)
from robustcount.runs.figures import histogram_figure
from robustcount.runs.files import check_writable
from robustcount.runs.report import Section, changed_words, report_text
from robustcount.runs.summaries import seconds_by_index, total_queries
from robustcount.runs.tables import Marked
from robustcount.spaces.coverage import COVERAGE, space_coverage
from robustcount.status import BUDGET, ENDPOINT, POINT_LIMIT, TIME_LIMIT, UNDECIDED, Undecided


@options_dataclass
class AttackOptions:
    """The recipe (`method`), its own options (`settings`, the recipe's options dataclass; a dict
    of its fields is converted, None is its defaults) and the limits every recipe shares."""

    method: str = field(default="pdp", metadata=option(
        "The attack recipe, by TextAttack's name where it has one (--method is the same option); each one's "
        "options follow.", names=("--recipe", "--method")))
    settings: object = field(default=None, metadata=variants("method", recipe_options, recipe_summaries))
    budget: int | None = budget_field()
    time_limit: float = time_limit_field()

    def __post_init__(self):
        options = recipe_named(self.method).Options
        settings = {} if self.settings is None else self.settings
        if isinstance(settings, dict):
            try:
                settings = options(**settings)
            except TypeError as err:
                raise RobustcountError(f"bad settings for the {self.method} recipe: {err}") from None
        if not isinstance(settings, options):
            raise RobustcountError(f"the {self.method} recipe's settings are a {options.__name__}, "
                                   f"not a {type(settings).__name__}")
        object.__setattr__(self, "settings", settings)


LIMIT_LABELS = {BUDGET: "budget exhausted", TIME_LIMIT: "time limit", POINT_LIMIT: "refused", ENDPOINT: "endpoint failed"}
"""How the report's outcomes name an undecided attack by its limit (`refused`: the exhaustive
oracle's shell over its max points), in the words of the statuses before `status.UNDECIDED`."""


def summarise_attacks(records: Sequence[dict]) -> dict:
    """Counts and means over a run's attack records (`AttackResult.as_dict()`).

    An attacked example is `broken` (an adversary), `survived` (the attack found none) or
    `undecided` (a limit stopped it: counted by limit), which is neither: accuracy under attack
    counts the survivors only (it would be at most `undecided / examples` higher), the success
    rate divides the broken by the decided, and queries and seconds per example are means over the
    decided. Substitution means are over the broken, as in the paper's table."""
    n = len(records)
    outcomes = [recorded_status(r) for r in records]
    attacked = [r for r, (status, _) in zip(records, outcomes) if status != SKIPPED]
    broken = [r for r, (status, _) in zip(records, outcomes) if status == SUCCESS]
    decided = [r for r, (status, _) in zip(records, outcomes) if status not in (SKIPPED, UNDECIDED)]
    limits = Counter(limit for status, limit in outcomes if status == UNDECIDED)
    timed = [r["seconds"] for r in decided if r.get("seconds") is not None]
    return {
        "examples": n,
        "skipped": n - len(attacked),
        "attacked": len(attacked),
        "successes": len(broken),
        "survived": len(decided) - len(broken),
        "undecided": len(attacked) - len(decided),
        "budget_exhausted": limits[BUDGET],
        "time_limited": limits[TIME_LIMIT],
        "refused": limits[POINT_LIMIT],
        "original_accuracy": len(attacked) / n if n else float("nan"),
        "accuracy_under_attack": (len(decided) - len(broken)) / n if n else float("nan"),
        "success_rate": len(broken) / len(decided) if decided else float("nan"),
        "mean_substitutions": fmean(r["distance"] for r in broken) if broken else float("nan"),
        "mean_perturbed_share": fmean(r["share"] for r in broken) if broken else float("nan"),
        "queries_per_example": fmean(r["queries"].get("model_calls", 0) + r["queries"].get("gradient_calls", 0)
                                     for r in decided) if decided else float("nan"),
        "seconds_per_example": fmean(timed) if timed and len(timed) == len(decided) else float("nan"),
    }


def attack_row(summary: dict) -> dict:
    """The columns of the attack table (TextFooler's Table 3)."""
    return {
        "examples": summary["examples"],
        "orig. acc.": summary["original_accuracy"],
        "acc. under attack": summary["accuracy_under_attack"],
        "success": summary["success_rate"],
        "undecided": summary["undecided"],
        "mean subs": summary["mean_substitutions"] if summary["successes"] else "n/a (no example broken)",
        "% perturbed": 100 * summary["mean_perturbed_share"] if summary["successes"] else "n/a",
        "queries/ex": summary["queries_per_example"],
        "s/ex": "n/a (no timings)" if math.isnan(summary["seconds_per_example"]) else summary["seconds_per_example"],
        **_limits_column(summary),
    }


def _limits_column(summary: dict) -> dict:
    """The undecided examples by limit: `budget/refused`, with the time-limited between the two
    when the run has any."""
    counts = {"budget": summary["budget_exhausted"], "time limit": summary["time_limited"],
              "refused": summary["refused"]}
    if not counts["time limit"]:
        del counts["time limit"]
    return {"/".join(counts): "/".join(map(str, counts.values()))}


RESULT_TYPES = {SUCCESS: "Successful", SKIPPED: "Skipped"}
"""TextAttack's result types by status; every other status (failed, undecided) is "Failed", as
TextAttack writes an attack whose query budget ran out."""
CSV_COLUMNS = ("original_text", "perturbed_text", "original_score", "perturbed_score", "original_output",
               "perturbed_output", "ground_truth_output", "num_queries", "result_type")
"""The columns of TextAttack's CSV log (`textattack.loggers.CSVLogger`), in its order."""
SPLIT = "<SPLIT>"
"""What TextAttack's CSV puts between a pair's premise and hypothesis."""
HELPER_QUERIES = ("similarity_queries", "masked_lm_queries")
"""The record keys of the helper models' counters: the sentence encoder's and the masked LM's."""


@options_dataclass
class AttackOutputs:
    log_csv: Path | None = field(default=None, metadata=option(
        "Also log every example to this CSV file, in TextAttack's columns (original_text, perturbed_text, ..., "
        "result_type), as each finishes.", names=("--log-csv",), kind=Path))


def adversary_view(record: dict) -> dict:
    """An attack record as users read it: the result type, both texts with the changed words
    marked (`[[word]]`), the gold label and the label now with their probabilities, the
    substitutions and the queries (of the attacked model, and of any helper model)."""
    original = record.get("original_probs") or {}
    adversarial = record.get("adversarial_probs")
    gold = record["gold"]
    if adversarial:
        now = max((label for label in adversarial if label != gold), key=adversarial.get)
        now_p = adversarial[now]
    elif record.get("adversarial") is not None:  # a run file from before adversaries' probabilities were kept
        now, now_p = "not recorded", None
    else:
        now = max(original, key=original.get) if original else gold
        now_p = original.get(now)
    text, changed = record["input"], record.get("adversarial")
    status, limit = recorded_status(record)
    substitutions = []
    if changed is not None:
        before, after = changed_words(changed, text), changed_words(text, changed)
        if isinstance(before, Marked) and isinstance(after, Marked):
            substitutions = [[old, new] for (old, marked), (new, _) in zip(before.parts, after.parts) if marked]
    return {"index": record["index"], "id": record["id"], "result": RESULT_TYPES.get(status, "Failed"),
            "status": status, **({"limit": limit} if status == UNDECIDED else {}),
            "original": _bracketed(text, changed),
            "adversarial": _bracketed(changed, text) if changed is not None else None,
            "gold": {"label": gold, "probability": original.get(gold)}, "now": {"label": now, "probability": now_p},
            "substitutions": substitutions, "queries": _model_queries(record),
            **{key: record[key]["model_calls"] for key in HELPER_QUERIES if key in record}}


def _model_queries(record: dict) -> int:
    return record["queries"].get("model_calls", 0) + record["queries"].get("gradient_calls", 0)


def _bracketed(text, other, split: str = " / ") -> str:
    """`text` (a text, or a [premise, hypothesis] pair joined by `split`) with the words that
    differ from `other` in [[double brackets]], as TextAttack marks them in files."""
    if isinstance(text, list):
        return text[0] + split + _bracketed(text[1], None if other is None else other[1])
    marked = changed_words(other, text) if other is not None else text
    if not isinstance(marked, Marked):
        return marked
    return "".join(f"[[{part}]]" if flagged else part for part, flagged in marked.parts)


class AdversaryLog:
    """Each attacked example as it finishes: a table row and its two texts (or a JSON line of
    `adversary_view` with --json) through `echo`, and a row of TextAttack's CSV in `csv_path`.
    A resumed run's earlier examples go to the CSV only (they were shown when they ran)."""

    WIDTHS = (5, 12, 11, 22, 22, 5, 8)
    HEADERS = ("#", "id", "result", "gold (p)", "now (p)", "subs", "queries")

    def __init__(self, echo, as_json: bool, csv_path: Path | None):
        self.echo, self.as_json, self.csv_path = echo, as_json, csv_path
        self.shown, self.file, self.writer = 0, None, None

    def __call__(self, record: dict, resumed: bool) -> None:
        record = json.loads(json.dumps(record))  # as the run file holds it (a pair is a list)
        view = adversary_view(record)
        if self.csv_path is not None:
            self._csv_row(record, view)
        if resumed:
            return
        if self.as_json:
            self.echo(json.dumps(view, ensure_ascii=False))
        else:
            if not self.shown:
                self.echo(self._row(self.HEADERS))
            gold, now = view["gold"], view["now"]
            self.echo(self._row((record["index"] + 1, view["id"], view["result"], _labelled(gold), _labelled(now),
                                 len(view["substitutions"]) if view["adversarial"] else "-", view["queries"])))
            if view["adversarial"] is not None:
                self.echo(f"      - {view['original']}\n      + {view['adversarial']}")
        self.shown += 1

    def _row(self, values) -> str:
        return " ".join(str(v).ljust(w) for v, w in zip(values, self.WIDTHS)).rstrip()

    def _csv_row(self, record: dict, view: dict) -> None:
        if self.writer is None:
            self.file = self.csv_path.open("w", newline="", encoding="utf-8")
            self.writer = csv.writer(self.file, quoting=csv.QUOTE_NONNUMERIC)
            self.writer.writerow(CSV_COLUMNS)
        original = record.get("original_probs") or {}
        labels = list(original)
        perturbed = record.get("adversarial_probs") or original
        gold = labels.index(record["gold"]) if record["gold"] in labels else record["gold"]
        text, changed = record["input"], record.get("adversarial")
        self.writer.writerow([
            _bracketed(text, changed, SPLIT), _bracketed(changed if changed is not None else text, text, SPLIT),
            1 - original.get(record["gold"], 0.0), 1 - perturbed.get(record["gold"], 0.0),
            _predicted(original, labels), _predicted(perturbed, labels), gold, view["queries"], view["result"]])
        self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _labelled(output: dict) -> str:
    p = output["probability"]
    return output["label"] if p is None else f"{output['label']} ({p:.3f})"


def _predicted(probs: dict, labels: list) -> int | str:
    """The index of the most probable label (TextAttack's output), or "" when unknown."""
    return labels.index(max(probs, key=probs.get)) if probs else ""


class Attack(Command, name="attack", options=AttackOptions, outputs=AttackOutputs):
    """Attack every example with one recipe (--recipe, TextAttack's names): PDP (fewest
    substitutions), TextFooler (the baseline), BAE, BERT-Attack, the exhaustive oracle, ...;
    each example is shown as it finishes."""

    def space_for(self, options: AttackOptions, space):
        """The recipe's space preset (the run header records the space it gives)."""
        return None if space is None else recipe_named(options.method).space(space, options.settings)

    def task(self, worker, spec, examples):
        """Each record holds the recipe's result, the probabilities of the input and of the
        adversary (from the engine's cache: they add no model call to the example's), and the
        counters of the helper models apart: the sentence encoder's, and the masked LM's of a
        recipe that declares one (`Recipe.uses_masked_lm`), both the worker's."""
        o: AttackOptions = spec.options
        recipe = recipe_named(o.method)
        encoder = worker.sentence_encoder() if recipe.uses_sentence_encoder(o.settings) else None
        named = recipe.uses_masked_lm(o.settings)
        masked_lm = worker.masked_lm(named) if named is not None else None
        engine = worker.engine
        for example in examples:
            space = worker.build(example.input)
            gold = label_index(example.label, engine.labels)
            if masked_lm is not None:
                masked_lm.clear_cache()  # an example's counts never depend on the examples before it
            with contextlib.ExitStack() as stack:
                helpers = {key: stack.enter_context(helper.example())
                           for key, helper in zip(HELPER_QUERIES, (encoder, masked_lm)) if helper is not None}
                result = run_attack(o.method, recipe.attack, engine, space, gold, o.budget, o.time_limit,
                                    options=o.settings, sentence_encoder=encoder, masked_lm=masked_lm)
            probabilities = {"original_probs": _by_label(engine, example.input),
                             "adversarial_probs": _by_label(engine, result.adversarial)
                             if result.adversarial is not None else None}
            yield timings_apart({"id": example.id, **result.as_dict(), "gold": engine.labels[result.gold],
                                 "space_digest": space.digest(), "space_positions": len(space.positions),
                                 COVERAGE: space_coverage(space, None),
                                 **window_field(space),
                                 **probabilities, **{key: stats.as_dict() for key, stats in helpers.items()}})

    def plan(self, spec, space, example):
        """The recipe's own bound on its model calls (`Recipe.planned_calls`), about Omega_r at the
        recipe's radius (every position unless it has a --radius)."""
        o: AttackOptions = spec.options
        radius = getattr(o.settings, "radius", None)
        radius = space.max_radius() if radius is None else radius
        calls = recipe_named(o.method).planned_calls(space, o.settings)
        basis = f"{o.method}'s bound on the attacked model's calls" if calls is not None else \
            f"the {o.method} recipe declares no bound on its model calls"
        return capped(Planned(calls, basis, radius=radius, size=space.count(radius)), o.budget)

    def check(self, spec, outputs) -> None:
        if outputs.log_csv is not None:
            check_writable(outputs.log_csv)

    def example_log(self, spec, outputs, as_json, echo):
        return AdversaryLog(echo, as_json, outputs.log_csv)

    def undecided(self, record):
        status, limit = recorded_status(record)
        return Undecided((limit,), record["reason"]) if status == UNDECIDED else None

    def summarise(self, run) -> dict:
        seconds = seconds_by_index(run)
        timed = [{**r, "seconds": seconds.get(r["index"])} for r in run.records]
        return {"method": run.options.method, **summarise_attacks(timed),
                "queries": total_queries(run.records)}

    def table(self, summary):
        row = attack_row(summary)
        return list(row), [list(row.values())]

    def sections(self, run, summary):
        statuses = Counter(_outcome(r) for r in run.records)
        broken = [r for r in run.records if r["status"] == SUCCESS]
        figures = []
        if broken:
            distances = [r["distance"] for r in broken]
            figures.append(("substitutions", histogram_figure(
                {"adversaries": distances}, "substitutions in the adversary",
                bins=range(min(distances), max(distances) + 2), align="left")))
        shown = broken[:20]
        views = [adversary_view(r) for r in shown]
        return [Section(f"Attack ({summary['method']})",
                        tables=[("Outcomes", ["status", "examples"], sorted(statuses.items())),
                                (f"Adversaries (first {len(shown)} of {len(broken)})",
                                 ["id", "substitutions", "gold (p)", "now (p)", "original", "adversarial"],
                                 [[r["id"], r["distance"], _labelled(v["gold"]), _labelled(v["now"]),
                                   report_text(r["input"]), changed_words(r["input"], r["adversarial"])]
                                  for r, v in zip(shown, views)])],
                        figures=figures)]


def _outcome(record: dict) -> str:
    """A record's row of the report's outcomes: its status, or an undecided one's limit (LIMIT_LABELS)."""
    status, limit = recorded_status(record)
    return LIMIT_LABELS.get(limit, status) if status == UNDECIDED else status


def _by_label(engine, item) -> dict[str, float]:
    """The model's probability of each label for `item` (asked outside any example: uncounted there)."""
    return dict(zip(engine.labels, map(float, engine.predict_proba([item])[0])))
