"""Command `source-quality`: how meaning-preserving word sources are, out of context (their pairs)
and in context (adversaries readers judged), and how much of the data's text they cover."""

from __future__ import annotations

import json
from dataclasses import fields

import click

from robustcount.cli.common import DATA, FILTER
from robustcount.cli.group import cli
from robustcount.cli.options import click_options, from_options
from robustcount.data import DataSpec, sample_indices
from robustcount.runs.tables import format_table
from robustcount.models.context_models import context_for
from robustcount.spaces.build import DEFAULT_SOURCE, Filters, SpaceBuilder, SpaceSpec, english_stop_words
from robustcount.spaces.judged import PAIR_SOURCES, judged_files, read_judgments
from robustcount.spaces.judged_adversaries import BUCKETS, JUDGED_ADVERSARIES, read_judged_set
from robustcount.spaces.quality import (
    COVERAGE_RADII,
    Remembered,
    content_words,
    measure_source,
    read_lexicon,
    text_coverage,
    vader_polarity,
)
from robustcount.spaces.resources import SIMLEX_DISSIMILAR
from robustcount.spaces.sources import judged_sources, make_source
from robustcount.spaces.synonyms import CounterFittedNeighbours
from robustcount.text import perturbed_part


@cli.command("source-quality")
@click.option("--source", "sources", multiple=True,
              help="Word source to measure, repeatable: any word source that `robustcount space --help` lists "
                   f"(default: those readers judged, {', '.join(judged_sources())}).")
@click.option("--data", "data_specs", multiple=True,
              help="Texts whose words are measured, repeatable: demo:train, demo:test or a .csv/.tsv/.jsonl file "
                   "(default: demo:train and demo:test).")
@click_options(DataSpec, DATA, only=("text_column", "encoding", "sample"))
@click.option("--texts", type=click.IntRange(min=1), default=None,
              help="Read only the first this many texts of each (of its sample, with --sample).")
@click.option("--words", type=click.IntRange(min=1), default=1500, show_default=True,
              help="Measure this many of their most frequent content words (alphabetic, not stop words).")
@click.option("--coverage-texts", type=click.IntRange(min=1), default=300, show_default=True,
              help="Count coverage in the text on a sample of at most this many of the texts (drawn with --seed).")
@click.option("--lexicon", default="vader", show_default=True,
              help="Sentiment lexicon of the polarity measure: vader, or a `word<TAB>score` file.")
@click.option("--judged", multiple=True, type=click.Path(dir_okay=False),
              help="A reader's judgments of sampled pairs (id, word, neighbour, judgment yes/no), repeatable "
                   "(default: the packaged readers').")
@click.option("--judged-key", type=click.Path(dir_okay=False), default=str(PAIR_SOURCES),
              show_default="the packaged key", help="Which sources' samples drew each judged pair.")
@click.option("--judged-adversaries", type=click.Path(dir_okay=False), default=None,
              show_default="the packaged set",
              help="Adversaries readers judged valid or invalid in context (a judged set: "
                   "experiments/join_judged_adversaries.py writes one).")
@click.option("--pairs", type=click.IntRange(min=0), default=8, show_default=True,
              help="Pairs to show per source (a seeded sample, polarity flips, dissimilar SimLex pairs).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the sample of texts (--sample), of pairs, and of seeded sources.")
@click.option("--space", "whole_space", is_flag=True,
              help="Also measure the space the --source options give together (their union; default: synonyms) "
                   "under the space filters below, as attack and certify build it: its coverage in the text and "
                   "its in-context validity where readers judged adversaries of it. Any filter implies it.")
