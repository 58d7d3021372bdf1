"""Commands `estimate` and `compare`."""

from __future__ import annotations

from pathlib import Path

import click

from robustcount.cli.common import (check_writable, cli, data_options, model_from, model_options, pr_options,
                                    run_dataset, run_options, space_from, space_options)

PR_KEYS = ("radius", "radius_share", "method", "eps", "delta", "point", "shell_samples")


@cli.command()
@model_options
@data_options
@space_options
@pr_options
@run_options
def estimate(**options):
    """Estimate PR, the share of each example's neighbourhood that keeps the label, with (eps, delta)."""
    from robustcount.runs.spec import RunSpec

    o = options
    spec = RunSpec("estimate", (model_from(o),), o["seed"], space_from(o), {key: o[key] for key in PR_KEYS})
    run_dataset(spec, options)
    if not o["as_json"]:
        click.echo(f"\nmethod {o['method']}, eps {o['eps']}, delta {o['delta']}: each PR lies within eps of its "
                   f"estimate with probability >= {1 - o['delta']}")


@cli.command()
@click.option("--model", "model_specs", multiple=True, required=True, help="Give exactly two.")
@click.option("--device", default="auto", show_default=True)
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1))
@data_options
@space_options
@pr_options
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=Path("compare.png"),
              show_default=True, help="Violin plot of PR_hat per model.")
@run_options
def compare(**options):
    """Compare two models' PR on the same spaces and the same samples, with a paired test and a violin plot."""
    from robustcount.errors import RobustcountError
    from robustcount.report import save_figure, violin_figure
    from robustcount.runs.spec import ModelOptions, RunSpec

    o = options
    if len(o["model_specs"]) != 2:
        raise click.UsageError("compare needs exactly two --model options")
    check_writable(o["plot"])
    models = tuple(ModelOptions(m, o["device"], batch_size=o["batch_size"]) for m in o["model_specs"])
    spec = RunSpec("compare", models, o["seed"], space_from(o), {key: o[key] for key in PR_KEYS})
    summary = run_dataset(spec, options)
    if not summary["paired_examples"]:
        raise RobustcountError("no example is classified correctly by both models")
    title = f"PR on {o['data_spec']} ({o['method']}, eps {o['eps']}, delta {o['delta']})"
    save_figure(violin_figure(summary["pr"], title), o["plot"])
    if not o["as_json"]:
        a, b = o["model_specs"]
        p_value = "n/a (no differences)" if summary["wilcoxon_p"] is None else f"{summary['wilcoxon_p']:.4g}"
        click.echo(f"\npaired on {summary['paired_examples']} examples: mean PR({a}) - PR({b}) = "
                   f"{summary['mean_difference']:.4f}, Wilcoxon signed-rank p = {p_value}; plot: {o['plot']}")
