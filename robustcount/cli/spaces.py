"""Commands `perturb`, `space` and `source-quality`."""

from __future__ import annotations

import json
import sys

import click

from robustcount.attacks.zeroe_protocol import zeroe_attack
from robustcount.cli.common import (
    DATA,
    MODEL,
    command_line_text,
    model_from,
    model_options,
    space_from,
    space_options,
    utf8_text,
)
from robustcount.cli.group import cli
from robustcount.cli.options import click_options
from robustcount.data import DataSpec, load_data
from robustcount.options import MAX_RADIUS
from robustcount.runs.tables import format_table
from robustcount.spaces.build import english_stop_words
from robustcount.spaces.judged import PAIR_SOURCES, judged_files, read_judgments
from robustcount.spaces.perturbers import get_perturber
from robustcount.spaces.quality import content_words, measure_source, read_lexicon, vader_polarity
from robustcount.spaces.resources import SIMLEX_DISSIMILAR
from robustcount.spaces.sources import judged_sources, make_source
from robustcount.spaces.synonyms import CounterFittedNeighbours


@cli.command()
@click.argument("text")
@click.option("--attack", required=True,
              help="One source (see `robustcount space --help`): a Zéroe perturber attacks with its own random "
                   "face, any other word source with a neighbour drawn uniformly.")
@click.option("--level", default="mid", show_default=True, help="low (0.2), mid (0.5), high (0.8) or a number in [0, 1].")
@click.option("--seed", type=int, default=0, show_default=True)
def perturb(text, attack, level, seed):
    """Print TEXT attacked by one source under the Zéroe paper's random protocol; TEXT - attacks
    each line of standard input (line k with seed + k)."""
    if text != "-":
        click.echo(zeroe_attack(command_line_text(text), get_perturber(attack), level, seed))
        return
    perturber = get_perturber(attack)
    for k, line in enumerate(utf8_text(sys.stdin.buffer.read(), "standard input").splitlines()):
        click.echo(zeroe_attack(line, perturber, level, seed + k) if line.strip() else line)


