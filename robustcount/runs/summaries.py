"""The summary of a run, computed from its records alone (so a resumed or parallel run summarises
the same), with the tables the CLI prints and the report shows."""

from __future__ import annotations

from collections import Counter
from statistics import median

from robustcount.runs.files import Run


def summarise_run(run: Run) -> dict:
    """The command's summary of `run`, ending with the run's whole header (versions, seed, model
    digests, space definition, data digest), so that a summary also says what produced it."""
    header = run.header
    return {"command": header["command"], "models": [m["spec"] for m in header["models"]],
            "data": header["data"]["spec"], "seed": header["seed"], "examples": len(run.records),
            "planned_examples": header["data"]["examples"], "complete": len(run.records) == header["data"]["examples"],
            **SUMMARIES[header["command"]](run), "run": header}


def total_queries(records) -> dict:
    """Sums of the per-example query counters."""
    total = Counter()
    for record in records:
        for queries in [record.get("queries")] + [m.get("queries") for m in record.get("models", [])]:
            total.update(queries or {})
    return dict(total)


def seconds_by_index(run: Run) -> dict[int, float]:
    """Wall seconds per example, from the timings (a chunk's time split evenly over its examples;
    the last timing of an example wins when a chunk was re-run)."""
    seconds = {}
    for timing in run.timings:
        if timing.get("record") == "chunk" and timing["indices"]:
            share = timing["seconds"] / len(timing["indices"])
            seconds.update((i, share) for i in timing["indices"])
    return seconds


def _evaluate(run: Run) -> dict:
    from scipy.stats import binomtest

    labelled = [r for r in run.records if r["correct"] is not None]
    correct = sum(r["correct"] for r in labelled)
    n = len(labelled)
    interval = binomtest(correct, n).proportion_ci(0.95, method="exact") if n else None
    return {"labelled": n, "correct": correct, "accuracy": correct / n if n else float("nan"),
            "ci95": [interval.low, interval.high] if interval else None}


def _zeroe(run: Run) -> dict:
    from robustcount.zeroe_benchmark import rows_as_dicts, zeroe_rows

    records = run.records
    if not records:
        return {"clean_accuracy": None, "majority_baseline": None, "rows": []}
    clean, rows = zeroe_rows(records)
    majority = max(Counter(r["gold"] for r in records).values()) / len(records)
    return {"clean_accuracy": clean, "majority_baseline": majority, "rows": rows_as_dicts(rows)}


def _attack(run: Run) -> dict:
    from robustcount.attacks.summary import summarise

    seconds = seconds_by_index(run)
    timed = [{**r, "seconds": seconds.get(r["index"])} for r in run.records]
    return {"method": run.header["options"]["method"], **summarise(timed), "queries": total_queries(run.records)}


def _certify(run: Run) -> dict:
    """Certified counts per radius, up to the largest radius any example's space reaches (beyond
    it every Omega_r is its whole space); empty spaces certify nothing and are counted apart."""
    radius = run.header["options"]["radius"]
    records, n = run.records, len(run.records)
    shown = min(radius, max((rec.get("space_positions", radius) for rec in records), default=radius)) or 1
    certified = {r: sum(rec.get("certified_radius", 0) >= r or bool(rec.get("whole_space_certified"))
                        for rec in records) for r in range(1, shown + 1)}
    return {"radius": radius, "misclassified": sum(not r["correct"] for r in records),
            "empty_spaces": sum(r.get("space_positions") == 0 for r in records),
            "undecided": sum(bool(r.get("undecided")) for r in records), "certified": certified,
            "certified_share": {r: c / n if n else float("nan") for r, c in certified.items()},
            "queries": total_queries(records)}


def _radius(run: Run) -> dict:
    kinds = Counter(r["kind"] for r in run.records)
    return {**{k: kinds[k] for k in ("exact", "bracketed", "misclassified")}, "queries": total_queries(run.records)}


def _estimate(run: Run) -> dict:
    from robustcount.count import hoeffding_n, summarise_pr

    o = run.header["options"]
    estimates = [r["estimate"] for r in run.records if r["estimate"]]
    return {"method": o["method"], "eps": o["eps"], "delta": o["delta"],
            **summarise_pr([e["pr"] for e in estimates]),
            "misclassified": sum(not r["correct"] for r in run.records),
            "median_samples": median(e["samples"] for e in estimates) if estimates else None,
            "hoeffding_n": hoeffding_n(o["eps"], o["delta"]), "by_distance": _by_distance(run.records),
            "queries": total_queries(run.records)}