@click_options(Filters, FILTER, only=tuple(f.name for f in fields(Filters) if f.name != "keep_beyond_window"))
@click.option("--json", "as_json", is_flag=True, help="Print the measures as JSON.")
def source_quality(**options):
    """Measure how meaning-preserving word sources are: precision as readers judged a sample of
    their pairs, in-context validity as readers judged adversaries found in their spaces (by
    number of substitutions), neighbours per word and coverage of the data's vocabulary and of its
    texts (median |Omega_1|, |Omega_2|, |Omega_3|), agreement with WordNet, PPDB and the
    counter-fitted table, SimLex-999's dissimilar pairs offered, polarity flips against a
    sentiment lexicon, antonym pairs, fragments."""
    seed, lexicon = options["seed"], options["lexicon"]
    resolved = _word_sources(list(options["sources"]) or list(judged_sources()), seed)
    filters = from_options(Filters, FILTER, options)
    together = SpaceSpec(options["sources"] or (DEFAULT_SOURCE,), filters).builder(seed, context=context_for(filters)) \
        if options["whole_space"] or filters != Filters() else None
    polarity = vader_polarity() if lexicon == "vader" else read_lexicon(lexicon)
    specs = list(options["data_specs"]) or ["demo:train", "demo:test"]
    examples = [e for spec in specs
                for e in DataSpec(spec=spec, text_column=options[DATA + "text_column"], label_column=None,
                                  encoding=options[DATA + "encoding"],
                                  sample=options[DATA + "sample"]).load(seed)[:options["texts"]]]
    data_texts = [perturbed_part(e.input) for e in examples]
    vocabulary = content_words(data_texts, options["words"], english_stop_words())
    readers = list(options["judged"]) or list(judged_files())
    judgments = read_judgments(readers, options["judged_key"]) if readers else None
    counter_fitted = CounterFittedNeighbours().table
    measures = [measure_source(source, vocabulary, polarity, counter_fitted, judgments=judgments, name=spec,
                               sample_size=options["pairs"], seed=seed) for spec, source in resolved]
    covered_texts = [data_texts[i] for i in sample_indices(len(data_texts), options["coverage_texts"], seed)]
    coverages = [text_coverage(SpaceBuilder([Remembered(source)], seed=seed), covered_texts, english_stop_words())
                 for _, source in resolved]
    judged_set = _judged_set(options["judged_adversaries"])
    validity = [_validity(judged_set, judged_set.spaces_of(source.definition()) if judged_set else ())
                for _, source in resolved]
    space = None if together is None else _space_measures(together, covered_texts, judged_set)
    if options["as_json"]:
        click.echo(json.dumps({"data": specs, "sample": options[DATA + "sample"], "texts": len(examples),
                               "words": len(vocabulary), "lexicon": lexicon,
                               "simlex_dissimilar_at_most": SIMLEX_DISSIMILAR, "seed": seed,
                               "readers": [] if judgments is None else list(judgments.readers),
                               "readers_kappa": None if judgments is None else judgments.agreement(),
                               "judged_adversaries": _judged_header(judged_set),
                               "sources": [{**m.as_dict(), "text_coverage": c.as_dict(), "in_context_validity": v}
                                           for m, c, v in zip(measures, coverages, validity)],
                               **({} if space is None else {"space": space})},
                              indent=2, ensure_ascii=False))
        return
    click.echo(f"{len(vocabulary)} most frequent content words of {len(examples)} texts of {' + '.join(specs)}"
               + ("" if options[DATA + "sample"] is None else f" (a sample of {options[DATA + 'sample']} each, "
                                                              f"seed {seed})")
               + f"; polarity from {lexicon}; SimLex-999 pairs rated <= {SIMLEX_DISSIMILAR:g} of 10 are dissimilar")
    _print_measures(measures, judgments)
    _print_coverage(measures, coverages, len(examples), seed, space)
    _print_validity(measures, validity, judged_set, space)
    _print_examples(measures)


def _word_sources(chosen: list[str], seed: int) -> list[tuple[str, object]]:
    """(spelling, source) of each source asked for, each one word source."""
    resolved = []
    for spec in chosen:
        found = make_source(spec, seed)
        if len(found) != 1 or found[0].kind != "word":
            raise click.UsageError(f"{spec} is not one word source (measure one word source at a time)")
        resolved.append((spec, found[0]))
    return resolved


def _judged_set(path):
    """The judged set of adversaries in `path`, or the packaged one (None while there is none)."""
    if path is None and not JUDGED_ADVERSARIES.exists():
        return None
    return read_judged_set(JUDGED_ADVERSARIES if path is None else path)


def _judged_header(judged_set) -> dict | None:
    if judged_set is None:
        return None
    return {"file": str(judged_set.path), "rule": judged_set.rule, "judged_by": judged_set.judged_by,
            "readers": list(judged_set.readers)}


def _validity(judged_set, spaces) -> dict:
    """The in-context validity of the judged `spaces` (names in `judged_set`): for each, for every
    model ("all models") and each model, each number of substitutions' `Proportion` as a dict (or None)."""
    if judged_set is None:
        return {}
    return {space: {model or "all models": {name: None if p is None else p.as_dict()
                                            for name, p in judged_set.validity(space, model).items()}
                    for model in (None, *judged_set.models(space))}
            for space in spaces}


def _space_measures(builder, texts: list[str], judged_set) -> dict:
    """The space of `builder` (the --source options together under the filters): its name, its
    definition, its coverage of `texts` and the in-context validity of the judged spaces defined as it is."""
    definition = json.loads(json.dumps(builder.definition))
    judged = [name for name, d in judged_set.definitions.items() if _unseeded(d) == _unseeded(definition)] \
        if judged_set else []
    return {"name": _space_name(builder), "definition": definition,
            "text_coverage": text_coverage(builder, texts, english_stop_words()).as_dict(),
            "in_context_validity": _validity(judged_set, judged)}


def _unseeded(definition: dict) -> dict:
    """A space's definition less the run's seed, which only seeded sources take, and their own
    definitions record it (a space judged in a run of another seed is the same space)."""
    return {key: value for key, value in definition.items() if key != "seed"}