@cli.command()
@click.argument("text")
@space_options
@model_options(only=("spec",), defaults={"spec": None})
@click.option("--radius", type=click.IntRange(min=0, max=MAX_RADIUS), default=1, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the seeded sources (shuffles).")
@click.option("--json", "as_json", is_flag=True, help="Print the space as JSON.")
def space(text, radius, seed, as_json, **options):
    """Print each position's candidates and |Omega_r| for TEXT; with --model, within the
    model's window (the words beyond it left out and counted; default: no model, every word)."""
    window = model_from(options).engine().window if options[f"{MODEL}spec"] is not None else None
    built = space_from(options).builder(seed, window)(command_line_text(text))
    if as_json:
        click.echo(json.dumps({
            "text": text, "radius": radius, "size": str(built.count(radius)), "digest": built.digest(),
            "definition": built.definition,
            "positions": [{"kind": p.kind, "index": p.index, "candidates": list(p.candidates),
                           "sources": list(p.sources)} for p in built.positions],
        }, ensure_ascii=False, indent=2))
        return
    click.echo(built.describe(radius))


@cli.command("source-quality")
@click.option("--source", "sources", multiple=True,
              help="Word source to measure, repeatable: any word source that `robustcount space --help` lists "
                   f"(default: those readers judged, {', '.join(judged_sources())}).")
@click.option("--data", "data_specs", multiple=True,
              help="Texts whose words are measured, repeatable: demo:train, demo:test or a .csv/.tsv/.jsonl file "
                   "(default: demo:train and demo:test).")
@click_options(DataSpec, DATA, only=("text_column", "encoding"))
@click.option("--texts", type=click.IntRange(min=1), default=None, help="Read only the first this many texts of each.")
@click.option("--words", type=click.IntRange(min=1), default=1500, show_default=True,
              help="Measure this many of their most frequent content words (alphabetic, not stop words).")
@click.option("--lexicon", default="vader", show_default=True,
              help="Sentiment lexicon of the polarity measure: vader, or a `word<TAB>score` file.")
@click.option("--judged", multiple=True, type=click.Path(dir_okay=False),
              help="A reader's judgments of sampled pairs (id, word, neighbour, judgment yes/no), repeatable "
                   "(default: the packaged readers').")
@click.option("--judged-key", type=click.Path(dir_okay=False), default=str(PAIR_SOURCES),
              show_default="the packaged key", help="Which sources' samples drew each judged pair.")
@click.option("--pairs", type=click.IntRange(min=0), default=8, show_default=True,
              help="Pairs to show per source (a seeded sample, polarity flips, dissimilar SimLex pairs).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample of pairs.")
@click.option("--json", "as_json", is_flag=True, help="Print the measures as JSON.")
def source_quality(sources, data_specs, texts, words, lexicon, judged, judged_key, pairs, seed, as_json, **options):
    """Measure how meaning-preserving word sources are: precision as readers judged a sample of
    their pairs, neighbours per word and coverage of the data's vocabulary, agreement with WordNet,
    PPDB and the counter-fitted table, SimLex-999's dissimilar pairs offered, polarity flips against
    a sentiment lexicon, antonym pairs, fragments."""
    chosen = list(sources) or list(judged_sources())
    resolved = []
    for spec in chosen:
        found = make_source(spec, seed)
        if len(found) != 1 or found[0].kind != "word":
            raise click.UsageError(f"{spec} is not one word source (measure one word source at a time)")
        resolved.append((spec, found[0]))
    polarity = vader_polarity() if lexicon == "vader" else read_lexicon(lexicon)
    specs = list(data_specs) or ["demo:train", "demo:test"]
    examples = [e for spec in specs
                for e in load_data(spec, text_column=options[DATA + "text_column"], label_column=None,
                                     encoding=options[DATA + "encoding"])[:texts]]
    vocabulary = content_words([e.input if isinstance(e.input, str) else e.input[1] for e in examples], words,
                               english_stop_words())
    readers = list(judged) or list(judged_files())
    judgments = read_judgments(readers, judged_key) if readers else None
    counter_fitted = CounterFittedNeighbours().table
    measures = [measure_source(source, vocabulary, polarity, counter_fitted, judgments=judgments, name=spec,
                               sample_size=pairs, seed=seed) for spec, source in resolved]
    if as_json:
        click.echo(json.dumps({"data": specs, "texts": len(examples), "words": len(vocabulary), "lexicon": lexicon,
                               "simlex_dissimilar_at_most": SIMLEX_DISSIMILAR, "seed": seed,
                               "readers": [] if judgments is None else list(judgments.readers),
                               "readers_kappa": None if judgments is None else judgments.agreement(),
                               "sources": [m.as_dict() for m in measures]}, indent=2, ensure_ascii=False))
        return
    click.echo(f"{len(vocabulary)} most frequent content words of {len(examples)} texts of {' + '.join(specs)}; "
               f"polarity from {lexicon}; SimLex-999 pairs rated <= {SIMLEX_DISSIMILAR:g} of 10 are dissimilar")
    click.echo(format_table(
        ["source", "precision [95% CI]", "covered", "neighbours/word", "SimLex dissimilar", "antonym pairs",
         "flip share", "in WordNet", "in PPDB", "in counter-fitted", "fragments"],
        [(m.source, _precision_cell(m.precision), m.covered, m.neighbours_per_word,
          f"{m.simlex_offered}/{m.simlex_dissimilar}", m.antonym_pairs, m.flip_share, m.share(m.in_wordnet),
          m.share(m.in_ppdb), m.share(m.in_counter_fitted), m.fragments) for m in measures]))
    if judgments is not None and any(m.reader_precision for m in measures):
        kappa = judgments.agreement()
        click.echo(f"precision: the share of a source's sampled pairs that most of {len(judgments.readers)} readers "
                   f"judged substitutable" + ("" if kappa is None else f" (Fleiss' kappa {kappa:.2f})") + "; by reader: "
                   + "; ".join(f"{m.source} " + ", ".join(f"{r} {p.estimate:.1%}" for r, p in m.reader_precision.items())
                               for m in measures if m.reader_precision))
    for m in measures:
        if m.sample:
            click.echo(f"\n{m.source}, sample: " + ", ".join(f"{a} -> {b}" for a, b in m.sample))
        if m.flip_examples:
            click.echo(f"{m.source}, polarity flips: " + ", ".join(f"{a} -> {b}" for a, b in m.flip_examples))
        if m.simlex_examples:
            click.echo(f"{m.source}, dissimilar SimLex pairs: " + ", ".join(f"{a} -> {b}" for a, b in m.simlex_examples))


def _precision_cell(precision) -> str:
    if precision is None:
        return "-"
    low, high = precision.interval
    return f"{precision.estimate:.1%} [{low:.1%}, {high:.1%}] of {precision.trials}"
