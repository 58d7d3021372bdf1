"""Every registered attack recipe side by side: the same model, examples and shared space
(docs/attacks/recipes.md).

Each recipe runs as `robustcount attack --method NAME` would, into a run file of its own under
`--cache` (default docs/attacks/recipe-runs/, in a folder named by the model and the
sample), resumed when it is there: rerunning the script after more recipes are registered runs
only what is missing. The examples: a seeded sample of the demo:test sentences of at most
`--max-words` words, written to that folder as a data file, so every recipe attacks the same ones.
The page shows each recipe's module docstring (its settings, and where TextAttack 0.3.11 and the
offline resources differ from the paper) and each paper's reported figure beside ours.

Variants, for every recipe: its defaults (the paper's setting and the paper's own candidates);
`--follow textattack` where the recipe offers it; `--transformation space` (the shared space: the
default `synonyms` table, stop words left alone) where it offers that; TextFooler's official-code
setting; and the greedy baseline (TextFooler without its POS and similarity checks). Every run
has a time limit per example (`--time-limit`), whose examples count as undecided.

Run: `.venv/bin/python experiments/recipe_comparison.py --examples 40 --max-words 12`
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import random
from pathlib import Path

from robustcount.attacks.recipe import recipes
from robustcount.cli import main as robustcount
from robustcount.commands.attack import Attack, attack_row
from robustcount.data import load_demo
from robustcount.runs import read_run
from robustcount.runs.tables import format_table
from robustcount.spaces.sources import registered
from robustcount.text import tokenize

CACHE = Path("docs/attacks/recipe-runs")
OUT = Path("docs/attacks/recipes.md")
PAPERS = {  # recipe: (what its paper reports, why our figures differ)
    "pwws": ("the lowest accuracy after attack of the attacks it compares, on IMDB, AG's News and Yahoo! Answers "
             "against word-CNN, Bi-LSTM and char-CNN models (Ren et al. 2019, section 4; figures not restated here)",
             "short snippets of the demo data, a small MiniLM model, OEWN 2024 lemma synonyms (fewer candidates than "
             "NLTK's lemmatising lookup), no named-entity substitution"),
    "deepwordbug": ("a mean accuracy drop of 68% for a word-LSTM and 48% for a char-CNN over eight data sets "
                    "(Gao et al. 2018, abstract)",
                    "short sentences, where few edits fit before the label holds; a subword transformer, which one "
                    "character edit hurts less than it hurts a word-LSTM (whose edited word is out of vocabulary)"),
    "textbugger": ("a 100% success rate against AWS Comprehend on IMDB, 97% semantic similarity "
                   "(Li et al. 2019, abstract)",
                   "long IMDB reviews against a commercial API there; short snippets and MiniLM similarity here"),
    "alzantot": ("97% success with 14.7% of the words changed, IMDB LSTM; 70% and 23% on SNLI (Alzantot et al. 2018, "
                 "Table 1)",
                 "the sentence encoder instead of the Google 1B language model; short texts, where 20% of the words "
                 "is one or two words"),
    "pso": ("the highest success rates of the attacks it compares, on IMDB and SST-2 against Bi-LSTM and BERT "
            "(Zang et al. 2020; figures not restated here)",
            "WordNet synonyms instead of HowNet sememes (HowNet is not offline): fewer candidates per word"),
    "a2t": ("an attack cheap enough for adversarial training, weaker than TextFooler or BAE as an attack "
            "(Yoo & Qi 2021; figures not restated here)",
            "the counter-fitted table (at most 8) instead of the 20 nearest counter-fitted vectors; MiniLM "
            "instead of stsb-distilbert-base; on sentences this short the stop words leave about three positions "
            "a sentence, and its part-of-speech and 0.9-similarity checks send few of their candidates to the "
            "model (its queries per example)"),
    "bae": ("BAE-R's attacks on BERT, word-LSTM and word-CNN over sentiment and topic data (Garg & Ramakrishnan "
            "2020; figures not restated here)",
            "the packaged masked LM (a head on the frozen MiniLM encoder, top-10 recovery of masked demo words "
            "26%, docs/attacks/masked-lm.md) instead of BERT-base's; short snippets"),
    "bert-attack": ("attacks on fine-tuned BERT with few queries and few perturbed words (Li et al. 2020; figures "
                    "not restated here)",
                    "the packaged masked LM instead of BERT-base's (far weaker at recovering words); short snippets"),
    "textfooler": ("MR, BERT: accuracy 86.0% to 11.5%, 16.7% of the words perturbed, 166 queries (Jin et al. 2020, "
                   "Table 3)",
                   "the shared synonym table instead of 50 counter-fitted neighbours, MiniLM instead of USE "
                   "(docs/attacks/comparison-synonyms.md)"),
}
EXTRA = {"textfooler": {"official-code": ["--setting", "official-code"],
                        "greedy baseline": ["--no-pos-check", "--no-similarity-check"]}}


def variants() -> dict[str, tuple[str, list[str]]]:
    """Every variant's label: (recipe, its options on the command line)."""
    out = {}
    for name, recipe in recipes().items():
        if name == "exhaustive":
            continue  # the oracle's cost grows with the space; docs/attacks/comparison-*.md hold it
        fields = {f.name: f for f in dataclasses.fields(recipe.Options)}
        out[name] = (name, [])
        if "follow" in fields:  # the setting the recipe does not run by default
            other = "textattack" if fields["follow"].default == "paper" else "paper"
            out[f"{name} ({other})"] = (name, ["--follow", other])
        if "transformation" in fields:
            out[f"{name} (shared space)"] = (name, ["--transformation", "space"])
        for label, options in EXTRA.get(name, {}).items():
            out[f"{name} ({label})" if label != "greedy baseline" else "greedy baseline"] = (name, options)
    return out


