"""Commands `estimate` and `compare`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from tqdm import tqdm

from robustcount import __version__
from robustcount.cli.common import (load_examples, load_cli_model, space_builder, cli,
                                    data_options, model_options, pr_options, space_options)


def _estimate_all(engine, examples, build, radius, radius_share, method, eps, delta, seed, on_record, desc):
    """PR estimates for every correctly classified example; misclassified ones are recorded as such."""
    from robustcount.count import default_radius, estimate_pr
    from robustcount.data import label_index
    from robustcount.seeding import derive_seed

    records = []
    for example in tqdm(examples, desc=desc, unit="ex", file=sys.stderr, disable=None):
        space = build(example.input)
        gold = label_index(example.label, engine.labels)
        example_seed = derive_seed(seed, example.id)
        with engine.example() as stats:
            correct = int(engine.predict([example.input])[0]) == gold
            r = radius if radius is not None else default_radius(space, radius_share)
            found = estimate_pr(engine, space, gold, r, method=method, eps=eps, delta=delta,
                                seed=example_seed) if correct else None
        record = {"id": example.id, "input": example.input, "gold": engine.labels[gold], "correct": correct,
                  "seed": seed, "example_seed": example_seed, "space_digest": space.digest(),
                  "estimate": None if found is None else found.as_dict(), "queries": stats.as_dict()}
        records.append(record)
        on_record(record)
    return records


@cli.command()
@model_options
@data_options
@space_options("truncate")
@pr_options
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def estimate(model_spec, device, precision, batch_size, trust_remote_code, data_spec, text_column, label_column,
             premise_column, id_column, split, encoding, sample, seed, sources, stop_words, min_length,
             max_candidates, skip_positions, same_pos, radius, radius_share, method, eps, delta, output, as_json):
    """Estimate PR, the share of each example's neighbourhood that keeps the label, with (eps, delta)."""
    from statistics import median

    from robustcount.count import hoeffding_n, summarise_pr
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table, results_file

    examples = load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                             encoding, sample, seed)
    build = space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = load_cli_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    run = {"command": "estimate", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
           "sources": list(sources), "radius": radius, "radius_share": radius_share, "method": method,
           "eps": eps, "delta": delta, "robustcount": __version__}
    with results_file(output, run) as save:
        records = _estimate_all(engine, examples, build, radius, radius_share, method, eps, delta, seed, save,
                                "estimate")
    estimates = [r["estimate"] for r in records if r["estimate"]]
    summary = {**run, "examples": len(records), **summarise_pr([e["pr"] for e in estimates]),
               "misclassified": sum(not r["correct"] for r in records),
               "median_samples": median(e["samples"] for e in estimates) if estimates else None,
               "hoeffding_n": hoeffding_n(eps, delta), "queries": engine.total.as_dict()}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(
        ["examples", "misclassified", "median PR", "PR > 0.9", "median samples", "Hoeffding N", "model calls"],
        [(len(records), summary["misclassified"], summary["median"], summary["share_above_0.9"],
          summary["median_samples"], summary["hoeffding_n"], engine.total.model_calls)]))
    click.echo(f"\nmethod {method}, eps {eps}, delta {delta}: each PR lies within eps of its estimate "
               f"with probability >= {1 - delta}")


@cli.command()
@click.option("--model", "model_specs", multiple=True, required=True, help="Give exactly two.")
@click.option("--device", default="auto", show_default=True)
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1))
@data_options
@space_options("truncate")
@pr_options
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=Path("compare.png"),
              show_default=True, help="Violin plot of PR_hat per model.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example and model here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def compare(model_specs, device, batch_size, data_spec, text_column, label_column, premise_column, id_column,
            split, encoding, sample, seed, sources, stop_words, min_length, max_candidates, skip_positions,
            same_pos, radius, radius_share, method, eps, delta, plot, output, as_json):
    """Compare two models' PR on the same spaces and the same samples, with a paired test and a violin plot."""
    from scipy.stats import wilcoxon

    from robustcount.count import summarise_pr
    from robustcount.errors import RobustcountError
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table, results_file, violin_plot

    if len(model_specs) != 2:
        raise click.UsageError("compare needs exactly two --model options")
    examples = load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                             encoding, sample, seed)
    build = space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    run = {"command": "compare", "models": list(model_specs), "data": data_spec, "sample": sample, "seed": seed,
           "sources": list(sources), "radius": radius, "radius_share": radius_share, "method": method,
           "eps": eps, "delta": delta, "robustcount": __version__}
    per_model = {}
    with results_file(output, run) as save:
        for spec in model_specs:
            engine = QueryEngine(load_cli_model(spec, device, "float32", batch_size, False), batch_size=batch_size)
            per_model[spec] = _estimate_all(engine, examples, build, radius, radius_share, method, eps, delta,
                                            seed, lambda record, spec=spec: save({"model": spec, **record}), spec)
    a, b = model_specs
    both = [(x["estimate"]["pr"], y["estimate"]["pr"]) for x, y in zip(per_model[a], per_model[b])
            if x["estimate"] and y["estimate"]]
    if not both:
        raise RobustcountError("no example is classified correctly by both models")
    differences = [x - y for x, y in both]
    test = wilcoxon(differences) if any(differences) else None
    summaries = {spec: summarise_pr([r["estimate"]["pr"] for r in per_model[spec] if r["estimate"]])
                 for spec in model_specs}
    violin_plot({spec: [r["estimate"]["pr"] for r in per_model[spec] if r["estimate"]] for spec in model_specs},
                plot, f"PR on {data_spec} ({method}, eps {eps}, delta {delta})")
    summary = {**run, "models_summary": summaries, "paired_examples": len(both),
               "mean_difference": sum(differences) / len(differences),
               "wilcoxon_p": None if test is None else float(test.pvalue), "plot": str(plot)}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(["model", "estimated", "median PR", "PR > 0.9"],
                            [(spec, s["estimated"], s["median"], s["share_above_0.9"]) for spec, s in summaries.items()]))
    p_value = "n/a (no differences)" if test is None else f"{test.pvalue:.4g}"
    click.echo(f"\npaired on {len(both)} examples: mean PR({a}) - PR({b}) = {summary['mean_difference']:.4f}, "
               f"Wilcoxon signed-rank p = {p_value}; plot: {plot}")