def _space_name(builder) -> str:
    """The space's sources joined by +, and each filter not at its default, as its option is spelt."""
    default, said = {f.name: f.default for f in fields(Filters)}, []
    for name, value in builder.filters.definition().items():
        if value == [] or value is False or (value == default[name] and type(value) is type(default[name])):
            continue
        if name == "stop_words":
            said.append("--stop-words")
        elif name == "skip_positions":
            said += [f"--skip {i}" for i in value]
        else:
            said.append(f"--{name.replace('_', '-')}" + ("" if value is True else f" {value:g}"
                                                          if isinstance(value, float) else f" {value}"))
    return " + ".join(s.name for s in builder.sources) + (f" ({', '.join(said)})" if said else "")


def _print_measures(measures, judgments) -> None:
    click.echo(format_table(
        ["source", "precision [95% CI]", "covered", "neighbours/word", "SimLex dissimilar", "antonym pairs",
         "flip share", "in WordNet", "in PPDB", "in counter-fitted", "fragments"],
        [(m.source, _proportion_cell(m.precision), m.covered, m.neighbours_per_word,
          f"{m.simlex_offered}/{m.simlex_dissimilar}", m.antonym_pairs, m.flip_share, m.share(m.in_wordnet),
          m.share(m.in_ppdb), m.share(m.in_counter_fitted), m.fragments) for m in measures]))
    if judgments is not None and any(m.reader_precision for m in measures):
        kappa = judgments.agreement()
        click.echo(f"precision: the share of a source's sampled pairs that most of {len(judgments.readers)} readers "
                   f"judged substitutable" + ("" if kappa is None else f" (Fleiss' kappa {kappa:.2f})") + "; by reader: "
                   + "; ".join(f"{m.source} " + ", ".join(f"{r} {p.estimate:.1%}" for r, p in m.reader_precision.items())
                               for m in measures if m.reader_precision))


def _print_coverage(measures, coverages, texts: int, seed: int, space: dict | None) -> None:
    counted = coverages[0].texts if coverages else 0
    click.echo(f"\nin the text: {'all ' if counted == texts else ''}{counted} texts"
               + ("" if counted == texts else f" of the {texts} (a sample, seed {seed})")
               + "; each source's space alone, no filter" + ("" if space is None else
                                                             ", then the space of the sources together (--space)")
               + ":")
    rows = [(m.source, c.as_dict()) for m, c in zip(measures, coverages)]
    rows += [] if space is None else [(space["name"], space["text_coverage"])]
    click.echo(format_table(
        ["source", "content words with a candidate", "candidates/changeable word",
         *(f"median |Omega_{r}|" for r in COVERAGE_RADII)],
        [(name, "-" if c["content_share"] is None else f"{c['content_share']:.1%} of {c['content_words']}",
          c["candidates_per_changeable_word"], *(_size_cell(c["median_sizes"][str(r)]) for r in COVERAGE_RADII))
         for name, c in rows]))


def _print_validity(measures, validity, judged_set, space: dict | None) -> None:
    if judged_set is None:
        return
    named = [(m.source, v) for m, v in zip(measures, validity)]
    named += [] if space is None else [(space["name"], space["in_context_validity"])]
    rows = [(source, name, model, *(_proportion_cell(cells[bucket]) for bucket in (*BUCKETS, "all")))
            for source, v in named for name, by_model in v.items() for model, cells in by_model.items()]
    click.echo(f"\nin-context validity: the share of the adversaries found in a space that readers judged valid "
               f"({judged_set.judged_by}; {len(judged_set.readers)} readers; {judged_set.path}), by number of "
               f"substitutions; rule: {judged_set.rule}")
    if not rows:
        click.echo("(no judged space is built from these sources as they are defined now)")
        return
    click.echo(format_table(["source", "space", "model", *(f"{b} subs [95% CI]" for b in BUCKETS), "all [95% CI]"],
                            rows))


def _print_examples(measures) -> None:
    for m in measures:
        if m.sample:
            click.echo(f"\n{m.source}, sample: " + ", ".join(f"{a} -> {b}" for a, b in m.sample))
        if m.flip_examples:
            click.echo(f"{m.source}, polarity flips: " + ", ".join(f"{a} -> {b}" for a, b in m.flip_examples))
        if m.simlex_examples:
            click.echo(f"{m.source}, dissimilar SimLex pairs: " + ", ".join(f"{a} -> {b}" for a, b in m.simlex_examples))


def _proportion_cell(proportion) -> str:
    """A proportion (a `Proportion` or its dict) as `estimate [low, high] of trials`; - for None."""
    if proportion is None:
        return "-"
    if isinstance(proportion, dict):
        estimate, low, high, trials = (proportion[k] for k in ("estimate", "low", "high", "trials"))
    else:
        (low, high), estimate, trials = proportion.interval, proportion.estimate, proportion.trials
    return f"{estimate:.1%} [{low:.1%}, {high:.1%}] of {trials}"


def _size_cell(size) -> str:
    if size is None:
        return "-"
    return f"{size:,.0f}" if size < 1e6 else f"{size:.3g}"