def example_file(folder: Path, examples: int, max_words: int, seed: int) -> Path:
    path = folder / "examples.jsonl"
    if not path.is_file():
        short = [e for e in load_demo("test") if len(tokenize(e.input).words) <= max_words]
        chosen = random.Random(seed).sample(short, min(examples, len(short)))
        path.write_text("".join(json.dumps({"id": e.id, "text": e.input, "label": e.label}) + "\n" for e in chosen))
    return path


def run_variant(folder: Path, data: Path, label: str, method: str, options: list[str], args) -> Path:
    out = folder / (label.replace(" ", "_").replace("(", "").replace(")", "") + ".jsonl")
    command = ["attack", "--method", method, *options, "--model", args.model, "--data", str(data),
               "--id-column", "id", "--time-limit", str(args.time_limit), "--output", str(out)]
    code = robustcount([*command, "--resume"] if out.is_file() else command)
    if code != 0:
        raise SystemExit(f"{label}: attack exited with {code}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="minilm-rt")
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--max-words", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--only", nargs="*", help="Run only these variants (labels); the page shows every cached one.")
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args()
    folder = args.cache / f"{args.model}-n{args.examples}-w{args.max_words}-s{args.seed}"
    folder.mkdir(parents=True, exist_ok=True)
    data = example_file(folder, args.examples, args.max_words, args.seed)
    summaries, details = {}, []
    for label, (method, options) in variants().items():
        out = folder / (label.replace(" ", "_").replace("(", "").replace(")", "") + ".jsonl")
        if args.only is None or label in args.only:
            out = run_variant(folder, data, label, method, options, args)
        if not out.is_file():
            continue
        run = read_run(out)
        if len(run.records) < args.examples:
            continue
        summaries[label] = Attack().summarise(run)
        sources = ", ".join(s["source"] for s in run.header["space"]["sources"])
        details.append([label, f"`{' '.join(['--method', method, *options])}`", sources])
    write_page(args, summaries, details)


COLUMNS = ("orig. acc.", "acc. under attack", "success", "undecided", "% perturbed", "queries/ex", "s/ex")


def ours(summary: dict) -> str:
    row = attack_row(summary)
    return (f"success {row['success']:.0%}, accuracy {row['orig. acc.']:.0%} to {row['acc. under attack']:.0%}, "
            f"{row['% perturbed']:.1f}% perturbed, {row['queries/ex']:.0f} queries")


def shared_space_finding(summaries: dict) -> list[str]:
    """A sentence comparing the recipes in the shared space with PDP, from the figures."""
    shared = {label: s["success_rate"] for label, s in summaries.items()
              if label.endswith("(shared space)") or label in ("pdp", "textfooler", "greedy baseline")}
    if "pdp" not in shared or len(shared) < 2:
        return []
    best = max(shared.values())
    above = [label for label, rate in shared.items() if rate > shared["pdp"]]
    return [f"In the shared space (the rows marked so, TextFooler's, the greedy baseline's and PDP's) the highest "
            f"success is {best:.1%}; " + (f"{', '.join(above)} succeed more often than PDP." if above else
                                         f"none exceeds PDP's {shared['pdp']:.1%}, which finds an adversary wherever the "
                                         "exhaustive oracle does in such spaces (docs/attacks/comparison-synonyms.md): "
                                         "with a few synonyms for a few words most short sentences hold none, and a "
                                         "recipe's constraints (similarity, part of speech, a share of the words) "
                                         "can only lower its success there."), ""]