def _by_distance(records: list[dict]) -> dict[str, dict]:
    """Per exact distance d: the examples whose shell at d was measured and their mean PR there."""
    shares: dict[int, list[float]] = {}
    for record in records:
        for shell in record.get("by_distance") or []:
            shares.setdefault(shell["distance"], []).append(shell["pr"])
    return {str(d): {"examples": len(values), "mean_pr": sum(values) / len(values)}
            for d, values in sorted(shares.items())}


def _compare(run: Run) -> dict:
    from scipy.stats import wilcoxon

    from robustcount.count import summarise_pr

    specs = [m["spec"] for m in run.header["models"]]
    per_model = {spec: [m["estimate"]["pr"] for r in run.records for m in r["models"]
                        if m["model"] == spec and m["estimate"]] for spec in specs}
    both = [[m["estimate"]["pr"] for m in r["models"]] for r in run.records if all(m["estimate"] for m in r["models"])]
    differences = [a - b for a, b in both]
    test = wilcoxon(differences) if any(differences) else None
    o = run.header["options"]
    return {"method": o["method"], "eps": o["eps"], "delta": o["delta"],
            "models_summary": {spec: summarise_pr(values) for spec, values in per_model.items()},
            "pr": per_model, "paired_examples": len(both),
            "mean_difference": sum(differences) / len(differences) if differences else None,
            "wilcoxon_p": None if test is None else float(test.pvalue), "queries": total_queries(run.records)}


SUMMARIES = {"evaluate": _evaluate, "zeroe": _zeroe, "attack": _attack, "certify": _certify, "radius": _radius,
             "estimate": _estimate, "compare": _compare}


def summary_table(summary: dict) -> tuple[list[str], list[list]]:
    """The headers and rows of the table that sums up `summary`."""
    command = summary["command"]
    if command == "evaluate":
        ci = summary["ci95"]
        return (["model", "data", "examples", "accuracy", "95% CI"],
                [[summary["models"][0], summary["data"], summary["examples"], summary["accuracy"],
                  f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"]])
    if command == "zeroe":
        return (["attack", "level", "accuracy", "relative", "changed"],
                [["none", "-", summary["clean_accuracy"], 1.0, 0.0]]
                + [[r["attack"], r["level"], r["accuracy"], r["relative"], r["changed"]] for r in summary["rows"]])
    if command == "attack":
        row = attack_row(summary)
        return list(row), [list(row.values())]
    if command == "certify":
        return (["radius", "certified", "share of examples"],
                [[r, summary["certified"][r], summary["certified_share"][r]] for r in summary["certified"]])
    if command == "radius":
        return (["examples", "exact radius", "bracketed only", "misclassified"],
                [[summary["examples"], summary["exact"], summary["bracketed"], summary["misclassified"]]])
    if command == "estimate":
        return (["examples", "misclassified", "median PR", "PR > 0.9", "median samples", "Hoeffding N",
                 "model calls"],
                [[summary["examples"], summary["misclassified"], summary["median"], summary["share_above_0.9"],
                  summary["median_samples"], summary["hoeffding_n"], summary["queries"].get("model_calls", 0)]])
    if command == "compare":
        return (["model", "estimated", "median PR", "PR > 0.9"],
                [[spec, s["estimated"], s["median"], s["share_above_0.9"]]
                 for spec, s in summary["models_summary"].items()])
    raise ValueError(f"no table for command {command!r}")


def attack_row(summary: dict) -> dict:
    """The columns of the attack table (TextFooler's Table 3)."""
    return {
        "examples": summary["examples"],
        "orig. acc.": summary["original_accuracy"],
        "acc. under attack": summary["accuracy_under_attack"],
        "success": summary["success_rate"],
        "undecided": summary["undecided"],
        "mean subs": summary["mean_substitutions"],
        "% perturbed": 100 * summary["mean_perturbed_share"],
        "queries/ex": summary["queries_per_example"],
        "s/ex": summary["seconds_per_example"],
        "budget/refused": f"{summary['budget_exhausted']}/{summary['refused']}",
    }