def looser_candidates() -> str:
    """Why the rows on the papers' own candidates succeed more often: their sources' judged precision."""
    judged = {name: registered()[name].precision for name in ("synonyms", "counter-fitted", "wordnet")}
    return ("The rows on the papers' own candidates succeed far more often than the same searches in the shared space "
            "because those candidates are far looser: readers judged "
            + ", ".join(f"{share:.0%} of `{name}`'s pairs" for name, share in judged.items())
            + " substitutable (`robustcount source-quality`), and a character edit is no synonym at all; their "
              "success measures the space as much as the search.\n")


def write_page(args, summaries: dict, details: list) -> None:
    rows = [[label, *(attack_row(s)[k] for k in COLUMNS)] for label, s in summaries.items()]
    table = format_table(["recipe", *COLUMNS], rows)
    command = (f"`.venv/bin/python experiments/recipe_comparison.py --model {args.model} --examples {args.examples} "
               f"--max-words {args.max_words} --seed {args.seed} --time-limit {args.time_limit:g}`")
    papers = format_table(["recipe", "the paper reports", "ours (its default row)", "why ours differs"],
                          [[name, PAPERS[name][0], ours(summaries[name]) if name in summaries else "not run",
                            PAPERS[name][1]] for name in recipes() if name in PAPERS])
    notes = []
    for name, recipe in recipes().items():
        if name not in ("pdp", "exhaustive"):
            notes += [f"### {name}", "", inspect.getdoc(importlib.import_module(type(recipe).__module__)), ""]
    lines = ["# The attack recipes side by side", "",
             f"Model {args.model}; {args.examples} demo:test sentences of at most {args.max_words} words (a sample "
             f"seeded {args.seed}), the same for every recipe; a time limit of {args.time_limit:g} s per example "
             "(an example past it is undecided). Command: " + command + " (each recipe's run file is kept "
             f"under {args.cache}/ and resumed, so a rerun runs only recipes not yet there). The sample is sized "
             "to finish in about half an hour on the 2-core machine shared by six engineers.",
             "", "Success divides the broken by the decided examples; after-attack accuracy is the survivors' share of "
             "all examples; % perturbed is the mean share of words changed in an adversary; queries are the attacked "
             "model's calls per decided example, each distinct text once (the engine's cache answers a repeat: the "
             "genetic attack and PSO evaluate thousands of population members per example, most of them repeats; "
             "each record's `queries` holds both counts, and the sentence encoder's calls are counted apart, in "
             "`similarity_queries`); seconds per example on that shared machine. A row without a mark runs the "
             "recipe's default setting on its paper's candidates (the paper's, but TextAttack's for bae and "
             "bert-attack); `(textattack)` TextAttack 0.3.11's setting, `(paper)` the paper's; "
             "`(shared space)` the recipe's search and constraints on the default `synonyms` table with stop words "
             "left alone, the space PDP, TextFooler and the greedy baseline attack.", "", table, "",
             *shared_space_finding(summaries), looser_candidates(),
             "bae and bert-attack take their candidates from the packaged masked LM, not from a table (the "
             "candidate-source column names only what the space's filters read): it recovers a masked demo word in "
             "its top 10 only 26% of the time (docs/attacks/masked-lm.md), so many of its candidates do not keep the "
             "meaning (bert-attack turns \"Shohei Imamura\" into \"Shohei fithat\"), and these two recipes' "
             "success here says more about that masked LM than about the model. Give a BERT checkpoint with "
             "--masked-lm for the papers' setting.", "",
             "TextAttack itself is not run here: its recipes download word embeddings, the Universal Sentence "
             "Encoder and language models at run time, which these machines cannot; each recipe's notes below say "
             "where it follows TextAttack's code and where the offline resources differ.", "",
             "## What each row ran", "",
             format_table(["recipe", "options", "candidate sources"], details), "",
             "## Beside the papers", "", papers, "",
             "## Each recipe, its settings, and where TextAttack and the offline resources differ from the paper",
             "", "(Each recipe module's docstring.)", "", *notes]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
